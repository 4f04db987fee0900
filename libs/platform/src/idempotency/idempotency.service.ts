import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Clock } from '../clock/clock.js';
import { Sql, sqlState } from '../database/sql.js';
import { ApiError } from '../errors/api-error.js';
import { type TenantScope, crossTenant } from '../tenancy/tenant-scope.js';
import { OnJob } from '../jobs/on-job.decorator.js';
import { IdempotencyRepository, type StoredAnswer } from './idempotency.repository.js';

/** How long a first answer is replayed (service clock). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** How long a duplicate waits for the first request with its key before answering 429. */
export const IDEMPOTENCY_WAIT_MS = 5_000;

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
const LOCK_NOT_AVAILABLE = '55P03';

export interface IdempotentAnswer {
  replayed: boolean;
  statusCode: number;
  body: unknown;
}

/** The Idempotency-Key header: 1–255 printable ASCII characters; undefined when absent. */
export function parseIdempotencyKey(header: unknown): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !KEY_PATTERN.test(header)) {
    throw ApiError.invalidParam('Idempotency-Key must be 1 to 255 printable ASCII characters');
  }
  return header;
}

/** JSON with object keys sorted at every level: equal bodies hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function bodyHash(body: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(body ?? {}))
    .digest('hex');
}

function timeout(ms: number): Promise<'timeout'> {
  return new Promise((resolve) => setTimeout(() => resolve('timeout'), ms).unref());
}

const stillRunning = () => ApiError.rateLimited(1000, 1, 'A request with this Idempotency-Key is still being processed; retry with the same key and body');

/**
 * Stripe semantics. The first request with a key runs its handler inside one transaction
 * that also claims the key and stores the 2xx answer, so a crash can never leave the writes
 * without their answer (or an answer without its writes); an error rolls both back and the
 * key stays free. A duplicate waits for the first (on this replica in memory, across
 * replicas on the key's row lock) at most IDEMPOTENCY_WAIT_MS and then replays its answer;
 * past that bound it is 429 with Retry-After: 1. Never a second execution.
 */
@Injectable()
export class IdempotencyService {
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(
    private readonly repository: IdempotencyRepository,
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  async execute(scope: TenantScope, endpoint: string, key: string, hash: string, statusCode: number, work: () => Promise<unknown>): Promise<IdempotentAnswer> {
    const id = `${scope.projectId}\u0000${scope.env}\u0000${endpoint}\u0000${key}`;
    const twin = this.inFlight.get(id);
    if (twin && (await Promise.race([twin.catch(() => undefined), timeout(IDEMPOTENCY_WAIT_MS)])) === 'timeout') throw stillRunning();

    const stored = await this.repository.find(scope, endpoint, key);
    if (stored && stored.expiresAtMs > this.clock.nowMs()) return replay(stored, hash);

    const run = this.runClaimed(scope, endpoint, key, hash, statusCode, work);
    this.inFlight.set(id, run);
    try {
      return await run;
    } finally {
      if (this.inFlight.get(id) === run) this.inFlight.delete(id);
    }
  }

  /** Deletes answers past their 24 hours. */
  purgeExpired(...args: Parameters<IdempotencyRepository['purgeExpired']>): Promise<number> {
    return this.repository.purgeExpired(...args);
  }

  /** A recurring durable job: expired answers leave the table every 10 minutes. */
  @OnJob({ type: 'platform.purge_idempotency_keys', everyMs: 10 * 60_000, transaction: false, maxAttempts: 3, backoff: { baseMs: 60_000 } })
  async purgeJob(): Promise<void> {
    const scan = crossTenant('idempotency key expiry');
    while ((await this.repository.purgeExpired(scan, this.clock.nowMs())) > 0);
  }

  private async runClaimed(
    scope: TenantScope,
    endpoint: string,
    key: string,
    hash: string,
    statusCode: number,
    work: () => Promise<unknown>,
  ): Promise<IdempotentAnswer> {
    let outcome: IdempotentAnswer | 'taken';
    try {
      outcome = await this.sql.transaction(async () => {
        await this.repository.limitLockWait(IDEMPOTENCY_WAIT_MS);
        const nowMs = this.clock.nowMs();
        if (!(await this.repository.claim(scope, endpoint, key, hash, nowMs, nowMs + IDEMPOTENCY_TTL_MS))) return 'taken' as const;
        const body = await work();
        await this.repository.complete(scope, endpoint, key, statusCode, body);
        return { replayed: false, statusCode, body };
      });
    } catch (err) {
      if (sqlState(err) === LOCK_NOT_AVAILABLE) {
        throw stillRunning();
      }
      throw err;
    }
    if (outcome !== 'taken') return outcome;
    // Another replica committed the first answer while this one waited on the key.
    const stored = await this.repository.find(scope, endpoint, key);
    if (!stored) throw stillRunning();
    return replay(stored, hash);
  }
}

function replay(stored: StoredAnswer, hash: string): IdempotentAnswer {
  if (stored.bodyHash !== hash) {
    throw ApiError.invalidRequest('idempotency_key_in_use', 'This Idempotency-Key was already used with a different request body');
  }
  const body = stored.response !== null && typeof stored.response === 'object' ? { ...(stored.response as object), idempotent_replay: true } : stored.response;
  return { replayed: true, statusCode: stored.statusCode, body };
}
