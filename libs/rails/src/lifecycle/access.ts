/**
 * Access by state (the States table): which states give access, until when, and the state a
 * subscription returns to when a refund or chargeback is reversed. Pure; times are Unix seconds.
 */
import type { Subscription, SubscriptionState } from './subscription.js';

/** Whether a state gives access at all (until `accessEndsAt`). */
const GIVES_ACCESS: Record<SubscriptionState, boolean> = {
  active: true,
  trialing: true,
  in_grace_period: true,
  in_billing_retry: true,
  on_hold: false,
  paused: true,
  expired: false,
  refunded: false,
};

export function stateGivesAccess(state: SubscriptionState): boolean {
  return GIVES_ACCESS[state];
}

/** States in which a subscription has ended; a later purchase on the same rail id is a new start. */
export function hasEnded(state: SubscriptionState): boolean {
  return state === 'expired' || state === 'refunded';
}

/** `isActive`: the state gives access and `accessEndsAt` (null = lifetime) is still ahead at `nowSeconds`. */
export function isActiveAt(subscription: Pick<Subscription, 'state' | 'accessEndsAt'>, nowSeconds: number): boolean {
  return stateGivesAccess(subscription.state) && (subscription.accessEndsAt === null || nowSeconds < subscription.accessEndsAt);
}

/**
 * `accessEndsAt` of a state that gives access: the current period's end (active, trialing,
 * paused), the grace period's end, or in billing retry the end of the last paid period
 * (`paidThrough`: the rail says where it lies).
 */
export function accessEndOf(
  state: SubscriptionState,
  fields: Pick<Subscription, 'currentPeriodEndsAt' | 'gracePeriodEndsAt'>,
  paidThrough: number | null,
): number | null {
  if (state === 'in_grace_period') return fields.gracePeriodEndsAt;
  if (state === 'in_billing_retry') return paidThrough;
  return fields.currentPeriodEndsAt;
}

/** The access end of a state without access: access stopped at `at`, or earlier when it had already ended. */
export function accessStoppedAt(previousEnd: number | null, at: number): number {
  return previousEnd === null ? at : Math.min(previousEnd, at);
}

/**
 * The state a refunded subscription had before the refund, read from the fields a refund
 * leaves alone: ended, paused, in a billing problem (grace or retry), in a trial, or active.
 */
export function stateBeforeRefund(subscription: Subscription): SubscriptionState {
  if (subscription.expiredAt !== null) return 'expired';
  if (subscription.pausedAt !== null) return 'paused';
  if (subscription.billingIssueDetectedAt !== null) return subscription.gracePeriodEndsAt !== null ? 'in_grace_period' : 'in_billing_retry';
  return subscription.periodType === 'trial' ? 'trialing' : 'active';
}

/**
 * The subscription as it was before its refund or chargeback (`refundedAt` stays: it records
 * the latest refund). `paidThrough` is where a billing retry's access ends on this rail.
 */
export function restoredAfterReversal(subscription: Subscription, paidThrough: number | null): Subscription {
  const state = stateBeforeRefund(subscription);
  const ended = state === 'expired';
  return {
    ...subscription,
    state,
    expirationReason: subscription.expirationReason === 'refund' ? null : subscription.expirationReason,
    willRenew:
      !ended && state !== 'paused' && state !== 'in_billing_retry' && subscription.unsubscribeDetectedAt === null && subscription.kind === 'auto_renewing',
    accessEndsAt: ended ? subscription.expiredAt : accessEndOf(state, subscription, paidThrough),
  };
}

/** A subscription refunded, charged back or revoked at `at`: no access from then on. */
export function refundedAt(subscription: Subscription, at: number): Subscription {
  return {
    ...subscription,
    state: 'refunded',
    willRenew: false,
    refundedAt: at,
    expirationReason: subscription.expirationReason ?? 'refund',
    accessEndsAt: accessStoppedAt(subscription.accessEndsAt, at),
  };
}
