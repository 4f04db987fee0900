/**
 * Pure: the outbound `subscription.*` events a rail state change yields, and why its
 * entitlements changed. No I/O.
 */
import type { RailState, RailSubscriptionRecord } from './rail-model.js';

/** Rail status words that mean a payment problem (card dunning, iOS billing retry, Android grace or hold). */
const BILLING_ISSUE_STATUSES = new Set([
  'past_due',
  'unpaid',
  'DID_FAIL_TO_RENEW',
  'GRACE_PERIOD_EXPIRED',
  'SUBSCRIPTION_IN_GRACE_PERIOD',
  'SUBSCRIPTION_ON_HOLD',
  'SUBSCRIPTION_STATE_IN_GRACE_PERIOD',
  'SUBSCRIPTION_STATE_ON_HOLD',
]);

export function isBillingIssue(rawStatus: string | null): boolean {
  return rawStatus !== null && BILLING_ISSUE_STATUSES.has(rawStatus);
}

/**
 * Whether the subscription renews at the end of its period, from the rail's status word:
 * card `… (cancel_at_period_end)`, iOS `DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED`, Android
 * `SUBSCRIPTION_STATE_CANCELED` (still active until its expiry) mean it does not.
 */
export function willRenew(state: RailState, rawStatus: string | null): boolean {
  if (state !== 'active') return false;
  const status = rawStatus ?? '';
  return !/cancel/i.test(status) && !status.endsWith('AUTO_RENEW_DISABLED');
}

export interface SubscriptionChangeFacts {
  /** `rawStatus` of the stored record, when known: turning auto-renew off or on is read from it. */
  stored: (Pick<RailSubscriptionRecord, 'state' | 'productId' | 'validUntil'> & { rawStatus?: string | null }) | null;
  next: { state: RailState; productId: string; validUntil: number | null; endedBy?: 'revoked' | 'expired'; rawStatus: string | null };
}

/** The `subscription.*` event types of one applied change (empty when nothing a receiver cares about changed). */
export function subscriptionEventTypes({ stored, next }: SubscriptionChangeFacts): string[] {
  const types: string[] = [];
  const wasActive = stored?.state === 'active';
  if (next.state === 'active') {
    if (!wasActive) types.push('subscription.started');
    else if ((next.validUntil ?? Infinity) > (stored?.validUntil ?? Infinity)) types.push('subscription.renewed');
    if (stored && wasActive && stored.productId !== next.productId) types.push('subscription.product_changed');
    if (isBillingIssue(next.rawStatus)) types.push('subscription.billing_issue');
    types.push(...renewalEventTypes({ stored, next }));
  } else if (wasActive || !stored) {
    if (next.endedBy === 'revoked') types.push('subscription.refunded');
    else if (isBillingIssue(next.rawStatus)) types.push('subscription.billing_issue', 'subscription.expired');
    else types.push('subscription.expired');
  }
  return types;
}

/** Why a key changed with this rail change. */
export function railChangeCause(
  change: 'activated' | 'extended' | 'deactivated',
  next: SubscriptionChangeFacts['next'],
): 'purchase' | 'renewal' | 'refund' | 'expiration' | 'billing_issue' {
  if (change === 'activated') return 'purchase';
  if (change === 'extended') return 'renewal';
  if (next.endedBy === 'revoked') return 'refund';
  return isBillingIssue(next.rawStatus) ? 'billing_issue' : 'expiration';
}

/**
 * `subscription.canceled` (auto-renew turned off, still active) or `subscription.uncanceled`
 * (turned on again) when a subscription that stays active changes its renewal; empty
 * otherwise. A notification that changes nothing else yields only these.
 */
export function renewalEventTypes({ stored, next }: SubscriptionChangeFacts): string[] {
  if (stored?.state !== 'active' || next.state !== 'active' || stored.rawStatus === undefined) return [];
  const before = willRenew(stored.state, stored.rawStatus);
  const after = willRenew(next.state, next.rawStatus);
  if (before === after) return [];
  return [after ? 'subscription.uncanceled' : 'subscription.canceled'];
}
