import { Injectable } from '@nestjs/common';
import { DATABASE_NOW_MS } from '../database/database-clock.js';
import { Sql } from '../database/sql.js';
import type { CrossTenant, Env } from '../tenancy/tenant-scope.js';

export type JobStatus = 'queued' | 'running' | 'done' | 'dead';

export interface JobRow {
  id: string;
  type: string;
  projectId: string | null;
  env: Env | null;
  payload: Record<string, unknown>;
  dedupeKey: string | null;
  status: JobStatus;
  attempts: number;
  maxAttempts: number;
  runAtMs: number;
  lastError: string | null;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface NewJob {
  type: string;
  projectId: string | null;
  env: Env | null;
  payload: Record<string, unknown>;
  dedupeKey: string | null;
  maxAttempts: number;
  runAtMs: number;
}

/** The row as a JobRow; `t` qualifies the columns (`j.` in an UPDATE … FROM). */
const columns = (t = '') =>
  `${t}id::text AS id, ${t}type AS type, ${t}project_id AS "projectId", ${t}env AS env, ${t}payload AS payload, ${t}dedupe_key AS "dedupeKey",
   ${t}status AS status, ${t}attempts AS attempts, ${t}max_attempts AS "maxAttempts", ${t}run_at_ms::float8 AS "runAtMs",
   ${t}last_error AS "lastError", ${t}created_at_ms::float8 AS "createdAtMs", ${t}updated_at_ms::float8 AS "updatedAtMs"`;
const COLUMNS = columns();

/**
 * The durable jobs queue. Every method is a cross-tenant queue operation (the queue is drained
 * by due time across tenants); rows carry their own tenant.
 */
@Injectable()
export class JobsRepository {
  constructor(private readonly sql: Sql) {}

  /** Inserts the job in the ambient (caller's) transaction; a live job with the same (type, dedupe key) makes it a no-op. */
  async enqueue(_queue: CrossTenant, job: NewJob, nowMs: number): Promise<string | null> {
    const row = await this.sql.one<{ id: string }>(
      `INSERT INTO jobs (type, project_id, env, payload, dedupe_key, max_attempts, run_at_ms, created_at_ms, updated_at_ms)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $8)
       ON CONFLICT (type, dedupe_key) WHERE dedupe_key IS NOT NULL AND status IN ('queued', 'running') DO NOTHING
       RETURNING id::text AS id`,
      [job.type, job.projectId, job.env, JSON.stringify(job.payload), job.dedupeKey, job.maxAttempts, job.runAtMs, nowMs],
    );
    return row?.id ?? null;
  }

  /**
   * Leases up to `limit` due jobs of `types` (FOR UPDATE SKIP LOCKED, then status running with a
   * lease): queued jobs whose time has come, and running jobs whose lease expired (a worker that
   * died). Due-ness is business time (`nowMs`, the service clock); the lease is infrastructure
   * time, set and compared on PostgreSQL's clock, so replicas whose clocks disagree never take
   * over a job another still runs. `ignoreSchedule` also takes queued jobs not yet due (an operator's "run now").
   */
  async claim(
    _queue: CrossTenant,
    options: {
      types: string[];
      limit: number;
      nowMs: number;
      leaseMs: number;
      worker: string;
      projectId?: string;
      ignoreSchedule?: boolean;
      /** Jobs this run already attempted (an operator's run-now never loops on a failing job). */
      exclude?: string[];
    },
  ): Promise<JobRow[]> {
    return this.sql.rows<JobRow>(
      `WITH db AS (SELECT ${DATABASE_NOW_MS} AS now_ms),
       due AS (
         SELECT id FROM jobs, db
          WHERE type = ANY($1::text[]) AND ($6::text IS NULL OR project_id = $6) AND id <> ALL($8::bigint[])
            AND ((status = 'queued' AND ($7::boolean OR run_at_ms <= $3)) OR (status = 'running' AND leased_until_ms <= db.now_ms))
          ORDER BY run_at_ms
          LIMIT $2
          FOR UPDATE OF jobs SKIP LOCKED)
       UPDATE jobs j SET status = 'running', attempts = j.attempts + 1, leased_until_ms = db.now_ms + $4, leased_by = $5, updated_at_ms = $3
         FROM due, db WHERE j.id = due.id
       RETURNING ${columns('j.')}`,
      [
        options.types,
        options.limit,
        options.nowMs,
        options.leaseMs,
        options.worker,
        options.projectId ?? null,
        options.ignoreSchedule ?? false,
        options.exclude ?? [],
      ],
    );
  }

