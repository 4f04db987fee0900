import { randomUUID } from 'node:crypto';
import type { TenantScope } from '#platform';
import type { DataSource } from 'typeorm';

/**
 * Store states of rail subscriptions that no request can produce any more, written directly.
 * Each function names the situation a test needs; the rows are otherwise left as the rails wrote them.
 */

/** A record as it was applied before the lifecycle was stored: no subscription object, no lifecycle state. */
export async function dropStoredLifecycle(db: DataSource, scope: TenantScope, subscriptionId: string): Promise<void> {
  await db.query(`UPDATE rail_subscriptions SET subscription = NULL, lifecycle_state = NULL WHERE project_id = $1 AND env = $2 AND subscription_id = $3`, [
    scope.projectId,
    scope.env,
    subscriptionId,
  ]);
}

export interface SeededRailSubscription {
  rail?: string;
  id?: string;
  product?: string;
  /** The record's access state (active unless said). */
  state?: string;
  /** The rail's own status word (null: none recorded). */
  raw?: string | null;
}

/** A rail subscription record as a rail leaves it without a lifecycle object: 30 days left, rail time 1. Answers its id. */
export async function seedRailSubscription(
  db: Pick<DataSource, 'query'>,
  scope: TenantScope,
  customerId: string,
  o: SeededRailSubscription = {},
): Promise<string> {
  const id = o.id ?? `sub_${randomUUID().replace(/-/g, '').slice(0, 10)}`;
  await db.query(
    `INSERT INTO rail_subscriptions (project_id, env, rail, subscription_id, customer_id, product_id, state, valid_until, rail_time_ms, raw_status, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now() + interval '30 days', 1, $8, now(), now())`,
    [
      scope.projectId,
      scope.env,
      o.rail ?? 'card_payments',
      id,
      customerId,
      o.product ?? 'price_pro',
      o.state ?? 'active',
      o.raw === undefined ? 'active' : o.raw,
    ],
  );
  return id;
}

/** A record as the service kept it before subscription objects and the revenue ledger's price existed: no object, no ledger price. */
export async function keptBeforeObjectsAndPrice(db: DataSource, scope: TenantScope, rail: string, subscriptionId: string): Promise<void> {
  await db.query(`UPDATE rail_subscriptions SET subscription = NULL WHERE project_id = $1 AND env = $2 AND rail = $3 AND subscription_id = $4`, [
    scope.projectId,
    scope.env,
    rail,
    subscriptionId,
  ]);
  await db.query(
    `UPDATE revenue_subscriptions SET currency = NULL, monthly_minor = NULL WHERE project_id = $1 AND env = $2 AND rail = $3 AND subscription_id = $4`,
    [scope.projectId, scope.env, rail, subscriptionId],
  );
}
