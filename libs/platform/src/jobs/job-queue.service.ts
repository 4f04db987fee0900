import { Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { type TenantScope, crossTenant } from '../tenancy/tenant-scope.js';
import { JobsRepository } from './jobs.repository.js';

export const DEFAULT_MAX_ATTEMPTS = 10;
export const JOB_QUEUE = crossTenant('durable jobs queue');

export interface EnqueueOptions {
  /** The tenant the job works for (null for platform work). */
  scope?: TenantScope;
  /** At most one live (queued or running) job per (type, dedupeKey). */
  dedupeKey?: string;
  runAtMs?: number;
  maxAttempts?: number;
}

/** Enqueues durable jobs, in the caller's (ambient) transaction: the job exists if and only if the caller's writes commit. */
@Injectable()
export class JobQueue {
  /** maxAttempts declared by each type's @OnJob handler (registered by the worker at start-up). */
  private readonly declaredMaxAttempts = new Map<string, number>();

  constructor(
    private readonly jobs: JobsRepository,
    private readonly clock: Clock,
  ) {}

  declareType(type: string, maxAttempts: number): void {
    this.declaredMaxAttempts.set(type, maxAttempts);
  }

  async enqueue(type: string, payload: Record<string, unknown>, options: EnqueueOptions = {}): Promise<string | null> {
    const nowMs = this.clock.nowMs();
    return this.jobs.enqueue(
      JOB_QUEUE,
      {
        type,
        projectId: options.scope?.projectId ?? null,
        env: options.scope?.env ?? null,
        payload,
        dedupeKey: options.dedupeKey ?? null,
        maxAttempts: options.maxAttempts ?? this.declaredMaxAttempts.get(type) ?? DEFAULT_MAX_ATTEMPTS,
        runAtMs: options.runAtMs ?? nowMs,
      },
      nowMs,
    );
  }
}
