/**
 * Pure: the outbound `subscription.*` events a rail state change yields, and why its
 * entitlements changed. No I/O.
 */
import type { LifecycleEvent } from '../lifecycle/lifecycle-outcome.js';
import type { Subscription } from '../lifecycle/subscription.js';
import type { RailState, RailSubscriptionRecord } from './rail-model.js';

/** Rail status words that mean a payment problem (card dunning, iOS billing retry, Android grace or hold). */
export const BILLING_ISSUE_STATUSES: ReadonlySet<string> = new Set([
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
 * iOS status words that say nothing about auto-renew: purchase sync's transaction types and
 * notifications about something else (plan preference, offers, billing, one-time charges).
 */
const RENEWAL_SILENT =
  /^(DID_CHANGE_RENEWAL_PREF|OFFER_REDEEMED|DID_FAIL_TO_RENEW|ONE_TIME_CHARGE|TRANSACTION$|Auto-Renewable|Non-Renewing|Non-Consumable|Consumable)/;

/**
 * What a rail's status word says about auto-renew: `off` (card `… (cancel_at_period_end)`, iOS
 * `DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED`, Android `SUBSCRIPTION_STATE_CANCELED`, still
 * active until its end), `turned_on` (iOS `AUTO_RENEW_ENABLED`: it was off), `on` (any other card
 * or Android status, iOS `SUBSCRIBED`, `DID_RENEW`), or null when it says nothing.
 */
export function renewalIntent(rawStatus: string | null): 'off' | 'on' | 'turned_on' | null {
  if (rawStatus === null) return null;
  if (/cancel/i.test(rawStatus) || rawStatus.endsWith('AUTO_RENEW_DISABLED')) return 'off';
  if (rawStatus.endsWith('AUTO_RENEW_ENABLED')) return 'turned_on';
  return RENEWAL_SILENT.test(rawStatus) ? null : 'on';
}

/** `willRenew` of the events: active and auto-renew not known to be off. */
export function willRenew(state: RailState, rawStatus: string | null): boolean {
  return state === 'active' && renewalIntent(rawStatus) !== 'off';
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

/** Why a key changed with a change the subscription lifecycle derived. */
export type LifecycleChangeCause = ReturnType<typeof railChangeCause> | 'pause' | 'chargeback' | 'extension' | 'product_change' | 'refund_reversed';

/**
 * Why keys moved with a lifecycle change, read from its events: a reversed refund or chargeback
 * (`refund_reversed`), a product change (`product_change`), an extension without payment
 * (`extension`), a chargeback (`chargeback`), a refund or revoke (`refund`), a pause (`pause`),
 * a billing problem (`billing_issue`); otherwise what the record's change says.
 */
export function lifecycleChangeCauses(
  events: readonly LifecycleEvent[],
  next: SubscriptionChangeFacts['next'],
): Record<'activated' | 'extended' | 'deactivated', LifecycleChangeCause> {
  const has = (type: LifecycleEvent['type']) => events.some((event) => event.type === type);
  const refund = events.find((event) => event.type === 'subscription.refunded');
  const expired = events.find((event) => event.type === 'subscription.expired');
  const productChanged = has('subscription.product_changed');
  const deactivated = (): LifecycleChangeCause => {
    if (refund) return refund.reason === 'chargeback' ? 'chargeback' : 'refund';
    if (has('subscription.paused')) return 'pause';
    if (productChanged) return 'product_change';
    if (has('subscription.billing_issue') || expired?.expirationReason === 'billing_error') return 'billing_issue';
    return railChangeCause('deactivated', next);
  };
  return {
    activated: has('subscription.refund_reversed') ? 'refund_reversed' : productChanged ? 'product_change' : railChangeCause('activated', next),
    extended: has('subscription.extended') ? 'extension' : productChanged ? 'product_change' : railChangeCause('extended', next),
    deactivated: deactivated(),
  };
}

/**
 * `subscription.canceled` (auto-renew turned off, still active) or `subscription.uncanceled`
 * (turned on again) when a subscription that stays active changes its renewal; empty
 * otherwise, also when the new status word says nothing about renewal (an iOS purchase sync).
 * A notification that changes nothing else yields only these.
 */
export function renewalEventTypes({ stored, next }: SubscriptionChangeFacts): string[] {
  if (stored?.state !== 'active' || next.state !== 'active' || stored.rawStatus === undefined) return [];
  const before = renewalIntent(stored.rawStatus);
  const after = renewalIntent(next.rawStatus);
  if (after === 'off') return before === 'off' ? [] : ['subscription.canceled'];
  if (after === 'turned_on') return before === 'on' || before === 'turned_on' ? [] : ['subscription.uncanceled'];
  if (after === 'on') return before === 'off' ? ['subscription.uncanceled'] : [];
  return [];
}

/**
 * `subscription.transferred`: a subscription moved to another customer (a rail-only customer
 * folded into a named one, a merge approved), with the subscription as it stands and the flat
 * fields filled from it; `railEventId` null (no rail event moved it).
 */
export function transferredEvent(
  record: Pick<RailSubscriptionRecord, 'rail' | 'subscriptionId' | 'productId'>,
  subscription: Subscription,
  fromCustomerId: string,
  intoCustomerId: string,
  auditEventId: string,
): { type: 'subscription.transferred'; data: Record<string, unknown> } {
  return {
    type: 'subscription.transferred',
    data: {
      serviceCustomerId: intoCustomerId,
      rail: record.rail,
      subscriptionId: record.subscriptionId,
      productId: subscription.productId,
      state: subscription.state,
      validUntil: subscription.accessEndsAt,
      willRenew: subscription.willRenew,
      priceMicros: subscription.price?.amountMicros ?? null,
      currency: subscription.price?.currency ?? null,
      subscription,
      railEventId: null,
      auditEventId,
      fromServiceCustomerId: fromCustomerId,
    },
  };
}
