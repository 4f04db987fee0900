import { Injectable } from '@nestjs/common';
import { type CrossTenant, Sql } from '#platform';

/** A project due for its voided-purchases read, leased to this replica. */
export interface ClaimedVoidedRead {
  projectId: string;
  /** The end (service clock ms) of the last completed read; null before the first. */
  readUntilMs: number | null;
}

/**
 * SQL of the hourly voided-purchases reads: the schedule is found across projects (each row
 * carries its project); settling a read takes the project.
 */
@Injectable()
export class AndroidVoidedReadsRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Leases up to `limit` projects whose voided-purchases read is due at `nowMs`: projects with
   * an enabled Android rail get their schedule row on first sight (due at once). FOR UPDATE
   * SKIP LOCKED and the wall-clock lease keep two replicas from reading one project at once.
   */
  async claimDue(
    _sweep: CrossTenant,
    options: { nowMs: number; wallNowMs: number; leaseMs: number; worker: string; limit: number },
  ): Promise<ClaimedVoidedRead[]> {
    await this.sql.affected(
      `INSERT INTO android_voided_reads (project_id, read_until_ms, next_read_at_ms, updated_at_ms)
       SELECT s.project_id, NULL, $1::bigint, $1::bigint FROM rail_settings s
        WHERE s.rail = 'android_store' AND s.enabled
       ON CONFLICT ON CONSTRAINT android_voided_reads_pk DO NOTHING`,
      [options.nowMs],
    );
    const rows = await this.sql.rows<{ project_id: string; read_until_ms: string | null }>(
      `WITH due AS (
         SELECT r.project_id FROM android_voided_reads r
           JOIN rail_settings s ON s.project_id = r.project_id AND s.rail = 'android_store' AND s.enabled
          WHERE r.next_read_at_ms <= $1 AND (r.leased_until_ms IS NULL OR r.leased_until_ms <= $2)
          ORDER BY r.next_read_at_ms
          LIMIT $5
          FOR UPDATE OF r SKIP LOCKED)
       UPDATE android_voided_reads r SET leased_until_ms = $2 + $3, leased_by = $4
         FROM due WHERE r.project_id = due.project_id
       RETURNING r.project_id, r.read_until_ms`,
      [options.nowMs, options.wallNowMs, options.leaseMs, options.worker, options.limit],
    );
    return rows.map((row) => ({ projectId: row.project_id, readUntilMs: row.read_until_ms === null ? null : Number(row.read_until_ms) }));
  }

  /**
   * Settles a leased project's read: `readUntilMs` moves only when the read completed; the next
   * read is due at `nextReadAtMs`. False when the lease was lost (another replica holds it).
   */
  async settle(
    project: { projectId: string },
    worker: string,
    settlement: { outcome: 'read' | 'unavailable' | 'rate_limited'; readUntilMs: number | null; nextReadAtMs: number; nowMs: number },
  ): Promise<boolean> {
    const changed = await this.sql.affected(
      `UPDATE android_voided_reads
          SET read_until_ms = COALESCE($3, read_until_ms), next_read_at_ms = $4, last_outcome = $5, updated_at_ms = $6,
              leased_until_ms = NULL, leased_by = NULL
        WHERE project_id = $1 AND leased_by = $2`,
      [project.projectId, worker, settlement.readUntilMs, settlement.nextReadAtMs, settlement.outcome, settlement.nowMs],
    );
    return changed > 0;
  }
}