  /** Marks a leased job done, in the handler's transaction; false when the lease was lost meanwhile. */
  async complete(_queue: CrossTenant, id: string, worker: string, nowMs: number): Promise<boolean> {
    const affected = await this.sql.affected(
      `UPDATE jobs SET status = 'done', finished_at_ms = $3, updated_at_ms = $3, leased_until_ms = NULL, last_error = NULL
        WHERE id = $1 AND leased_by = $2 AND status = 'running'`,
      [id, worker, nowMs],
    );
    return affected === 1;
  }

  /** After a failed attempt: back to the queue at `retryAtMs`, or dead when `dead`. */
  async fail(
    _queue: CrossTenant,
    id: string,
    worker: string,
    error: string,
    nowMs: number,
    outcome: { dead: true } | { dead: false; retryAtMs: number },
  ): Promise<void> {
    await this.sql.affected(
      `UPDATE jobs SET status = $4::text, run_at_ms = COALESCE($5::bigint, run_at_ms), last_error = $3, updated_at_ms = $6::bigint, leased_until_ms = NULL,
              finished_at_ms = CASE WHEN $4::text = 'dead' THEN $6::bigint ELSE NULL END
        WHERE id = $1 AND leased_by = $2 AND status = 'running'`,
      [id, worker, error.slice(0, 2000), outcome.dead ? 'dead' : 'queued', outcome.dead ? null : outcome.retryAtMs, nowMs],
    );
  }

  async find(_queue: CrossTenant, id: string): Promise<JobRow | null> {
    return /^\d{1,18}$/.test(id) ? this.sql.one<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE id = $1`, [id]) : null;
  }

  async list(_queue: CrossTenant, status: JobStatus, limit: number): Promise<JobRow[]> {
    return this.sql.rows<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE status = $1 ORDER BY updated_at_ms DESC, id DESC LIMIT $2`, [status, limit]);
  }

  /** A dead job back to the queue with a fresh budget of attempts. */
  async retryDead(_queue: CrossTenant, id: string, nowMs: number): Promise<JobRow | null> {
    return this.sql.one<JobRow>(
      `UPDATE jobs SET status = 'queued', attempts = 0, run_at_ms = $2, updated_at_ms = $2, finished_at_ms = NULL
        WHERE id = $1 AND status = 'dead' RETURNING ${COLUMNS}`,
      [id, nowMs],
    );
  }

  /** Queue depth and lag per type (for metrics and the operator). */
  async stats(_queue: CrossTenant, nowMs: number): Promise<{ type: string; status: JobStatus; count: number; oldestDueMs: number | null }[]> {
    return this.sql.rows(
      `SELECT type, status, count(*)::int AS count,
              CASE WHEN status = 'queued' THEN min(run_at_ms) FILTER (WHERE run_at_ms <= $1)::float8 END AS "oldestDueMs"
         FROM jobs WHERE status IN ('queued', 'running', 'dead') GROUP BY type, status ORDER BY type, status`,
      [nowMs],
    );
  }

  /** Deletes finished jobs older than the cutoff (in batches). */
  async purgeFinished(_queue: CrossTenant, beforeMs: number, batch = 5_000): Promise<number> {
    return this.sql.affected(
      `DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE status = 'done' AND finished_at_ms < $1 ORDER BY finished_at_ms LIMIT $2)`,
      [beforeMs, batch],
    );
  }
}
