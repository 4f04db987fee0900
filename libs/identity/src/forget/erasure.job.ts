import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, type AppLogger, Clock, type Job, type JobFailure, JobWorker, OnJob, OnJobFailure } from '#platform';
import { ErasureHooks, type ErasureSubject } from './erasure-hooks.js';
import { ErasureRepository } from './erasure.repository.js';

/** The erasure SLA of the spec; the job erases on its first attempt, long before it. */
export const ERASURE_SLA_DAYS = 30;
const SLA_WARNING_DAYS = 25;

/** One durable job per forgotten customer, enqueued by forget in the same transaction. */
export const ERASE_CUSTOMER_JOB = 'identity.erase_customer';

export interface EraseCustomerPayload {
  customerId: string;
}

/**
 * Retention worker, on the platform's durable jobs: erases a queued customer. Personal data
 * is deleted or irreversibly anonymised: developer and anonymous alias nodes, email, first
 * name, traits, merge reviews; the registered ErasureHooks erase the rest (device bindings,
 * telemetry hints). The customer row (id only), payment-rail records and rail alias nodes are
 * kept (financial-record law). Everything runs in the job's transaction: a failing hook rolls
 * the whole erasure back; the job retries with back-off (1 min doubling to 6 h, 20 attempts,
 * about four days), the failure is counted on the erasure row, logged as an error from day 25,
 * and a job that exhausts its attempts is dead-lettered for the operator.
 */
@Injectable()
export class ErasureWorker {
  constructor(
    private readonly erasures: ErasureRepository,
    private readonly hooks: ErasureHooks,
    private readonly clock: Clock,
    private readonly worker: JobWorker,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /**
   * Erases every queued customer now (only `projectId`'s when given: an operator re-run, or a
   * test sharing its database), failed ones included whatever their back-off; returns how many.
   */
  runOnce(options: { projectId?: string } = {}): Promise<number> {
    return this.worker.runDue({ types: [ERASE_CUSTOMER_JOB], projectId: options.projectId, ignoreSchedule: true });
  }

  @OnJob({ type: ERASE_CUSTOMER_JOB, maxAttempts: 20, backoff: { baseMs: 60_000, maxMs: 6 * 3600_000 } })
  async erase(job: Job<EraseCustomerPayload>): Promise<void> {
    const scope = job.scope;
    if (!scope) throw new Error('erasure job without a tenant');
    const { customerId } = job.payload;
    const queued = await this.erasures.findQueued(scope, customerId);
    if (!queued) return; // already erased (at-least-once delivery)
    const current = await this.erasures.personalAliasNodes(scope, customerId);
    const subject: ErasureSubject = {
      customerId,
      userIds: unique([...(queued.subject?.userIds ?? []), ...current.filter((a) => a.type === 'developer').map((a) => a.value)]),
      anonymousIds: unique([...(queued.subject?.anonymousIds ?? []), ...current.filter((a) => a.type === 'anonymous').map((a) => a.value)]),
    };
    await this.hooks.runAll(scope, subject);
    await this.erasures.erasePersonalData(scope, customerId, this.clock.now());
  }

  @OnJobFailure(ERASE_CUSTOMER_JOB)
  async recordFailure(job: Job<EraseCustomerPayload>, failure: JobFailure): Promise<void> {
    if (!job.scope) return;
    const queued = await this.erasures.findQueued(job.scope, job.payload.customerId);
    await this.erasures.recordFailure(job.scope, job.payload.customerId, failure.error.message);
    const ageDays = queued ? (this.clock.nowMs() - queued.queuedAt.getTime()) / 86_400_000 : 0;
    const log = {
      projectId: job.scope.projectId,
      env: job.scope.env,
      customerId: job.payload.customerId,
      ageDays: Math.floor(ageDays),
      attempt: job.attempt,
      err: { name: failure.error.name, message: failure.error.message },
    };
    if (failure.dead || ageDays >= SLA_WARNING_DAYS) this.logger.error(log, `erasure failing; the ${ERASURE_SLA_DAYS}-day SLA is at risk`);
    else this.logger.warn(log, 'erasure failed; retried with back-off');
  }
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
