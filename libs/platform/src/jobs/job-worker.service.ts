import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { Clock } from '../clock/clock.js';
import { Sql } from '../database/sql.js';
import { APP_LOGGER, type AppLogger } from '../logging/logger.js';
import { Metrics } from '../metrics/metrics.js';
import type { TenantScope } from '../tenancy/tenant-scope.js';
import { DEFAULT_MAX_ATTEMPTS, JOB_QUEUE, JobQueue } from './job-queue.service.js';
import { type JobRow, JobsRepository } from './jobs.repository.js';
import { JOB_FAILURE_HANDLER, JOB_HANDLER, type JobHandlerOptions } from './on-job.decorator.js';
import { PeriodicJobs } from './periodic-jobs.service.js';

/** What a handler receives. */
export interface Job<P = Record<string, unknown>> {
  id: string;
  type: string;
  payload: P;
  /** The tenant the job works for; null for platform work. */
  scope: TenantScope | null;
  /** 1 on the first attempt. */
  attempt: number;
  maxAttempts: number;
}

export interface JobFailure {
  error: Error;
  /** True when this was the last attempt: the job is dead-lettered. */
  dead: boolean;
}

interface RegisteredHandler {
  options: Required<Omit<JobHandlerOptions, 'everyMs' | 'backoff'>> & { everyMs?: number; backoff: { baseMs: number; maxMs: number } };
  run: (job: Job) => Promise<unknown>;
  onFailure?: (job: Job, failure: JobFailure) => Promise<unknown>;
}

export const JOBS_POLL_INTERVAL_MS = 1_000;
const CLAIM_BATCH = 10;
/** One poll stops claiming after this long (wall clock); a job it started runs to its end. */
const TICK_RUN_BUDGET_MS = 10_000;
const FINISHED_RETENTION_MS = 7 * 24 * 3600 * 1000;

/** Back-off after the n-th failed attempt: min(base × 2^(n-1), max). */
export function backoffMs(attempt: number, backoff: { baseMs: number; maxMs: number }): number {
  return Math.min(backoff.baseMs * 2 ** Math.max(0, attempt - 1), backoff.maxMs);
}

class LeaseLostError extends Error {}

/**
 * Runs durable jobs: claims due ones with FOR UPDATE SKIP LOCKED and a lease, runs the
 * declared handler in one transaction with the job's completion, retries failures with
 * exponential back-off up to a maximum, then dead-letters (logged, visible to the operator
 * API). At-least-once; replicas never run one job at the same time. Polls every second, not
 * under NODE_ENV=test (tests call runDue()); on shutdown it stops claiming and lets running
 * jobs finish before the pool closes.
 */
