/**
 * Card payments: the subscription after one processor event (subscription, invoice, charge or
 * dispute object), with its events and ledger facts. Pure. The object types name only the
 * fields read, in the shapes of every processor API version in use (the period on the items or
 * on the subscription; the invoice's charge at the top or under `payments`), so the
 * processor library's own objects fit them.
 */
import { RailFieldError } from '../model/rail-bounds.js';
import { accessEndOf, accessStoppedAt, refundedAt, restoredAfterReversal } from './access.js';
import { type LedgerFact, type LifecycleContext, type LifecycleResult, type Settlement, noOp, settle, toSeconds } from './lifecycle-outcome.js';
import { cardMoney, checkMicros } from './money.js';
import type { ExpirationReason, Money, Subscription } from './subscription.js';

/** An expandable reference: the id, or the expanded object. */
type Ref = string | { id: string } | null | undefined;

export interface CardPrice {
  product?: Ref;
  unit_amount?: number | null;
  currency?: string;
}

export interface CardSubscriptionItemObject {
  price?: CardPrice | null;
  quantity?: number | null;
  current_period_start?: number | null;
  current_period_end?: number | null;
}

export interface CardSubscriptionObject {
  object: 'subscription';
  id: string;
  status: string;
  customer?: Ref;
  livemode?: boolean;
  items?: { data: CardSubscriptionItemObject[] } | null;
  current_period_start?: number | null;
  current_period_end?: number | null;
  trial_end?: number | null;
  start_date?: number | null;
  created?: number | null;
  cancel_at_period_end?: boolean | null;
  cancel_at?: number | null;
  canceled_at?: number | null;
  ended_at?: number | null;
  cancellation_details?: { reason?: string | null } | null;
  pause_collection?: { resumes_at?: number | null } | null;
  schedule?: string | { id: string; phases?: { start_date?: number | null; items?: { price?: Ref }[] | null }[] | null } | null;
}

export interface CardInvoiceObject {
  object: 'invoice';
  id?: string;
  customer?: Ref;
  amount_paid?: number | null;
  currency?: string;
  /** Older API versions. */
  subscription?: Ref;
  charge?: Ref;
  payment_intent?: Ref;
  /** Current API versions. */
  parent?: { subscription_details?: { subscription?: Ref } | null } | null;
  payments?: { data?: { payment?: { charge?: Ref; payment_intent?: Ref } | null }[] } | null;
  status_transitions?: { paid_at?: number | null } | null;
  lines?: { data?: { period?: { start?: number | null } | null }[] } | null;
}

export interface CardChargeObject {
  object: 'charge';
  id: string;
  customer?: Ref;
  amount_refunded?: number | null;
  currency?: string;
  payment_intent?: Ref;
}

export interface CardDisputeObject {
  object: 'dispute';
  id: string;
  amount?: number | null;
  currency?: string;
  status?: string;
  charge?: string | { id: string; customer?: Ref } | null;
  payment_intent?: Ref;
}

export type CardObject = CardSubscriptionObject | CardInvoiceObject | CardChargeObject | CardDisputeObject;

export interface CardLifecycleInput {
  /** The event's `id`, `type`, `created` (Unix s, the rail time) and `livemode`. */
  eventId: string;
  eventType: string;
  created: number;
  livemode: boolean;
  /** `data.object`. */
  object: CardObject;
  /** `data.previous_attributes`, when the event carries them. */
  previousAttributes?: { amount_refunded?: number | null } | null;
  /** charge.refunded: what the ledger already holds as refunded of this charge (minor units), when the event names no previous amount. */
  refundedBeforeMinor?: number | null;
  /** A dispute that no subscription could be linked to: the card customer of its charge, read by the caller. */
  chargeCustomerId?: string | null;
}

/** The card rail's settings the lifecycle reads. */
export interface CardLifecycleSettings {
  /** Days of access after a failed renewal while the processor retries (0–30). */
  gracePeriodDays: number;
}

export const CARD_GRACE_PERIOD_DAYS_MAX = 30;

/** The rail setting `gracePeriodDays`: an integer 0–30, 0 when absent; anything else a RailFieldError naming it. */
export function cardGracePeriodDays(value: unknown): number {
  if (value === undefined || value === null) return 0;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > CARD_GRACE_PERIOD_DAYS_MAX)
    throw new RailFieldError('gracePeriodDays', `must be an integer between 0 and ${CARD_GRACE_PERIOD_DAYS_MAX}`);
  return value;
}
const DAY_SECONDS = 86_400;
const OBJECT = 'data.object';
const SUBSCRIPTION_EVENTS = new Set([
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'customer.subscription.paused',
  'customer.subscription.resumed',
]);
const BILLING_ERROR_STATUSES = new Set(['unpaid', 'incomplete_expired']);

