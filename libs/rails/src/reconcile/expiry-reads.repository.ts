import { Injectable } from '@nestjs/common';
import { type CrossTenant, DATABASE_NOW_MS, type Env, Sql } from '#platform';
import type { PurchaseRail } from '#entitlements';
import type { ExpiryReadSettlement } from './expiry-reads.js';

/** A row leased to this replica, with what its subscription holds now. */
export interface ClaimedExpiryRead {
  projectId: string;
  env: Env;
  rail: PurchaseRail;
  subscriptionId: string;
  attempts: number;
  /** The end the row was scheduled for (Unix ms). */
  dueValidUntilMs: number;
  /** Whether the subscription is still active with that end and no rail state after it. */
  stillDue: boolean;
  /** When the row became due for this read (service clock ms): its lateness is now minus this. */
  readAtMs: number;
}

/** A row's key with its tenant (the sweep's batch statements carry each row's tenant). */
export type ExpiryReadKey = Pick<ClaimedExpiryRead, 'projectId' | 'env' | 'rail' | 'subscriptionId'>;

interface ClaimedRow {
  project_id: string;
  env: Env;
  rail: PurchaseRail;
  subscription_id: string;
  attempts: number;
  due_ms: number;
  still_due: boolean;
  read_at_ms: number;
}

/**
 * SQL of the reads at expiry. The sweep's methods are cross-tenant (due rows are found by
 * time across tenants; each row carries its tenant, and the batch statements name each row's).
 * Service-clock times are Unix ms (`nowMs`); the lease is in wall-clock ms, so a test-clock
 * advance never frees a row another replica is reading.
 */
