/**
 * The per-replica cap on source-map uploads: at most `concurrency` bodies and `bytesInFlight`
 * declared bytes admitted at once (a body larger than the cap is admitted alone). The others
 * wait in arrival order up to `queueMs`, their bodies unread, then get 503 with Retry-After.
 * No I/O, no clock of its own: the timer is the caller's.
 */
export interface UploadAdmissionLimits {
  concurrency: number;
  bytesInFlight: number;
  queueMs: number;
}

interface Waiter {
  bytes: number;
  admit: () => void;
}

export class UploadAdmission {
  private active = 0;
  private bytes = 0;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly limits: UploadAdmissionLimits) {}

  /** Uploads admitted and bytes in flight now (metrics, tests). */
  get inFlight(): { uploads: number; bytes: number; waiting: number } {
    return { uploads: this.active, bytes: this.bytes, waiting: this.waiting.length };
  }

  /**
   * Resolves with the release once the upload is admitted; resolves null when `queueMs`
   * passed first (the caller answers 503). The release is idempotent.
   */
  acquire(bytes: number, wait: (ms: number, onTimeout: () => void) => () => void): Promise<(() => void) | null> {
    if (this.waiting.length === 0 && this.fits(bytes)) return Promise.resolve(this.take(bytes));
    if (this.limits.queueMs === 0) return Promise.resolve(null);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        bytes,
        admit: () => {
          cancel();
          resolve(this.take(bytes));
        },
      };
      const cancel = wait(this.limits.queueMs, () => {
        const at = this.waiting.indexOf(waiter);
        if (at !== -1) this.waiting.splice(at, 1);
        resolve(null);
      });
      this.waiting.push(waiter);
    });
  }

  private fits(bytes: number): boolean {
    if (this.active === 0) return true;
    return this.active < this.limits.concurrency && this.bytes + bytes <= this.limits.bytesInFlight;
  }

  private take(bytes: number): () => void {
    this.active++;
    this.bytes += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.bytes -= bytes;
      this.drain();
    };
  }

  private drain(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0].bytes)) this.waiting.shift()!.admit();
  }
}
