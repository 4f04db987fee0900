import { Injectable } from '@nestjs/common';
import { type TenantScope, Sql } from '#platform';
import type { PurchaseRail } from './rail-model.js';

/** One lifecycle event to record (in the transaction of the change that yields it). */
export interface SubscriptionHistoryWrite {
  id: string;
  customerId: string;
  type: string;
  /** Unix ms: the rail's time of what caused it. */
  occurredAtMs: number;
  rail: PurchaseRail;
  subscriptionId: string;
  productId: string;
  auditEventId: string;
  railEventId: string | null;
  details: Record<string, unknown>;
}

export interface SubscriptionHistoryRow {
  id: string;
  type: string;
  /** Unix ms. */
  occurredAtMs: number;
  rail: PurchaseRail;
  subscriptionId: string;
  productId: string;
  auditEventId: string;
  railEventId: string | null;
  details: Record<string, unknown>;
}

/** Where a page starts: the keyset position of an entry (its time and insertion order). */
export interface HistoryPosition {
  occurredAtMs: string;
  seq: string;
}

/** The history rows of one change as the upsert of its record appends them (a JSON array, in order). */
export function historyParam(entries: readonly SubscriptionHistoryWrite[]): string {
  return JSON.stringify(entries.map((entry) => ({ ...entry, occurredAtMs: Math.floor(entry.occurredAtMs) })));
}

/**
 * The customer history of the rails (`subscription_history`): appended with the change's
 * record (RailSubscriptionsRepository.upsert), moved by merges and folds, read newest first on
 * (occurred_at_ms, seq) through subscription_history_customer_idx.
 */
@Injectable()
export class SubscriptionHistoryRepository {
  constructor(private readonly sql: Sql) {}

  /** The keyset position of the customer's entry `id`; null when the customer has no such entry. */
  position(scope: TenantScope, customerId: string, id: string): Promise<HistoryPosition | null> {
    return this.sql.one<HistoryPosition>(
      `SELECT occurred_at_ms::text AS "occurredAtMs", seq::text AS seq FROM subscription_history
        WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND id = $4`,
      [scope.projectId, scope.env, customerId, id],
    );
  }

  /** At most `limit` entries of the customer, newest first, older than `before` when given. */
  page(scope: TenantScope, customerId: string, before: HistoryPosition | null, limit: number): Promise<SubscriptionHistoryRow[]> {
    return this.sql.rows<SubscriptionHistoryRow>(
      `SELECT id, type, occurred_at_ms::float8 AS "occurredAtMs", rail, subscription_id AS "subscriptionId", product_id AS "productId",
              audit_event_id AS "auditEventId", rail_event_id AS "railEventId", details
         FROM subscription_history
        WHERE project_id = $1 AND env = $2 AND customer_id = $3
          AND ($4::bigint IS NULL OR (occurred_at_ms, seq) < ($4::bigint, $5::bigint))
        ORDER BY occurred_at_ms DESC, seq DESC
        LIMIT $6`,
      [scope.projectId, scope.env, customerId, before?.occurredAtMs ?? null, before?.seq ?? null, limit],
    );
  }

  /** Entries of a change that writes no subscription record (a subscription moved to another customer). */
  async append(scope: TenantScope, entries: readonly SubscriptionHistoryWrite[], recordedAt: Date): Promise<void> {
    if (entries.length === 0) return;
    await this.sql.run(
      `INSERT INTO subscription_history
              (project_id, env, id, customer_id, type, occurred_at_ms, rail, subscription_id, product_id, audit_event_id, rail_event_id, details, recorded_at)
       SELECT $1, $2, e.value->>'id', e.value->>'customerId', e.value->>'type', (e.value->>'occurredAtMs')::bigint, e.value->>'rail',
              e.value->>'subscriptionId', e.value->>'productId', e.value->>'auditEventId', e.value->>'railEventId', e.value->'details', $3
         FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS e(value, ord)
        ORDER BY e.ord`,
      [scope.projectId, scope.env, recordedAt, historyParam(entries)],
    );
  }

  /** A merge or fold: the first customer's history becomes the other's. */
  reassignCustomer(scope: TenantScope, fromCustomerId: string, toCustomerId: string): Promise<number> {
    return this.sql.affected(`UPDATE subscription_history SET customer_id = $4 WHERE project_id = $1 AND env = $2 AND customer_id = $3`, [
      scope.projectId,
      scope.env,
      fromCustomerId,
      toCustomerId,
    ]);
  }
}
