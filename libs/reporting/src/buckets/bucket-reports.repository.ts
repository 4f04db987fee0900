import { Injectable } from '@nestjs/common';
import { Sql, type TenantScope } from '#platform';
import { ANONYMOUS_ACTOR, type BucketReport, type UnitCounts, addCountMaps, totalsOf } from './bucket-report.rules.js';

export interface ReadCostSummary {
  reads: number;
  writes: number;
  deletes: number;
  perUserReads: number;
  attributedActors: number;
}

type CountMap = Record<string, UnitCounts> | null;

/**
 * Bucket reports: one row per (project, env, key, UTC date) holding the sum of every report
 * of that key and date, with its labels and actors in child rows; reads sum them by date index.
 */
@Injectable()
export class BucketReportsRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Adds a report to its key's row for the date (labels and actors with it), in one
   * transaction. The day's row is locked first, so concurrent reports of one key and date
   * add up one after the other; the first report's arrival stays the row's `received_at_ms`.
   */
  async add(scope: TenantScope, keyId: string, report: BucketReport, receivedAtMs: number): Promise<void> {
    const totals = totalsOf(report);
    const base = [scope.projectId, scope.env, keyId, report.date];
    const json = (map: CountMap) => map && JSON.stringify(map);
    await this.sql.transaction(async () => {
      const inserted = await this.sql.rows(
        `INSERT INTO bucket_reports (project_id, env, key_id, report_date, reads, writes, deletes, by_hour, by_minute, by_actor_label, received_at_ms)
         VALUES ($1, $2, $3, $4::date, $5, $6, $7, $8::jsonb, $9::jsonb, $10::jsonb, $11)
         ON CONFLICT (project_id, env, key_id, report_date) DO NOTHING
         RETURNING 1 AS inserted`,
        [...base, totals.read, totals.write, totals.delete, json(report.byHour), json(report.byMinute), json(report.byActorLabel), receivedAtMs],
      );
      if (inserted.length === 0) {
        const prior = await this.sql.one<{ by_hour: CountMap; by_minute: CountMap; by_actor_label: CountMap }>(
          `UPDATE bucket_reports SET reads = reads + $5, writes = writes + $6, deletes = deletes + $7
            WHERE project_id = $1 AND env = $2 AND key_id = $3 AND report_date = $4::date
           RETURNING by_hour, by_minute, by_actor_label`,
          [...base, totals.read, totals.write, totals.delete],
        );
        if (prior && (report.byHour || report.byMinute || report.byActorLabel)) {
          await this.sql.run(
            `UPDATE bucket_reports SET by_hour = $5::jsonb, by_minute = $6::jsonb, by_actor_label = $7::jsonb
              WHERE project_id = $1 AND env = $2 AND key_id = $3 AND report_date = $4::date`,
            [
              ...base,
              json(addCountMaps(prior.by_hour, report.byHour)),
              json(addCountMaps(prior.by_minute, report.byMinute)),
              json(addCountMaps(prior.by_actor_label, report.byActorLabel)),
            ],
          );
        }
      }
      const labels = [...report.byLabel.entries()];
      if (labels.length > 0) {
        await this.sql.run(
          `INSERT INTO bucket_report_labels AS l (project_id, env, key_id, report_date, label, reads, writes, deletes)
           SELECT $1, $2, $3, $4::date, l, r, w, d FROM unnest($5::text[], $6::bigint[], $7::bigint[], $8::bigint[]) AS x(l, r, w, d)
           ON CONFLICT (project_id, env, key_id, report_date, label) DO UPDATE
              SET reads = l.reads + EXCLUDED.reads, writes = l.writes + EXCLUDED.writes, deletes = l.deletes + EXCLUDED.deletes`,
          [...base, labels.map(([l]) => l), labels.map(([, c]) => c.read), labels.map(([, c]) => c.write), labels.map(([, c]) => c.delete)],
        );
      }
      const actors = [...report.byActor.entries()];
      if (actors.length > 0) {
        await this.sql.run(
          `INSERT INTO bucket_report_actors AS a (project_id, env, key_id, report_date, actor_id, reads)
           SELECT $1, $2, $3, $4::date, a, r FROM unnest($5::text[], $6::bigint[]) AS x(a, r)
           ON CONFLICT (project_id, env, key_id, report_date, actor_id) DO UPDATE SET reads = a.reads + EXCLUDED.reads`,
          [...base, actors.map(([a]) => a), actors.map(([, c]) => c.read)],
        );
      }
    });
  }

  /** Totals of the reports dated from `fromDate` (inclusive) on; null when there is none. */
  async summary(scope: TenantScope, fromDate: string): Promise<ReadCostSummary | null> {
    const row = await this.sql.one<Record<string, string | null>>(
      `SELECT (SELECT count(*) FROM bucket_reports WHERE project_id = $1 AND env = $2 AND report_date >= $3::date) AS reports,
              (SELECT sum(reads) FROM bucket_reports WHERE project_id = $1 AND env = $2 AND report_date >= $3::date) AS reads,
              (SELECT sum(writes) FROM bucket_reports WHERE project_id = $1 AND env = $2 AND report_date >= $3::date) AS writes,
              (SELECT sum(deletes) FROM bucket_reports WHERE project_id = $1 AND env = $2 AND report_date >= $3::date) AS deletes,
              (SELECT sum(reads) FROM bucket_report_actors WHERE project_id = $1 AND env = $2 AND report_date >= $3::date AND actor_id <> $4) AS per_user,
              (SELECT count(DISTINCT actor_id) FROM bucket_report_actors WHERE project_id = $1 AND env = $2 AND report_date >= $3::date AND actor_id <> $4) AS actors`,
      [scope.projectId, scope.env, fromDate, ANONYMOUS_ACTOR],
    );
    if (!row || Number(row.reports) === 0) return null;
    return {
      reads: Number(row.reads ?? 0),
      writes: Number(row.writes ?? 0),
      deletes: Number(row.deletes ?? 0),
      perUserReads: Number(row.per_user ?? 0),
      attributedActors: Number(row.actors ?? 0),
    };
  }

  /** Reads per label dated from `fromDate` on, most first. */
  async byOperation(scope: TenantScope, fromDate: string, limit: number): Promise<Array<{ label: string; reads: number }>> {
    const rows = await this.sql.rows<{ label: string; reads: string }>(
      `SELECT label, sum(reads) AS reads FROM bucket_report_labels
        WHERE project_id = $1 AND env = $2 AND report_date >= $3::date
        GROUP BY label ORDER BY sum(reads) DESC, label LIMIT $4`,
      [scope.projectId, scope.env, fromDate, limit],
    );
    return rows.map((r) => ({ label: r.label, reads: Number(r.reads) }));
  }

  async readsByActor(scope: TenantScope, actorIds: readonly string[], fromDate: string): Promise<Map<string, number>> {
    const rows = await this.sql.rows<{ actor_id: string; reads: string }>(
      `SELECT actor_id, sum(reads) AS reads FROM bucket_report_actors
        WHERE project_id = $1 AND env = $2 AND actor_id = ANY($3::text[]) AND report_date >= $4::date
        GROUP BY actor_id`,
      [scope.projectId, scope.env, [...actorIds], fromDate],
    );
    return new Map(rows.map((r) => [r.actor_id, Number(r.reads)]));
  }

  async topActors(scope: TenantScope, fromDate: string, limit: number): Promise<Array<{ actorId: string; reads: number }>> {
    const rows = await this.sql.rows<{ actor_id: string; reads: string }>(
      `SELECT actor_id, sum(reads) AS reads FROM bucket_report_actors
        WHERE project_id = $1 AND env = $2 AND report_date >= $3::date AND actor_id <> $4
        GROUP BY actor_id ORDER BY sum(reads) DESC, actor_id LIMIT $5`,
      [scope.projectId, scope.env, fromDate, ANONYMOUS_ACTOR, limit],
    );
    return rows.map((r) => ({ actorId: r.actor_id, reads: Number(r.reads) }));
  }
}