@Injectable()
export class JobWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly handlers = new Map<string, RegisteredHandler>();
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private stopped = false;
  /** Job types the gauges were set for once: reset to 0 when their rows are gone. */
  private readonly reportedTypes = new Set<string>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
    private readonly jobs: JobsRepository,
    private readonly queue: JobQueue,
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly periodic: PeriodicJobs,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    private readonly metrics: Metrics,
  ) {}

  onApplicationBootstrap(): void {
    this.discoverHandlers();
    this.periodic.every('jobs worker', JOBS_POLL_INTERVAL_MS, () => this.tick(), { runAtStart: true });
  }

  onModuleDestroy(): void {
    this.stopped = true;
  }

  /** Job types with a handler on this replica. */
  get types(): string[] {
    return [...this.handlers.keys()];
  }

  /** One poll: keeps recurring jobs queued, runs what is due, drops finished jobs after a week. */
  async tick(): Promise<void> {
    await this.ensureRecurring();
    // Bounded, so a recurring job due again at once (a sweep counted from its start) leaves
    // room for the purge and the gauges; what is still due runs at the next poll.
    await this.runDue({ budgetMs: TICK_RUN_BUDGET_MS });
    await this.jobs.purgeFinished(JOB_QUEUE, this.clock.nowMs() - FINISHED_RETENTION_MS);
    await this.refreshMetrics();
  }

  /**
   * Sets the queue gauges (depth, lag, dead letters per type) from the jobs table. They
   * describe the shared queue, so every replica reports the same values: aggregate with max().
   */
  async refreshMetrics(): Promise<void> {
    const nowMs = this.clock.nowMs();
    const stats = await this.jobs.stats(JOB_QUEUE, nowMs);
    const byType = new Map<string, { queued: number; dead: number; oldestDueMs: number | null }>();
    for (const type of new Set([...this.types, ...this.reportedTypes])) byType.set(type, { queued: 0, dead: 0, oldestDueMs: null });
    for (const row of stats) {
      const entry = byType.get(row.type) ?? { queued: 0, dead: 0, oldestDueMs: null };
      if (row.status === 'queued') {
        entry.queued += row.count;
        if (row.oldestDueMs !== null) entry.oldestDueMs = Number(row.oldestDueMs);
      } else if (row.status === 'dead') entry.dead += row.count;
      byType.set(row.type, entry);
    }
    for (const [type, entry] of byType) {
      this.reportedTypes.add(type);
      this.metrics.jobQueueDepth.set({ type }, entry.queued);
      this.metrics.jobLag.set({ type }, entry.oldestDueMs === null ? 0 : Math.max(0, nowMs - entry.oldestDueMs) / 1000);
      this.metrics.jobDeadLetters.set({ type }, entry.dead);
    }
  }

  /**
   * Runs due jobs until none is left, or until `budgetMs` (wall) has passed after the first
   * claim; returns how many succeeded. Tests and operators drive it: `types`/`projectId` narrow
   * it, `ignoreSchedule` also runs queued jobs not yet due.
   */
  async runDue(options: { types?: string[]; projectId?: string; ignoreSchedule?: boolean; budgetMs?: number } = {}): Promise<number> {
    const types = options.types ?? this.types;
    const claimUntilMs = options.budgetMs === undefined ? Infinity : this.clock.wallNowMs() + options.budgetMs;
    let succeeded = 0;
    const attempted = new Set<string>();
    while (!this.stopped) {
      if (attempted.size > 0 && this.clock.wallNowMs() >= claimUntilMs) break;
      const claimed = await this.jobs.claim(JOB_QUEUE, {
        types,
        limit: CLAIM_BATCH,
        nowMs: this.clock.nowMs(),
        leaseMs: Math.max(...types.map((t) => this.handlers.get(t)?.options.leaseMs ?? 60_000), 1),
        worker: this.workerId,
        projectId: options.projectId,
        ignoreSchedule: options.ignoreSchedule,
        exclude: [...attempted],
      });
      if (claimed.length === 0) break;
      for (const job of claimed) {
        attempted.add(job.id);
        if (await this.runOne(job)) succeeded++;
      }
    }
    return succeeded;
  }

  private async runOne(row: JobRow): Promise<boolean> {
    const handler = this.handlers.get(row.type);
    const job: Job = {
      id: row.id,
      type: row.type,
      payload: row.payload,
      scope: row.projectId && row.env ? JOB_QUEUE.scopeOf({ projectId: row.projectId, env: row.env }) : null,
      attempt: row.attempts,
      maxAttempts: row.maxAttempts,
    };
    const startedAtMs = this.clock.nowMs();
    try {
      if (!handler) throw new Error(`no handler for job type ${row.type} on this replica`);
      if (!handler.options.transaction) await handler.run(job);
      await this.sql.transaction(async () => {
        if (handler.options.transaction) await handler.run(job);
        if (!(await this.jobs.complete(JOB_QUEUE, row.id, this.workerId, this.clock.nowMs()))) throw new LeaseLostError('lease lost');
        if (handler.options.everyMs) {
          const fromMs = handler.options.repeatFrom === 'start' ? startedAtMs : this.clock.nowMs();
          await this.enqueueRecurring(row.type, handler, fromMs + handler.options.everyMs);
        }
      });
      this.metrics.jobsProcessed.inc({ type: row.type, outcome: 'succeeded' });
      return true;
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      if (error instanceof LeaseLostError) return false;
      const dead = row.attempts >= row.maxAttempts;
      this.metrics.jobsProcessed.inc({ type: row.type, outcome: 'failed' });
      if (dead) this.metrics.jobsProcessed.inc({ type: row.type, outcome: 'dead_lettered' });
      const nowMs = this.clock.nowMs();
      await this.jobs.fail(
        JOB_QUEUE,
        row.id,
        this.workerId,
        error.message,
        nowMs,
        dead ? { dead } : { dead, retryAtMs: nowMs + backoffMs(row.attempts, handler?.options.backoff ?? { baseMs: 1000, maxMs: 3_600_000 }) },
      );
      const log = {
        jobId: row.id,
        type: row.type,
        attempt: row.attempts,
        maxAttempts: row.maxAttempts,
        projectId: row.projectId,
        err: { name: error.name, message: error.message },
      };
      if (dead) this.logger.error(log, 'job dead-lettered after its last attempt');
      else this.logger.warn(log, 'job attempt failed; retrying with back-off');
      await handler
        ?.onFailure?.(job, { error, dead })
        .catch((hookErr: Error) => this.logger.error({ jobId: row.id, err: { message: hookErr.message } }, 'job failure hook failed'));
      return false;
    }
  }

  private async ensureRecurring(): Promise<void> {
    for (const [type, handler] of this.handlers) {
      if (handler.options.everyMs) await this.enqueueRecurring(type, handler, this.clock.nowMs());
    }
  }

  private enqueueRecurring(type: string, handler: RegisteredHandler, runAtMs: number): Promise<string | null> {
    return this.queue.enqueue(type, {}, { dedupeKey: 'recurring', runAtMs, maxAttempts: handler.options.maxAttempts });
  }

  private discoverHandlers(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const prototype = Object.getPrototypeOf(instance);
      if (!prototype) continue;
      const failures = new Map<string, (job: Job, failure: JobFailure) => Promise<unknown>>();
      const found: [JobHandlerOptions, (job: Job) => Promise<unknown>][] = [];
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const method = instance[name] as ((...args: unknown[]) => Promise<unknown>) | undefined;
        if (typeof method !== 'function') continue;
        const options = this.reflector.get<JobHandlerOptions | undefined>(JOB_HANDLER, method);
        if (options) found.push([options, method.bind(instance)]);
        const failureType = this.reflector.get<string | undefined>(JOB_FAILURE_HANDLER, method);
        if (failureType) failures.set(failureType, method.bind(instance));
      }
      for (const [options, run] of found) {
        if (this.handlers.has(options.type)) throw new Error(`two handlers for job type ${options.type}`);
        this.handlers.set(options.type, {
          options: {
            type: options.type,
            maxAttempts: options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
            leaseMs: options.leaseMs ?? 60_000,
            transaction: options.transaction ?? true,
            everyMs: options.everyMs,
            repeatFrom: options.repeatFrom ?? 'end',
            backoff: { baseMs: options.backoff?.baseMs ?? 1_000, maxMs: options.backoff?.maxMs ?? 3_600_000 },
          },
          run,
          onFailure: failures.get(options.type),
        });
        this.queue.declareType(options.type, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
      }
    }
  }
}
