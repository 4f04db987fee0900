import type { TenantScope } from '#platform';
import { IdentifyService } from '#identity';
import type { MediumContext } from '../medium.js';
import { unique } from '../medium.js';
import { seedRailSubscription } from './subscriptions.js';

/** Identity for tests: customers through the identify service where it can make them, and the few situations it cannot, by name. */

type Db = Pick<MediumContext['dataSource'], 'query'>;

/** Factory: a customer of the scope known by a developer user id (and a device), through identify; answers both ids. */
export async function customerWithUserId(m: MediumContext, scope: TenantScope): Promise<{ customerId: string; userId: string }> {
  const userId = unique('user');
  const linked = await m.get(IdentifyService).identify(m.newAuth(scope), { userId, anonymousId: unique('anon') });
  return { customerId: linked.serviceCustomerId, userId };
}

export interface HeldSubscription {
  subscriptionId?: string;
  /** `card_payments` unless told. */
  rail?: string;
  productId?: string;
  /** The folded state (`active` unless told) and the store's own status (`active` unless told). */
  state?: string;
  rawStatus?: string;
  /** An entitlement key the subscription grants: its active row is written beside it. */
  grants?: string;
}

/**
 * Factory: the customer holds a subscription valid for 30 days more, as a rail leaves it after
 * its notifications (an active card subscription unless told); with `grants`, the entitlement row
 * it grants. What makes a merge move rows and a customer list show plans. Answers its id.
 */
export async function subscriptionHeldBy(db: Db, scope: TenantScope, customerId: string, options: HeldSubscription = {}): Promise<string> {
  const rail = options.rail ?? 'card_payments';
  const productId = options.productId ?? 'price_pro';
  const subscriptionId = await seedRailSubscription(db, scope, customerId, {
    id: options.subscriptionId ?? unique('sub'),
    rail,
    product: productId,
    state: options.state,
    raw: options.rawStatus,
  });
  if (options.grants !== undefined) {
    await db.query(
      `INSERT INTO entitlements (project_id, env, customer_id, entitlement_key, rail, product_id, subscription_id, state, valid_until, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'active', date_trunc('second', now()) + interval '30 days', now(), now())`,
      [scope.projectId, scope.env, customerId, options.grants, rail, productId, subscriptionId],
    );
  }
  return subscriptionId;
}

/**
 * Factory: the project's identity provider names this JWKS URI, as if stored before the address
 * rule, or its name later moved to a private address (the operator API refuses such a URI now).
 */
export async function identityProviderStoredWith(db: Db, projectId: string, provider: { issuer: string; audience: string; jwksUri: string }): Promise<void> {
  await db.query(`INSERT INTO identity_providers (project_id, issuer, audience, jwks, jwks_uri, updated_at) VALUES ($1, $2, $3, NULL, $4, now())`, [
    projectId,
    provider.issuer,
    provider.audience,
    provider.jwksUri,
  ]);
}
