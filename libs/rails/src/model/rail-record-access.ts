/**
 * What a lifecycle outcome does to a rail record: access follows the subscription's state.
 * Pure; shared by the rails that derive the subscription object.
 */
import { stateGivesAccess } from '../lifecycle/access.js';
import type { LedgerFact } from '../lifecycle/lifecycle-outcome.js';
import type { Subscription } from '../lifecycle/subscription.js';
import type { RailMoneyReturn } from './rail-revenue-feed.service.js';
import type { RailState, RailSubscriptionItem } from './rail-model.js';

/** The rail record's part of a subscription: its state, items and end follow the subscription's access. */
export interface RecordAccess {
  state: RailState;
  endedBy: 'revoked' | 'expired';
  items: RailSubscriptionItem[];
  validUntil: number | null;
  /** What the revenue ledger counts: paying states only (never a trial, a billing retry, a pause). */
  revenueState: RailState;
}

/**
 * Access follows state: a state that gives access grants every item until the subscription's
 * `accessEndsAt` (an item that ends earlier, at its own end); a state without access ends
 * every item at `accessEndsAt`.
 */
export function recordAccessOf(subscription: Subscription, items: readonly RailSubscriptionItem[]): RecordAccess {
  const gives = stateGivesAccess(subscription.state);
  const end = subscription.accessEndsAt;
  const capped = items.map((item) => {
    if (end === null) return { ...item };
    const own = subscription.state === 'active' || subscription.state === 'trialing' ? (item.validUntil ?? end) : end;
    return { productId: item.productId, validUntil: Math.min(own, end) };
  });
  const validUntil = capped.some((item) => item.validUntil === null) ? null : Math.max(...capped.map((item) => item.validUntil as number));
  const paying = gives && (subscription.state === 'active' || subscription.state === 'in_grace_period');
  return {
    state: gives ? 'active' : 'inactive',
    endedBy: subscription.state === 'refunded' ? 'revoked' : 'expired',
    items: capped,
    validUntil,
    revenueState: paying ? 'active' : 'inactive',
  };
}

/** A refund, chargeback or reversal fact as the revenue ledger counts it; null for payments (counted from the invoice) and facts without an amount. */
export function moneyReturnOf(fact: LedgerFact, eventId: string, subscriptionId: string | null): RailMoneyReturn | null {
  if (fact.kind === 'payment' || fact.amountMicros === null || fact.currency === null || fact.amountMicros <= 0) return null;
  const factId = fact.kind === 'refund' ? `refund:${eventId}` : `${fact.kind}:${fact.transactionId ?? eventId}`;
  return {
    kind: fact.kind,
    factId,
    transactionId: fact.transactionId,
    subscriptionId,
    currency: fact.currency,
    amount: { micros: fact.amountMicros },
    occurredAtMs: fact.railTimeMs,
  };
}

/**
 * An App Store refund, chargeback or reversal as the revenue ledger counts it: keyed by the
 * refunded transaction (`refund:<transactionId>`), so the REFUND notification and a read or
 * purchase sync that finds the transaction revoked first count it once, whichever comes first.
 * `eventId` keys a fact that names no transaction.
 */
export function iosMoneyReturnOf(fact: LedgerFact, eventId: string, subscriptionId: string): RailMoneyReturn | null {
  return moneyReturnOf(fact, fact.transactionId ?? eventId, subscriptionId);
}