const refId = (value: Ref): string | null => (typeof value === 'string' ? value : (value?.id ?? null));
const int = (value: number | null | undefined): number | null => (typeof value === 'number' && Number.isFinite(value) ? Math.floor(value) : null);

/** `cancellation_details.reason`: `cancellation_requested` → unsubscribe, `payment_failed` → billing_error, else unknown. */
export function cardCancelReason(reason: string | null | undefined): ExpirationReason {
  if (reason === 'cancellation_requested') return 'unsubscribe';
  if (reason === 'payment_failed') return 'billing_error';
  return 'unknown';
}

/** The sum of the items' `unit_amount` × `quantity` in the first priced item's currency (null when no item has a fixed price). */
export function cardSubscriptionPrice(items: readonly CardSubscriptionItemObject[]): Money | null {
  let total: Money | null = null;
  items.forEach((item, index) => {
    const price = item.price;
    const money = cardMoney(price?.unit_amount, price?.currency, `${OBJECT}.items.data[${index}].price.unit_amount`, item.quantity ?? 1);
    if (!money || (total && total.currency !== money.currency)) return;
    total = { currency: money.currency, amountMicros: checkMicros((total?.amountMicros ?? 0) + money.amountMicros, `${OBJECT}.items.data`) };
  });
  return total;
}

function scheduledProduct(subscription: CardSubscriptionObject, productId: string, now: number): string | null {
  const schedule = subscription.schedule;
  if (!schedule || typeof schedule === 'string') return null;
  const next = (schedule.phases ?? []).find((phase) => (phase.start_date ?? 0) > now);
  const price = next?.items?.[0]?.price;
  const product = price && typeof price === 'object' && 'product' in price ? refId((price as CardPrice).product) : null;
  return product && product !== productId ? product : null;
}

/** The grace or retry state of a renewal that failed after the paid period ended at `paidThrough`. */
function billingTrouble(
  base: Subscription,
  paidThroughStated: number | null,
  detectedAt: number,
  settings: CardLifecycleSettings,
  nowSeconds: number,
): Subscription {
  // Without a period start the paid period is known to have ended by the first sign of the problem at the latest.
  const paidThrough = paidThroughStated ?? detectedAt;
  const days = Math.min(Math.max(Math.floor(settings.gracePeriodDays), 0), CARD_GRACE_PERIOD_DAYS_MAX);
  const graceEnd = days > 0 ? paidThrough + days * DAY_SECONDS : null;
  const billingIssueDetectedAt = base.billingIssueDetectedAt ?? detectedAt;
  if (graceEnd !== null && nowSeconds < graceEnd)
    return { ...base, state: 'in_grace_period', billingIssueDetectedAt, gracePeriodEndsAt: graceEnd, accessEndsAt: graceEnd };
  return {
    ...base,
    state: 'in_billing_retry',
    willRenew: false,
    billingIssueDetectedAt,
    gracePeriodEndsAt: null,
    accessEndsAt: accessEndOf('in_billing_retry', base, paidThrough),
  };
}

