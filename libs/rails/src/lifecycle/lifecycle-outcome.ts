/**
 * What one rail notification or read does to a subscription: the next subscription object, the
 * events to announce, the ledger facts and the decision. The events that follow from comparing
 * the object before and after (started, canceled, billing issue, …) are derived here once for
 * every rail; the rails add what only they know (a new paid period, a refund's amount). Pure.
 */
import { hasEnded, isActiveAt, stateGivesAccess } from './access.js';
import type { ExpirationReason, PeriodType, PriceChange, Subscription } from './subscription.js';

/** `reason` of `subscription.canceled` / `.uncanceled`. */
export type CancelReason = 'unsubscribe' | 'billing_error' | 'developer_initiated' | 'price_increase' | 'customer_support' | 'unknown';
/** `reason` of `subscription.refunded`. */
export type RefundReason = 'refund' | 'chargeback' | 'family_revoked';

export type LifecycleEvent =
  | { type: 'subscription.started'; periodType: PeriodType; isTrialStart: boolean }
  | { type: 'subscription.renewed'; isTrialConversion: boolean }
  | { type: 'subscription.recovered'; billingIssueDetectedAt: number }
  | { type: 'subscription.canceled'; reason: CancelReason }
  | { type: 'subscription.uncanceled'; reason: CancelReason }
  | { type: 'subscription.billing_issue'; gracePeriodEndsAt: number | null }
  | { type: 'subscription.paused'; autoResumeAt: number | null }
  | { type: 'subscription.resumed'; autoResumeAt: number | null }
  | { type: 'subscription.extended'; previousAccessEndsAt: number | null }
  | { type: 'subscription.product_changed'; previousProductId: string; effective: 'immediate' | 'at_renewal' }
  | { type: 'subscription.price_change'; priceChange: PriceChange }
  | { type: 'subscription.expired'; expirationReason: ExpirationReason }
  | { type: 'subscription.refunded'; reason: RefundReason; amountMicros: number | null; currency: string | null }
  | { type: 'subscription.refund_reversed'; amountMicros: number | null; currency: string | null }
  | { type: 'purchase.completed' }
  | { type: 'subscription.consumption_requested'; requestId: string; deadline: number };

export type LifecycleEventType = LifecycleEvent['type'];

/**
 * One ledger fact: money that moved, in micros, at the rail's time. `amountMicros` is null only
 * where the rail states no amount (an Android voided purchase of a subscription whose price
 * was never read); the ledger then takes the amount of the payment with the same `transactionId`.
 */
export interface LedgerFact {
  kind: 'payment' | 'refund' | 'chargeback' | 'reversal';
  amountMicros: number | null;
  currency: string | null;
  /** Unix ms. */
  railTimeMs: number;
  /** The rail's id of the money movement's subject: iOS transactionId, Android order id, card invoice, charge or dispute id. */
  transactionId: string | null;
  /** Card: the charge and payment intent an invoice was paid with (later refunds and disputes name them). */
  chargeId?: string | null;
  paymentIntentId?: string | null;
  /** Card: the card customer of a chargeback that no subscription could be linked to. */
  cardCustomerId?: string | null;
  /** A subscription's payment (true) or a one-off purchase's. */
  recurring?: boolean;
}

/** An Apple consumption request to record (`cr_…`), answered before `deadline`. */
export interface RefundRequestFact {
  id: string;
  subscriptionId: string;
  transactionId: string | null;
  receivedAt: number;
  deadline: number;
}

export interface LifecycleResult {
  /** `applied` when the object, the events or the ledger changed; `no_op` otherwise. */
  decision: 'applied' | 'no_op';
  /** The subscription after the change (the previous one on a no_op; null when there is none). */
  subscription: Subscription | null;
  events: LifecycleEvent[];
  ledger: LedgerFact[];
  /** The rail's own type as recorded in the audit entry (`DID_RENEW/BILLING_RECOVERY`, `SUBSCRIPTION_RENEWED`, `invoice.paid` …). */
  recordedType: string;
  /** A short human sentence for the audit entry. */
  reason: string;
  refundRequest?: RefundRequestFact;
}

