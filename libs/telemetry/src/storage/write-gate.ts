/**
 * Caps how many batch writes run at once, so that a flood of events cannot take every
 * connection of the shared pool from the rest of the API. Waiters are served in order.
 */
export class WriteGate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }
}

/** Ingestion may use at most this share of the pool (never fewer than one connection, always leaving one). */
export function ingestWriteConcurrency(poolSize: number): number {
  return Math.max(1, Math.min(poolSize - 1, Math.ceil(poolSize * 0.6)));
}
