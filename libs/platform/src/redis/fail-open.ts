import { performance } from 'node:perf_hooks';
import type { AppLogger } from '../logging/logger.js';

const WARNING_INTERVAL_MS = 10_000;

/**
 * The one fail-open policy of the limiters' shared storage (rate-limit buckets, identify
 * velocity, error allowance: one Redis connection, see leaseRedis). A storage call that throws
 * or times out lets the request through: the failure is counted, and logged at most every 10 s
 * per limiter with the running count.
 */
export class FailOpenStorage {
  private failuresTotal = 0;
  private lastWarningMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly logger: AppLogger,
    /** The log line, e.g. 'rate-limit storage unavailable; failing open'. */
    private readonly message: string,
  ) {}

  /** Storage calls answered by the fail-open fallback so far. */
  get failures(): number {
    return this.failuresTotal;
  }

  /** Runs a storage call; on any error answers `fallback()` (the request goes through) and counts it. */
  async run<T>(work: () => Promise<T>, fallback: (err: Error) => T): Promise<T> {
    try {
      return await work();
    } catch (err) {
      this.failuresTotal += 1;
      this.warn(err as Error);
      return fallback(err as Error);
    }
  }

  /** Logs a storage error (also the client's connection errors), at most every 10 s. */
  warn(err: Error): void {
    // Monotonic, not the service clock: it only spaces out log lines (the test clock may jump).
    const now = performance.now();
    if (now - this.lastWarningMs < WARNING_INTERVAL_MS) return;
    this.lastWarningMs = now;
    this.logger.warn({ err: { name: err.name, message: err.message }, failOpenTotal: this.failuresTotal }, this.message);
  }
}