/** The time of a derivation: the service clock and the rail's own time of what is applied (Unix ms). */
export interface LifecycleTime {
  nowMs: number;
  railTimeMs: number;
}

/** What a derivation reads beside the rail's data: the time and the product catalogue. */
export interface LifecycleContext extends LifecycleTime {
  /** The entitlement keys the catalogue maps a product of this rail to. */
  entitlementKeysOf(productId: string): readonly string[];
}

/** What only the rail knows about a change (the rest is read from the objects before and after). */
export interface TransitionHints {
  /** A new paid period began (`subscription.renewed`). */
  newPaidPeriod?: boolean;
  /** `accessEndsAt` moved later without a payment (`subscription.extended`). */
  extended?: boolean;
  /** How a change of product took effect (default `immediate`). */
  productChangeEffective?: 'immediate' | 'at_renewal';
  /** The subscription replaces another one (Android linked purchase token): a product change, not a start. */
  replaces?: { previousProductId: string; effective: 'immediate' | 'at_renewal' };
}

export const toSeconds = (ms: number): number => Math.floor(ms / 1000);

export function cancelReasonOf(reason: ExpirationReason | null): CancelReason {
  switch (reason) {
    case 'unsubscribe':
    case 'billing_error':
    case 'developer_initiated':
    case 'price_increase':
    case 'customer_support':
      return reason;
    default:
      return 'unknown';
  }
}

function started(previous: Subscription | null, next: Subscription, hints: TransitionHints): LifecycleEvent[] {
  if (hints.replaces) return [{ type: 'subscription.product_changed', ...hints.replaces }];
  const isNew = previous === null || (previous.state === 'expired' && !hasEnded(next.state));
  if (!isNew || !stateGivesAccess(next.state)) return [];
  const events: LifecycleEvent[] = [{ type: 'subscription.started', periodType: next.periodType, isTrialStart: next.state === 'trialing' }];
  if (next.kind === 'non_renewing') events.push({ type: 'purchase.completed' });
  return events;
}

function billing(previous: Subscription | null, next: Subscription): LifecycleEvent[] {
  const before = previous?.billingIssueDetectedAt ?? null;
  if (before === null && next.billingIssueDetectedAt !== null) return [{ type: 'subscription.billing_issue', gracePeriodEndsAt: next.gracePeriodEndsAt }];
  if (before !== null && next.billingIssueDetectedAt === null && (next.state === 'active' || next.state === 'trialing'))
    return [{ type: 'subscription.recovered', billingIssueDetectedAt: before }];
  return [];
}

function renewal(previous: Subscription | null, next: Subscription): LifecycleEvent[] {
  if (hasEnded(next.state)) return [];
  const before = previous?.unsubscribeDetectedAt ?? null;
  if (before === null && next.unsubscribeDetectedAt !== null) return [{ type: 'subscription.canceled', reason: cancelReasonOf(next.expirationReason) }];
  if (previous && before !== null && next.unsubscribeDetectedAt === null)
    return [{ type: 'subscription.uncanceled', reason: cancelReasonOf(previous.expirationReason) }];
  return [];
}

function pause(previous: Subscription | null, next: Subscription): LifecycleEvent[] {
  const wasPaused = previous?.state === 'paused';
  if (!wasPaused && next.state === 'paused') return [{ type: 'subscription.paused', autoResumeAt: next.autoResumeAt }];
  if (wasPaused && (next.state === 'active' || next.state === 'trialing')) return [{ type: 'subscription.resumed', autoResumeAt: previous.autoResumeAt }];
  return [];
}

function productChange(previous: Subscription | null, next: Subscription, hints: TransitionHints): LifecycleEvent[] {
  if (!previous || hints.replaces || previous.productId === next.productId) return [];
  return [{ type: 'subscription.product_changed', previousProductId: previous.productId, effective: hints.productChangeEffective ?? 'immediate' }];
}