function fromSubscription(
  previous: Subscription | null,
  sub: CardSubscriptionObject,
  input: CardLifecycleInput,
  settings: CardLifecycleSettings,
  ctx: LifecycleContext,
): Subscription | null {
  const items = sub.items?.data ?? [];
  const productId = refId(items[0]?.price?.product);
  if (!productId) return null;
  const created = input.created;
  const periodStart = int(items[0]?.current_period_start) ?? int(sub.current_period_start);
  const ends = items.map((item) => int(item.current_period_end)).filter((end): end is number => end !== null);
  const periodEnd = ends.length > 0 ? Math.max(...ends) : int(sub.current_period_end);
  const trialing = sub.status === 'trialing';
  const price = cardSubscriptionPrice(items);
  const canceling = sub.cancel_at_period_end === true || int(sub.cancel_at) !== null;
  const keys = new Set(items.flatMap((item) => ctx.entitlementKeysOf(refId(item.price?.product) ?? '')));
  const currentPeriodEndsAt = trialing ? (int(sub.trial_end) ?? periodEnd) : periodEnd;
  // Without a stated period start, the period keeps the purchase time first seen.
  const purchasedAt = periodStart ?? previous?.purchasedAt ?? created;
  const base: Subscription = {
    object: 'subscription',
    id: sub.id,
    rail: 'card_payments',
    productId,
    entitlementKeys: [...keys],
    kind: 'auto_renewing',
    state: trialing ? 'trialing' : 'active',
    periodType: trialing ? 'trial' : 'normal',
    willRenew: !canceling,
    isActive: false,
    purchasedAt,
    originalPurchasedAt: previous?.originalPurchasedAt ?? int(sub.start_date) ?? int(sub.created) ?? purchasedAt,
    currentPeriodStartsAt: periodStart,
    currentPeriodEndsAt,
    accessEndsAt: currentPeriodEndsAt,
    unsubscribeDetectedAt: canceling ? (previous?.unsubscribeDetectedAt ?? int(sub.canceled_at) ?? created) : null,
    billingIssueDetectedAt: null,
    gracePeriodEndsAt: null,
    pausedAt: null,
    autoResumeAt: null,
    expiredAt: null,
    expirationReason: canceling ? cardCancelReason(sub.cancellation_details?.reason) : null,
    refundedAt: previous?.refundedAt ?? null,
    ownershipType: 'purchased',
    pendingProductId: scheduledProduct(sub, productId, created),
    offer: null,
    price: trialing && price ? { amountMicros: 0, currency: price.currency } : price,
    priceChange: null,
    storeEnvironment: (sub.livemode ?? input.livemode) ? 'production' : 'sandbox',
    updatedAt: previous?.updatedAt ?? 0,
  };
  return shapeByStatus(previous, base, sub, input, settings, ctx);
}

function shapeByStatus(
  previous: Subscription | null,
  base: Subscription,
  sub: CardSubscriptionObject,
  input: CardLifecycleInput,
  settings: CardLifecycleSettings,
  ctx: LifecycleContext,
): Subscription | null {
  const created = input.created;
  if (BILLING_ERROR_STATUSES.has(sub.status)) {
    const expiredAt = accessStoppedAt(previous?.accessEndsAt ?? base.currentPeriodStartsAt, created);
    return {
      ...base,
      state: 'expired',
      willRenew: false,
      expiredAt,
      accessEndsAt: expiredAt,
      expirationReason: 'billing_error',
      billingIssueDetectedAt: previous?.billingIssueDetectedAt ?? created,
    };
  }
  if (input.eventType === 'customer.subscription.deleted' || sub.status === 'canceled') {
    const expiredAt = accessStoppedAt(base.currentPeriodEndsAt, int(sub.ended_at) ?? created);
    const reason = cardCancelReason(sub.cancellation_details?.reason);
    return { ...base, state: 'expired', willRenew: false, expiredAt, accessEndsAt: expiredAt, expirationReason: reason };
  }
  if (sub.pause_collection || sub.status === 'paused') {
    const accessEndsAt = previous?.state === 'paused' ? previous.accessEndsAt : base.currentPeriodEndsAt;
    return {
      ...base,
      state: 'paused',
      willRenew: false,
      pausedAt: previous?.pausedAt ?? created,
      autoResumeAt: int(sub.pause_collection?.resumes_at),
      accessEndsAt,
    };
  }
  if (sub.status === 'past_due') {
    const detectedAt = previous?.billingIssueDetectedAt ?? created;
    return billingTrouble({ ...base, billingIssueDetectedAt: detectedAt }, base.currentPeriodStartsAt, detectedAt, settings, toSeconds(ctx.nowMs));
  }
  if (sub.status === 'active' || sub.status === 'trialing') return base;
  return null;
}

/**
 * A subscription refunded or charged back stays so while the processor still bills the same
 * period (the processor does not end a disputed subscription by itself); a later paid period
 * or its end applies.
 */
function keepsChargeback(previous: Subscription | null, next: Subscription, periodMoved: boolean): boolean {
  return previous?.state === 'refunded' && !periodMoved && next.state !== 'expired';
}

