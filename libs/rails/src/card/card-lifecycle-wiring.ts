/**
 * Card payments: what a lifecycle outcome does to the rail record (access follows the
 * subscription's state) and which subscription an invoice, charge or dispute concerns. Pure.
 */
import { stateGivesAccess } from '../lifecycle/access.js';
import type { CardObject } from '../lifecycle/card-lifecycle.js';
import type { LedgerFact } from '../lifecycle/lifecycle-outcome.js';
import type { Subscription } from '../lifecycle/subscription.js';
import type { RailState, RailSubscriptionItem } from '../model/rail-model.js';
import type { RailMoneyReturn } from '../model/rail-revenue-feed.service.js';

type Ref = string | { id?: unknown } | null | undefined;
function refId(value: Ref): string | null {
  if (typeof value === 'string') return value || null;
  return typeof value?.id === 'string' && value.id ? value.id : null;
}

/** The rail record's part of a subscription: its state, items and end follow the subscription's access. */
export interface CardRecordAccess {
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
export function cardRecordAccess(subscription: Subscription, items: readonly RailSubscriptionItem[]): CardRecordAccess {
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

/** The subscription an invoice names (older API versions at the top, current ones under `parent`). */
export function invoiceSubscriptionId(object: CardObject): string | null {
  if (object.object !== 'invoice') return null;
  return refId(object.subscription as Ref) ?? refId(object.parent?.subscription_details?.subscription as Ref);
}

/** The charge and payment intent ids a charge or dispute names, to find the payment recorded from `invoice.paid`. */
export function paymentIdsOf(object: CardObject): string[] {
  if (object.object === 'charge') return [object.id, refId(object.payment_intent as Ref)].filter((id): id is string => id !== null);
  if (object.object === 'dispute') return [refId(object.charge as Ref), refId(object.payment_intent as Ref)].filter((id): id is string => id !== null);
  return [];
}

/** The card customer a charge or dispute names (a dispute's expanded charge), or null. */
export function cardCustomerOf(object: CardObject): string | null {
  if (object.object === 'charge' || object.object === 'invoice') return refId(object.customer as Ref);
  if (object.object === 'dispute' && object.charge && typeof object.charge === 'object') return refId(object.charge.customer as Ref);
  return null;
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