function priceChange(previous: Subscription | null, next: Subscription): LifecycleEvent[] {
  const before = previous?.priceChange ?? null;
  const after = next.priceChange;
  if (!after) return [];
  if (before && before.state === after.state && before.amountMicros === after.amountMicros && before.currency === after.currency) return [];
  return [{ type: 'subscription.price_change', priceChange: after }];
}

/** The events that follow from comparing the subscription before and after, in the order a receiver reads them. */
export function transitionEvents(previous: Subscription | null, next: Subscription, hints: TransitionHints = {}): LifecycleEvent[] {
  const events: LifecycleEvent[] = [...started(previous, next, hints)];
  if (hints.newPaidPeriod && previous && previous.state !== 'expired' && next.state === 'active')
    events.push({ type: 'subscription.renewed', isTrialConversion: previous.periodType === 'trial' && next.periodType !== 'trial' });
  events.push(...billing(previous, next), ...productChange(previous, next, hints), ...renewal(previous, next), ...pause(previous, next));
  if (hints.extended && previous && (next.accessEndsAt ?? Infinity) > (previous.accessEndsAt ?? Infinity))
    events.push({ type: 'subscription.extended', previousAccessEndsAt: previous.accessEndsAt });
  events.push(...priceChange(previous, next));
  if (next.state === 'expired' && previous?.state !== 'expired')
    events.push({ type: 'subscription.expired', expirationReason: next.expirationReason ?? 'unknown' });
  return events;
}

const IGNORED_IN_COMPARISON = new Set<keyof Subscription>(['updatedAt', 'isActive']);

/** A value's JSON with object keys sorted: a stored object (jsonb orders keys its own way) compares equal to a derived one. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Whether two subscription objects differ in anything but `updatedAt` and `isActive` (which follow the clock). */
export function differs(a: Subscription | null, b: Subscription): boolean {
  if (!a) return true;
  return (Object.keys(b) as (keyof Subscription)[]).some((key) => !IGNORED_IN_COMPARISON.has(key) && canonical(a[key]) !== canonical(b[key]));
}

/** Nothing to change: the previous subscription, recorded with the rail's type. */
export function noOp(previous: Subscription | null, recordedType: string, reason: string): LifecycleResult {
  return { decision: 'no_op', subscription: previous, events: [], ledger: [], recordedType, reason };
}

export interface Settlement {
  recordedType: string;
  reason: string;
  hints?: TransitionHints;
  /** Events only the rail knows (refunds, reversals, consumption requests), announced after the transition's. */
  extraEvents?: LifecycleEvent[];
  ledger?: LedgerFact[];
  refundRequest?: RefundRequestFact;
}

/**
 * The result of moving `previous` to `draft` at `nowMs`: `isActive` and `updatedAt` set, the
 * transition's events and the rail's own, and `no_op` when nothing changed.
 */
export function settle(previous: Subscription | null, draft: Subscription, nowMs: number, settlement: Settlement): LifecycleResult {
  const nowSeconds = toSeconds(nowMs);
  const next: Subscription = { ...draft, isActive: isActiveAt(draft, nowSeconds), updatedAt: nowSeconds };
  const events = [...transitionEvents(previous, next, settlement.hints), ...(settlement.extraEvents ?? [])];
  const ledger = settlement.ledger ?? [];
  const changed = differs(previous, next);
  if (!changed && events.length === 0 && ledger.length === 0 && !settlement.refundRequest) return noOp(previous, settlement.recordedType, settlement.reason);
  return {
    decision: 'applied',
    subscription: changed ? next : { ...previous!, isActive: next.isActive },
    events,
    ledger,
    recordedType: settlement.recordedType,
    reason: settlement.reason,
    ...(settlement.refundRequest ? { refundRequest: settlement.refundRequest } : {}),
  };
}