function subscriptionEvent(
  previous: Subscription | null,
  input: CardLifecycleInput,
  sub: CardSubscriptionObject,
  settings: CardLifecycleSettings,
  ctx: LifecycleContext,
): LifecycleResult {
  const derived = fromSubscription(previous, sub, input, settings, ctx);
  if (!derived) return noOp(previous, input.eventType, `Subscription status ${sub.status} changes nothing`);
  // A later period start; where either start is unknown, a later period end.
  const periodMoved =
    previous !== null &&
    (derived.currentPeriodStartsAt !== null && previous.currentPeriodStartsAt !== null
      ? derived.currentPeriodStartsAt > previous.currentPeriodStartsAt
      : (derived.currentPeriodEndsAt ?? 0) > (previous.currentPeriodEndsAt ?? 0));
  const next = keepsChargeback(previous, derived, periodMoved)
    ? { ...derived, state: previous!.state, willRenew: false, accessEndsAt: previous!.accessEndsAt }
    : derived;
  const converted = previous?.state === 'trialing' && next.state === 'active';
  return settle(previous, next, ctx.nowMs, {
    recordedType: input.eventType,
    reason: `Subscription ${sub.status}`,
    hints: { newPaidPeriod: (periodMoved || converted) && next.state === 'active', productChangeEffective: 'immediate' },
  });
}

function invoiceSubscription(invoice: CardInvoiceObject): string | null {
  return refId(invoice.subscription) ?? refId(invoice.parent?.subscription_details?.subscription);
}

function invoicePaid(previous: Subscription | null, input: CardLifecycleInput, invoice: CardInvoiceObject, ctx: LifecycleContext): LifecycleResult {
  const money = cardMoney(invoice.amount_paid, invoice.currency, `${OBJECT}.amount_paid`);
  const payment = invoice.payments?.data?.find((entry) => entry.payment)?.payment ?? null;
  const ledger: LedgerFact[] =
    money && money.amountMicros > 0
      ? [
          {
            kind: 'payment',
            ...money,
            railTimeMs: (int(invoice.status_transitions?.paid_at) ?? input.created) * 1000,
            transactionId: invoice.id ?? null,
            chargeId: refId(invoice.charge) ?? refId(payment?.charge),
            paymentIntentId: refId(invoice.payment_intent) ?? refId(payment?.payment_intent),
            recurring: invoiceSubscription(invoice) !== null,
          },
        ]
      : [];
  const settlement: Settlement = { recordedType: input.eventType, reason: 'Invoice paid', ledger };
  if (!previous)
    return ledger.length > 0
      ? { decision: 'applied', subscription: null, events: [], ledger, recordedType: input.eventType, reason: settlement.reason }
      : noOp(null, input.eventType, 'Nothing paid');
  if (previous.billingIssueDetectedAt === null || previous.state === 'expired' || previous.state === 'refunded')
    return settle(previous, previous, ctx.nowMs, settlement);
  const next: Subscription = {
    ...previous,
    state: 'active',
    billingIssueDetectedAt: null,
    gracePeriodEndsAt: null,
    willRenew: previous.unsubscribeDetectedAt === null,
    accessEndsAt: previous.currentPeriodEndsAt,
  };
  return settle(previous, next, ctx.nowMs, { ...settlement, reason: 'Invoice paid; billing problem over' });
}

function invoicePaymentFailed(
  previous: Subscription | null,
  input: CardLifecycleInput,
  invoice: CardInvoiceObject,
  settings: CardLifecycleSettings,
  ctx: LifecycleContext,
): LifecycleResult {
  if (!previous || invoiceSubscription(invoice) === null) return noOp(previous, input.eventType, 'No subscription to mark');
  if (previous.billingIssueDetectedAt !== null || previous.state === 'expired' || previous.state === 'refunded' || previous.state === 'paused')
    return noOp(previous, input.eventType, 'Billing problem already known');
  const paidThrough = int(invoice.lines?.data?.[0]?.period?.start) ?? previous.currentPeriodStartsAt;
  const next = billingTrouble(previous, paidThrough, input.created, settings, toSeconds(ctx.nowMs));
  return settle(previous, next, ctx.nowMs, { recordedType: input.eventType, reason: 'Invoice payment failed' });
}

function chargeRefunded(previous: Subscription | null, input: CardLifecycleInput, charge: CardChargeObject, ctx: LifecycleContext): LifecycleResult {
  const refunded = int(charge.amount_refunded) ?? 0;
  const before = int(input.previousAttributes?.amount_refunded) ?? int(input.refundedBeforeMinor) ?? 0;
  if (refunded <= before) return noOp(previous, input.eventType, 'No new refund');
  const money = cardMoney(refunded - before, charge.currency, `${OBJECT}.amount_refunded`);
  if (!money) throw new RailFieldError(`${OBJECT}.currency`, 'must be an ISO 4217 currency code');
  const ledger: LedgerFact[] = [
    {
      kind: 'refund',
      ...money,
      railTimeMs: input.created * 1000,
      transactionId: charge.id,
      chargeId: charge.id,
      paymentIntentId: refId(charge.payment_intent),
      cardCustomerId: refId(charge.customer),
    },
  ];
  if (!previous)
    return {
      decision: 'applied',
      subscription: null,
      events: [],
      ledger,
      recordedType: input.eventType,
      reason: 'Refund of a charge of no known subscription',
    };
  return settle(previous, { ...previous, refundedAt: input.created }, ctx.nowMs, {
    recordedType: input.eventType,
    reason: 'Charge refunded',
    ledger,
    extraEvents: [{ type: 'subscription.refunded', reason: 'refund', ...money }],
  });
}

