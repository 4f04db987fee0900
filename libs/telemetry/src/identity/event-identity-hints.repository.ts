import { Injectable } from '@nestjs/common';
import { type CrossTenant, type Env, type TenantScope, Sql } from '#platform';
import { CustomerActivityFeed } from './customer-activity-feed.service.js';

/** One distinct hint set of stored events (the resolver's queue, `event_identity_hints`). */
export interface HintSetRow {
  id: string;
  project_id: string;
  env: Env;
  developer_user_id: string | null;
  anonymous_id: string | null;
  service_customer_id: string | null;
  attempts: number;
}

/** What a lookup made of a set: stays pending or not, its attempts, its next try, its customer. */
export interface HintSetUpdate {
  pending: boolean;
  attempts: number;
  afterMs: number;
  customerId: string | null;
}

/** The resolver's queue and the events it fills in. */
@Injectable()
export class EventIdentityHintsRepository {
  constructor(
    private readonly sql: Sql,
    private readonly activity: CustomerActivityFeed,
  ) {}

  /**
   * Leases up to `limit` due sets across tenants (FOR UPDATE SKIP LOCKED, then
   * resolve_after_ms moves to `leaseUntilMs`): several replicas never work on the same set.
   */
  claimDue(_queue: CrossTenant, nowMs: number, leaseUntilMs: number, limit: number): Promise<HintSetRow[]> {
    return this.sql.rows<HintSetRow>(
      `UPDATE event_identity_hints AS h
          SET resolve_after_ms = $2
        WHERE h.id IN (SELECT id FROM event_identity_hints
                        WHERE pending AND resolve_after_ms <= $1
                        ORDER BY resolve_after_ms
                        LIMIT ${Number(limit)}
                          FOR UPDATE SKIP LOCKED)
        RETURNING h.id::text AS id, h.project_id, h.env, h.developer_user_id, h.anonymous_id, h.service_customer_id, h.attempts`,
      [nowMs, leaseUntilMs],
    );
  }

  /**
   * In one transaction: records the outcome on the set and, on a hit, fills customer_id of the
   * set's events that have none (the set row first, then its events: the lock order of
   * ingestion). Returns the events updated.
   */
  async applyOutcome(scope: TenantScope, set: HintSetRow, update: HintSetUpdate, nowMs: number): Promise<number> {
    return this.sql.transaction(async () => {
      const [changed] = await this.sql.rows<{ last_seen_ms: string }>(
        `UPDATE event_identity_hints
            SET pending = $4, attempts = $5, resolve_after_ms = $6,
                customer_id = COALESCE($7, customer_id),
                resolved_at_ms = CASE WHEN $7::text IS NULL THEN resolved_at_ms ELSE $8 END
          WHERE project_id = $1 AND env = $2 AND id = $3
         RETURNING last_seen_ms`,
        [scope.projectId, scope.env, set.id, update.pending, update.attempts, update.afterMs, update.customerId, nowMs],
      );
      if (!changed || update.customerId === null) return 0;
      await this.activity.active(scope, update.customerId, Number(changed.last_seen_ms));
      // Equality on each present hint and IS NULL on the others: the planner uses the
      // partial "unresolved" index of the first present hint.
      const params: unknown[] = [scope.projectId, scope.env, update.customerId];
      const hint = (column: string, value: string | null) => {
        if (value === null) return `${column} IS NULL`;
        params.push(value);
        return `${column} = $${params.length}`;
      };
      const where = [
        hint('anonymous_id', set.anonymous_id),
        hint('developer_user_id', set.developer_user_id),
        hint('service_customer_id', set.service_customer_id),
      ];
      return this.sql.affected(
        `UPDATE events SET customer_id = $3
          WHERE project_id = $1 AND env = $2 AND customer_id IS NULL AND ${where.join(' AND ')}`,
        params,
      );
    });
  }
}
