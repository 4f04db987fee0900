import { SetMetadata } from '@nestjs/common';

export const JOB_HANDLER = 'platform:job-handler';
export const JOB_FAILURE_HANDLER = 'platform:job-failure-handler';

export interface JobHandlerOptions {
  /** `context.verb_noun`, e.g. `identity.erase_customer`. */
  type: string;
  /** Attempts before the job is dead-lettered (default 10). */
  maxAttempts?: number;
  /** Back-off after the n-th failure: min(baseMs × 2^(n-1), maxMs) (defaults 1 s and 1 h). */
  backoff?: { baseMs?: number; maxMs?: number };
  /** Recurring: the worker keeps one job of this type queued and runs it every `everyMs` on one replica at a time. */
  everyMs?: number;
  /**
   * Recurring: `everyMs` counts from the end of a run (default) or from its start, so a run
   * that took its whole interval (a paced sweep) is due again at once and its work never pauses.
   */
  repeatFrom?: 'end' | 'start';
  /** How long a claimed job is leased to one worker (default 60 s); a worker that dies frees it then. */
  leaseMs?: number;
  /**
   * Run the handler inside the job's transaction (default true: its writes and "done" commit
   * together). False for sweeps that commit in batches of their own (they must be idempotent).
   */
  transaction?: boolean;
}

/**
 * Declares a provider method as the handler of a job type (immich's @OnJob). The handler
 * receives the job; it runs inside one transaction with the job's completion, so its database
 * writes and "done" commit together. At-least-once: a handler must be idempotent.
 */
export const OnJob = (options: JobHandlerOptions) => SetMetadata(JOB_HANDLER, options);

/** Called after a failed attempt of `type` (outside the rolled-back transaction), e.g. to record the failure on a domain row. */
export const OnJobFailure = (type: string) => SetMetadata(JOB_FAILURE_HANDLER, type);
