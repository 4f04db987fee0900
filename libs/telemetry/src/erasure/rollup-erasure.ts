import { Injectable } from '@nestjs/common';
import { Sql, type TenantScope } from '#platform';
import type { EventErasureSubject } from './event-erasure.repository.js';

export const ROLLUP_ERASURE_HOOK_NAME = 'telemetry.rollups';

/**
 * The rollups' personal identifiers of a forgotten customer (the erasure hook, in the
 * erasure's transaction): the user ids an error hit, the anonymous ids' first touches and
 * the daily visitor rows with the visitors' last days (and their share of the distinct-visitor
 * counts). Other counters stay (aggregates); acquisition_signups go with the customer row's
 * cascade.
 */
@Injectable()
export class RollupErasureRepository {
  constructor(private readonly sql: Sql) {}

  async forget(scope: TenantScope, subject: EventErasureSubject): Promise<void> {
    const base = [scope.projectId, scope.env];
    const ids = subject.deviceOnly ? subject.anonymousIds : [...subject.userIds, ...subject.anonymousIds];
    if (!subject.deviceOnly && subject.userIds.length > 0) {
      await this.sql.run(`DELETE FROM error_affected_users WHERE project_id = $1 AND env = $2 AND user_id = ANY($3::text[])`, [...base, subject.userIds]);
    }
    if (subject.anonymousIds.length > 0) {
      await this.sql.run(`DELETE FROM acquisition_first_touch WHERE project_id = $1 AND env = $2 AND anonymous_id = ANY($3::text[])`, [
        ...base,
        subject.anonymousIds,
      ]);
    }
    if (ids.length > 0) {
      await this.sql.run(`DELETE FROM analytics_daily_visitors WHERE project_id = $1 AND env = $2 AND visitor = ANY($3::text[])`, [...base, ids]);
      // The visitors leave the distinct-visitor counts as well: each last day's count loses them
      // (upserted in host and day order, the order of the event write).
      await this.sql.run(
        `WITH gone AS (
           DELETE FROM analytics_visitor_last_days WHERE project_id = $1 AND env = $2 AND visitor = ANY($3::text[]) RETURNING host, day
         )
         INSERT INTO analytics_visitor_day_counts AS c (project_id, env, host, day, visitors)
         SELECT $1, $2, host, day, -count(*) FROM gone GROUP BY host, day ORDER BY host, day
         ON CONFLICT (project_id, env, host, day) DO UPDATE SET visitors = c.visitors + EXCLUDED.visitors`,
        [...base, ids],
      );
    }
  }
}