function disputeFact(kind: 'chargeback' | 'reversal', input: CardLifecycleInput, dispute: CardDisputeObject): LedgerFact {
  const money = cardMoney(dispute.amount, dispute.currency, `${OBJECT}.amount`);
  if (!money) throw new RailFieldError(`${OBJECT}.amount`, 'must be an integer of the currency minor unit with its currency');
  const charge = dispute.charge;
  return {
    kind,
    ...money,
    railTimeMs: input.created * 1000,
    transactionId: dispute.id,
    chargeId: refId(charge),
    paymentIntentId: refId(dispute.payment_intent),
    cardCustomerId: (typeof charge === 'object' && charge ? refId(charge.customer) : null) ?? input.chargeCustomerId ?? null,
  };
}

function disputeCreated(previous: Subscription | null, input: CardLifecycleInput, dispute: CardDisputeObject, ctx: LifecycleContext): LifecycleResult {
  const fact = disputeFact('chargeback', input, dispute);
  if (!previous)
    return {
      decision: 'applied',
      subscription: null,
      events: [],
      ledger: [fact],
      recordedType: input.eventType,
      reason: 'Chargeback of the customer; no subscription linked',
    };
  return settle(previous, refundedAt(previous, input.created), ctx.nowMs, {
    recordedType: input.eventType,
    reason: 'Charged back',
    ledger: [fact],
    extraEvents: [{ type: 'subscription.refunded', reason: 'chargeback', amountMicros: fact.amountMicros, currency: fact.currency }],
  });
}

function disputeClosed(previous: Subscription | null, input: CardLifecycleInput, dispute: CardDisputeObject, ctx: LifecycleContext): LifecycleResult {
  if (dispute.status !== 'won') return noOp(previous, input.eventType, `Dispute closed (${dispute.status ?? 'unknown'})`);
  const fact = disputeFact('reversal', input, dispute);
  if (!previous || previous.state !== 'refunded')
    return { decision: 'applied', subscription: previous, events: [], ledger: [fact], recordedType: input.eventType, reason: 'Chargeback reversed' };
  return settle(previous, restoredAfterReversal(previous, previous.currentPeriodStartsAt), ctx.nowMs, {
    recordedType: input.eventType,
    reason: 'Dispute won; chargeback reversed',
    ledger: [fact],
    extraEvents: [{ type: 'subscription.refund_reversed', amountMicros: fact.amountMicros, currency: fact.currency }],
  });
}

/**
 * The subscription after one card event. `previous` is the subscription the event concerns (for
 * invoices, charges and disputes: the one linked through the recorded payment), or null. Event
 * types and statuses it cannot place change nothing (`no_op`). Throws RailFieldError when an
 * amount is out of bounds.
 */
export function deriveCardLifecycle(
  previous: Subscription | null,
  input: CardLifecycleInput,
  settings: CardLifecycleSettings,
  ctx: LifecycleContext,
): LifecycleResult {
  const object = input.object;
  if (SUBSCRIPTION_EVENTS.has(input.eventType) && object.object === 'subscription') return subscriptionEvent(previous, input, object, settings, ctx);
  if (input.eventType === 'invoice.paid' && object.object === 'invoice') return invoicePaid(previous, input, object, ctx);
  if (input.eventType === 'invoice.payment_failed' && object.object === 'invoice') return invoicePaymentFailed(previous, input, object, settings, ctx);
  if (input.eventType === 'charge.refunded' && object.object === 'charge') return chargeRefunded(previous, input, object, ctx);
  if (input.eventType === 'charge.dispute.created' && object.object === 'dispute') return disputeCreated(previous, input, object, ctx);
  if (input.eventType === 'charge.dispute.closed' && object.object === 'dispute') return disputeClosed(previous, input, object, ctx);
  return noOp(previous, input.eventType, `${input.eventType} changes no subscription`);
}
