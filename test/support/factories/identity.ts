import type { TenantScope } from '#platform';
import { IdentifyService } from '#identity';
import type { MediumContext } from '../medium.js';
import { unique } from '../medium.js';

/** Identity for tests: customers through the identify service where it can make them, and the few situations it cannot, by name. */

type Db = Pick<MediumContext['dataSource'], 'query'>;

/** Factory: a customer of the scope known by a developer user id (and a device), through identify; answers both ids. */
export async function customerWithUserId(m: MediumContext, scope: TenantScope): Promise<{ customerId: string; userId: string }> {
  const userId = unique('user');
  const linked = await m.get(IdentifyService).identify(m.newAuth(scope), { userId, anonymousId: unique('anon') });
  return { customerId: linked.serviceCustomerId, userId };
}

/**
 * Factory: the customer holds an active card subscription for 30 days (as the card rail leaves
 * it), and with `grants` the entitlement row it grants; what makes a merge of that customer move
 * rows. Answers the subscription id.
 */
export async function cardSubscriptionHeldBy(
  db: Db,
  scope: TenantScope,
  customerId: string,
  options: { subscriptionId?: string; grants?: string } = {},
): Promise<string> {
  const subscriptionId = options.subscriptionId ?? unique('sub');
  await db.query(
    `INSERT INTO rail_subscriptions (project_id, env, rail, subscription_id, customer_id, product_id, state, valid_until, rail_time_ms, raw_status, created_at, updated_at)
     VALUES ($1, $2, 'card_payments', $3, $4, 'price_pro', 'active', now() + interval '30 days', 1, 'active', now(), now())`,
    [scope.projectId, scope.env, subscriptionId, customerId],
  );
  if (options.grants !== undefined) {
    await db.query(
      `INSERT INTO entitlements (project_id, env, customer_id, entitlement_key, rail, product_id, subscription_id, state, valid_until, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'card_payments', 'price_pro', $5, 'active', date_trunc('second', now()) + interval '30 days', now(), now())`,
      [scope.projectId, scope.env, customerId, options.grants, subscriptionId],
    );
  }
  return subscriptionId;
}
