import { Injectable } from '@nestjs/common';
import { type CrossTenant, Sql, type TenantScope } from '#platform';

/** One affected user of a snapshot: [userId, customerId, monthly revenue in the reporting currency (minor units), last hit ms]. */
export type SnapshotAffectedUser = [string, string | null, number, number];

export interface ErrorRevenueSnapshot {
  payingUsers: number;
  /** The first affected users, revenue at risk first (the answer's order). */
  affected: SnapshotAffectedUser[];
  computedAtMs: number;
  readAtMs: number;
}

/** A snapshot the refresh job is to work out again, with its tenant. */
export interface DueSnapshot {
  projectId: string;
  env: 'sandbox' | 'production';
  fingerprint: string;
}

/** SQL of `error_revenue_snapshots` (service-clock ms throughout). */
@Injectable()
export class ErrorRevenueSnapshotsRepository {
  constructor(private readonly sql: Sql) {}

  async get(scope: TenantScope, fingerprint: string): Promise<ErrorRevenueSnapshot | null> {
    const row = await this.sql.one<{ paying_users: number; affected: SnapshotAffectedUser[]; computed_at_ms: string; read_at_ms: string }>(
      `SELECT paying_users, affected, computed_at_ms, read_at_ms FROM error_revenue_snapshots WHERE project_id = $1 AND env = $2 AND fingerprint = $3`,
      [scope.projectId, scope.env, fingerprint],
    );
    if (!row) return null;
    return { payingUsers: row.paying_users, affected: row.affected, computedAtMs: Number(row.computed_at_ms), readAtMs: Number(row.read_at_ms) };
  }

  /**
   * Stores a snapshot worked out from data read at or after `computedAtMs`; an older one never
   * replaces a newer (two replicas working out one fingerprint at once). `readAtMs` null keeps
   * the stored read time (the refresh job). Not stored when the scope had an erasure within
   * `erasureMarginMs` before `computedAtMs` or after it (its lookups may have read the erased
   * customer); answers whether that was so.
   */
  async put(
    scope: TenantScope,
    fingerprint: string,
    snapshot: Pick<ErrorRevenueSnapshot, 'payingUsers' | 'affected' | 'computedAtMs'>,
    readAtMs: number | null,
    erasureMarginMs: number,
  ): Promise<{ erased: boolean }> {
    const row = await this.sql.one<{ erased: boolean }>(
      `WITH erased AS (
         SELECT 1 FROM error_revenue_erasures WHERE project_id = $1 AND env = $2 AND erased_at_ms >= $6::bigint - $8::bigint
       ), stored AS (
         INSERT INTO error_revenue_snapshots AS s (project_id, env, fingerprint, paying_users, affected, computed_at_ms, read_at_ms)
         SELECT $1, $2, $3, $4, $5::jsonb, $6, COALESCE($7::bigint, $6) WHERE NOT EXISTS (SELECT 1 FROM erased)
         ON CONFLICT (project_id, env, fingerprint) DO UPDATE
            SET paying_users = EXCLUDED.paying_users, affected = EXCLUDED.affected, computed_at_ms = EXCLUDED.computed_at_ms,
                read_at_ms = GREATEST(s.read_at_ms, COALESCE($7::bigint, s.read_at_ms))
          WHERE s.computed_at_ms <= EXCLUDED.computed_at_ms
       )
       SELECT EXISTS (SELECT 1 FROM erased) AS erased`,
      [scope.projectId, scope.env, fingerprint, snapshot.payingUsers, JSON.stringify(snapshot.affected), snapshot.computedAtMs, readAtMs, erasureMarginMs],
    );
    return { erased: row?.erased === true };
  }

  /** Records that the snapshot was read at `readAtMs`. */
  async touch(scope: TenantScope, fingerprint: string, readAtMs: number): Promise<void> {
    await this.sql.run(`UPDATE error_revenue_snapshots SET read_at_ms = $4 WHERE project_id = $1 AND env = $2 AND fingerprint = $3 AND read_at_ms < $4`, [
      scope.projectId,
      scope.env,
      fingerprint,
      readAtMs,
    ]);
  }

  /** Snapshots read since `readSinceMs` and worked out before `computedBeforeMs`, oldest first, at most `limit`. */
  async due(_job: CrossTenant, readSinceMs: number, computedBeforeMs: number, limit: number): Promise<DueSnapshot[]> {
    const rows = await this.sql.rows<{ project_id: string; env: 'sandbox' | 'production'; fingerprint: string }>(
      `SELECT project_id, env, fingerprint FROM error_revenue_snapshots
        WHERE read_at_ms >= $1 AND computed_at_ms < $2 ORDER BY computed_at_ms LIMIT $3`,
      [readSinceMs, computedBeforeMs, limit],
    );
    return rows.map((r) => ({ projectId: r.project_id, env: r.env, fingerprint: r.fingerprint }));
  }

  /** Drops snapshots nobody read since `readBeforeMs`; returns how many. */
  async dropUnread(_job: CrossTenant, readBeforeMs: number): Promise<number> {
    return this.sql.affected(`DELETE FROM error_revenue_snapshots WHERE read_at_ms < $1`, [readBeforeMs]);
  }

  /** Drops the scope's snapshots (an erasure: they may name the forgotten user) and records when, so none computed before is stored after. */
  async forgetScope(scope: TenantScope, nowMs: number): Promise<void> {
    await this.sql.run(
      `INSERT INTO error_revenue_erasures (project_id, env, erased_at_ms) VALUES ($1, $2, $3)
       ON CONFLICT ON CONSTRAINT error_revenue_erasures_pk DO UPDATE SET erased_at_ms = GREATEST(error_revenue_erasures.erased_at_ms, EXCLUDED.erased_at_ms)`,
      [scope.projectId, scope.env, nowMs],
    );
    await this.sql.run(`DELETE FROM error_revenue_snapshots WHERE project_id = $1 AND env = $2`, [scope.projectId, scope.env]);
  }
}