@Injectable()
export class ExpiryReadsRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Schedules up to `limit` subscriptions whose end passed at `nowMs` while active, with no
   * rail state newer than that end and no row for that end yet (a row for an earlier end is
   * reset). Returns how many rows it scheduled.
   */
  async schedule(_sweep: CrossTenant, nowMs: number, limit: number): Promise<number> {
    return this.sql.affected(
      `INSERT INTO rail_expiry_reads AS r (project_id, env, rail, subscription_id, due_valid_until, status, attempts, next_read_at_ms, updated_at_ms)
       SELECT s.project_id, s.env, s.rail, s.subscription_id, s.valid_until, 'pending', 0, $1::bigint, $1::bigint
         FROM rail_subscriptions s
        WHERE s.state = 'active' AND s.valid_until IS NOT NULL AND s.valid_until <= to_timestamp($1::bigint / 1000.0)
          AND s.rail_time_ms <= (extract(epoch FROM s.valid_until) * 1000)::bigint
          AND NOT EXISTS (SELECT 1 FROM rail_expiry_reads e
                           WHERE e.project_id = s.project_id AND e.env = s.env AND e.rail = s.rail
                             AND e.subscription_id = s.subscription_id AND e.due_valid_until = s.valid_until)
        ORDER BY s.valid_until
        LIMIT $2
       ON CONFLICT ON CONSTRAINT rail_expiry_reads_pk DO UPDATE
          SET due_valid_until = EXCLUDED.due_valid_until, status = 'pending', attempts = 0, next_read_at_ms = EXCLUDED.next_read_at_ms,
              leased_until_ms = NULL, leased_by = NULL, last_outcome = NULL, updated_at_ms = EXCLUDED.updated_at_ms
        WHERE r.due_valid_until <> EXCLUDED.due_valid_until`,
      [nowMs, limit],
    );
  }

  /**
   * Leases up to `limit` pending rows due at `nowMs` (oldest first) to `worker` for `leaseMs`
   * of PostgreSQL's clock (FOR UPDATE SKIP LOCKED: two replicas never lease one row; a lease is
   * infrastructure time, so replicas' own clocks never decide whether it ran out).
   */
  async claim(_sweep: CrossTenant, options: { nowMs: number; leaseMs: number; worker: string; limit: number }): Promise<ClaimedExpiryRead[]> {
    const rows = await this.sql.rows<ClaimedRow>(
      `WITH db AS (SELECT ${DATABASE_NOW_MS} AS now_ms),
       due AS (
         SELECT project_id, env, rail, subscription_id FROM rail_expiry_reads, db
          WHERE status = 'pending' AND next_read_at_ms <= $1::bigint AND (leased_until_ms IS NULL OR leased_until_ms <= db.now_ms)
          ORDER BY next_read_at_ms
          LIMIT $4
          FOR UPDATE OF rail_expiry_reads SKIP LOCKED)
       UPDATE rail_expiry_reads r SET leased_until_ms = db.now_ms + $2::bigint, leased_by = $3, updated_at_ms = $1::bigint
         FROM due, db, rail_subscriptions s
        WHERE r.project_id = due.project_id AND r.env = due.env AND r.rail = due.rail AND r.subscription_id = due.subscription_id
          AND s.project_id = r.project_id AND s.env = r.env AND s.rail = r.rail AND s.subscription_id = r.subscription_id
       RETURNING r.project_id, r.env, r.rail, r.subscription_id, r.attempts, r.next_read_at_ms::float8 AS read_at_ms,
                 (extract(epoch FROM r.due_valid_until) * 1000)::float8 AS due_ms,
                 (s.state = 'active' AND s.valid_until = r.due_valid_until
                  AND s.rail_time_ms <= (extract(epoch FROM s.valid_until) * 1000)::bigint) AS still_due`,
      [options.nowMs, options.leaseMs, options.worker, options.limit],
    );
    return rows.map((row) => ({
      projectId: row.project_id,
      env: row.env,
      rail: row.rail,
      subscriptionId: row.subscription_id,
      attempts: row.attempts,
      dueValidUntilMs: Number(row.due_ms),
      stillDue: row.still_due,
      readAtMs: Number(row.read_at_ms),
    }));
  }

  /**
   * Records the settlements of rows this worker leases in one statement; returns how many
   * rows it settled (a row whose lease was lost is left alone).
   */
  async settleMany(
    _sweep: CrossTenant,
    settled: readonly { row: ExpiryReadKey; settlement: ExpiryReadSettlement }[],
    worker: string,
    nowMs: number,
  ): Promise<number> {
    if (settled.length === 0) return 0;
    const column = <V>(pick: (entry: { row: ExpiryReadKey; settlement: ExpiryReadSettlement }) => V): V[] => settled.map(pick);
    return this.sql.affected(
      `UPDATE rail_expiry_reads r
          SET status = s.status, attempts = s.attempts, next_read_at_ms = s.next_read_at_ms, last_outcome = s.outcome,
              leased_until_ms = NULL, leased_by = NULL, updated_at_ms = $10
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::bigint[], $8::text[])
              AS s(project_id, env, rail, subscription_id, status, attempts, next_read_at_ms, outcome)
        WHERE r.project_id = s.project_id AND r.env = s.env AND r.rail = s.rail AND r.subscription_id = s.subscription_id
          AND r.leased_by = $9`,
      [
        column((e) => e.row.projectId),
        column((e) => e.row.env),
        column((e) => e.row.rail),
        column((e) => e.row.subscriptionId),
        column((e) => e.settlement.status),
        column((e) => e.settlement.attempts),
        column((e) => e.settlement.nextReadAtMs),
        column((e) => e.settlement.outcome),
        worker,
        nowMs,
      ],
    );
  }

  /** Frees leased rows unread in one statement (the sweep ran out of time): they stay due. */
  async releaseMany(_sweep: CrossTenant, rows: readonly ExpiryReadKey[], worker: string): Promise<void> {
    if (rows.length === 0) return;
    await this.sql.affected(
      `UPDATE rail_expiry_reads r SET leased_until_ms = NULL, leased_by = NULL
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS s(project_id, env, rail, subscription_id)
        WHERE r.project_id = s.project_id AND r.env = s.env AND r.rail = s.rail AND r.subscription_id = s.subscription_id
          AND r.leased_by = $5`,
      [rows.map((row) => row.projectId), rows.map((row) => row.env), rows.map((row) => row.rail), rows.map((row) => row.subscriptionId), worker],
    );
  }

  /** Pending rows due at `nowMs`, per rail (the backlog gauge). */
  async dueByRail(_sweep: CrossTenant, nowMs: number): Promise<Map<PurchaseRail, number>> {
    const rows = await this.sql.rows<{ rail: PurchaseRail; count: number }>(
      `SELECT rail, count(*)::int AS count FROM rail_expiry_reads WHERE status = 'pending' AND next_read_at_ms <= $1 GROUP BY rail`,
      [nowMs],
    );
    return new Map(rows.map((row) => [row.rail, row.count]));
  }
}
