/**
 * Android store: the subscription after one real-time developer notification and the purchase
 * read after it (`purchases.subscriptionsv2.get` / `purchases.products.get`), a voided purchase
 * (notification or an entry of `purchases.voidedpurchases.list`), or a newer purchase that
 * replaces it (`linkedPurchaseToken`). Pure.
 */
import type { androidpublisher_v3 } from '@googleapis/androidpublisher';
import { SUBSCRIPTION_NOTIFICATION_TYPES } from '../android/android-notifications.js';
import { accessStoppedAt, refundedAt } from './access.js';
import {
  type LedgerFact,
  type LifecycleContext,
  type LifecycleEvent,
  type LifecycleResult,
  type TransitionHints,
  noOp,
  settle,
  toSeconds,
} from './lifecycle-outcome.js';
import { androidMoney } from './money.js';
import type { ExpirationReason, Money, PeriodType, PriceChange, PriceChangeState, Subscription, SubscriptionOffer, SubscriptionState } from './subscription.js';

type SubscriptionRead = androidpublisher_v3.Schema$SubscriptionPurchaseV2;
type LineItem = androidpublisher_v3.Schema$SubscriptionPurchaseLineItem;
type ProductRead = androidpublisher_v3.Schema$ProductPurchase;
type VoidedEntry = androidpublisher_v3.Schema$VoidedPurchase;

/** RTDN `subscriptionNotification.notificationType` numbers this derivation reads. */
export const ANDROID_NOTIFICATION = { recovered: 1, renewed: 2, canceled: 3, purchased: 4, deferred: 9, pauseScheduleChanged: 11, revoked: 12 } as const;

export type AndroidLifecycleInput =
  | {
      kind: 'subscription';
      purchaseToken: string;
      /** The RTDN `notificationType` (null for a read without a notification). */
      notificationType: number | null;
      read: SubscriptionRead;
      /** The stored subscription of the read's `linkedPurchaseToken`, when known. */
      linked?: Subscription | null;
      /** A revocation (`SUBSCRIPTION_REVOKED`): what the ledger recorded as paid for the latest order, the refund's amount when the subscription states no price. */
      orderPayment?: Money | null;
    }
  | { kind: 'product'; purchaseToken: string; productId: string; notificationType: number | null; read: ProductRead }
  | {
      kind: 'voided';
      purchaseToken: string;
      /** An entry of the voided-purchases list, or the fields of a `voidedPurchaseNotification` (no reason: a refund). */
      entry: Pick<VoidedEntry, 'orderId' | 'voidedReason' | 'voidedTimeMillis'>;
      /** What the ledger recorded as paid for the voided order: the refund's amount when the subscription states no price. */
      orderPayment?: Money | null;
    }
  | {
      kind: 'replaced';
      /** The newer purchase whose `linkedPurchaseToken` names this subscription. */
      byPurchaseToken: string;
    };

const READ = 'purchase';
/** `voidedReason` values that are chargebacks. */
const CHARGEBACK_REASONS = new Set([7, 8, 9]);
const PRICE_CHANGE_STATES: Record<string, PriceChangeState> = { OUTSTANDING: 'pending', CONFIRMED: 'accepted', APPLIED: 'applied' };

const secondsOfTime = (time: string | null | undefined): number | null => {
  const ms = time ? Date.parse(time) : NaN;
  return Number.isFinite(ms) ? toSeconds(ms) : null;
};

function recordedType(notificationType: number | null, fallback: string): string {
  if (notificationType === null) return fallback;
  return SUBSCRIPTION_NOTIFICATION_TYPES[notificationType] ?? `SUBSCRIPTION_NOTIFICATION_${notificationType}`;
}

function primaryItem(read: SubscriptionRead): { item: LineItem; index: number } | null {
  const items = read.lineItems ?? [];
  const index = items.findIndex((item) => item.productId);
  return index < 0 ? null : { item: items[index], index };
}

function latestExpiry(read: SubscriptionRead): number | null {
  const ends = (read.lineItems ?? []).map((item) => secondsOfTime(item.expiryTime)).filter((end): end is number => end !== null);
  return ends.length > 0 ? Math.max(...ends) : null;
}

function isZero(money: Money | null): boolean {
  return money !== null && money.amountMicros === 0;
}

/** `trial` in a free-trial phase (or a zero-priced current phase), `intro` in an introductory one, `prepaid` for prepaid plans. */
export function androidPeriodType(item: LineItem, recurring: Money | null): PeriodType {
  if (item.prepaidPlan) return 'prepaid';
  if (item.offerPhase?.freeTrial) return 'trial';
  if (item.offerPhase?.introductoryPrice) return 'intro';
  if (!item.offerPhase && isZero(recurring)) return 'trial';
  return 'normal';
}

function offerOf(item: LineItem, periodType: PeriodType): SubscriptionOffer | null {
  const id = item.offerDetails?.offerId ?? null;
  if (!id) return null;
  const type = item.signupPromotion ? 'offer_code' : periodType === 'trial' || periodType === 'intro' ? 'introductory' : 'promotional';
  return { type, id, discount: periodType === 'trial' ? 'free_trial' : null };
}

function priceChangeOf(item: LineItem, index: number): PriceChange | null {
  const details = item.autoRenewingPlan?.priceChangeDetails;
  const state = PRICE_CHANGE_STATES[details?.priceChangeState ?? ''];
  const price = androidMoney(details?.newPrice, `${READ}.lineItems[${index}].autoRenewingPlan.priceChangeDetails.newPrice`);
  if (!state || !price) return null;
  return { state, ...price, effectiveAt: secondsOfTime(details?.expectedNewPriceChargeTime) };
}

/** `canceledStateContext`: user → unsubscribe, system → billing_error, developer → developer_initiated, replacement → replaced. */
export function androidCancelReason(read: SubscriptionRead): ExpirationReason | null {
  const context = read.canceledStateContext;
  if (!context) return null;
  if (context.userInitiatedCancellation) return 'unsubscribe';
  if (context.systemInitiatedCancellation) return 'billing_error';
  if (context.developerInitiatedCancellation) return 'developer_initiated';
  if (context.replacementCancellation) return 'replaced';
  return 'unknown';
}

/** What the read says regardless of its state, over what was known before. */
function fromRead(
  previous: Subscription | null,
  input: Extract<AndroidLifecycleInput, { kind: 'subscription' }>,
  primary: { item: LineItem; index: number },
  ctx: LifecycleContext,
) {
  const { item, index } = primary;
  const read = input.read;
  const productId = item.productId!;
  const rail = toSeconds(ctx.railTimeMs);
  const recurring = androidMoney(item.autoRenewingPlan?.recurringPrice, `${READ}.lineItems[${index}].autoRenewingPlan.recurringPrice`);
  const periodType = androidPeriodType(item, recurring);
  const expiry = latestExpiry(read);
  // A later expiry is a paid period only in a paid state: a grace period and a deferral move it without a payment.
  const paidState = read.subscriptionState === 'SUBSCRIPTION_STATE_ACTIVE' || read.subscriptionState === 'SUBSCRIPTION_STATE_CANCELED';
  const later = expiry !== null && (previous?.currentPeriodEndsAt ?? null) !== null && expiry > previous!.currentPeriodEndsAt!;
  const newPeriod = later && paidState && input.notificationType !== ANDROID_NOTIFICATION.deferred;
  const start = secondsOfTime(read.startTime);
  const purchasedAt = previous ? (newPeriod ? rail : previous.purchasedAt) : (start ?? rail);
  const linked = input.linked ?? null;
  const draft: Subscription = {
    object: 'subscription',
    id: input.purchaseToken,
    rail: 'android_store',
    productId,
    entitlementKeys: [...ctx.entitlementKeysOf(productId)],
    kind: 'auto_renewing',
    state: periodType === 'trial' ? 'trialing' : 'active',
    periodType,
    willRenew: item.autoRenewingPlan?.autoRenewEnabled ?? !item.prepaidPlan,
    isActive: false,
    purchasedAt,
    originalPurchasedAt: previous?.originalPurchasedAt ?? linked?.originalPurchasedAt ?? start ?? rail,
    currentPeriodStartsAt: purchasedAt,
    currentPeriodEndsAt: expiry,
    accessEndsAt: expiry,
    unsubscribeDetectedAt: null,
    billingIssueDetectedAt: null,
    gracePeriodEndsAt: null,
    pausedAt: null,
    autoResumeAt: previous?.state === 'paused' ? null : (previous?.autoResumeAt ?? null),
    expiredAt: null,
    expirationReason: null,
    refundedAt: previous?.refundedAt ?? null,
    ownershipType: 'purchased',
    pendingProductId: (read.lineItems ?? []).map((line) => line.deferredItemReplacement?.productId).find((id): id is string => Boolean(id)) ?? null,
    offer: offerOf(item, periodType),
    price: periodType === 'trial' && recurring ? { amountMicros: 0, currency: recurring.currency } : recurring,
    priceChange: priceChangeOf(item, index),
    storeEnvironment: read.testPurchase ? 'sandbox' : 'production',
    updatedAt: previous?.updatedAt ?? 0,
  };
  // Older answers name the order only at the top (`latestOrderId`, no longer in the typed schema).
  const orderId = item.latestSuccessfulOrderId ?? (read as { latestOrderId?: string | null }).latestOrderId ?? null;
  return { draft, newPeriod, orderId };
}

type Shaper = (
  draft: Subscription,
  previous: Subscription | null,
  input: Extract<AndroidLifecycleInput, { kind: 'subscription' }>,
  rail: number,
) => Subscription;

const BY_STATE: Record<string, Shaper> = {
  SUBSCRIPTION_STATE_ACTIVE: (draft, _previous, input) =>
    input.notificationType === ANDROID_NOTIFICATION.pauseScheduleChanged
      ? { ...draft, autoResumeAt: input.read.pausedStateContext?.autoResumeTime ? secondsOfTime(input.read.pausedStateContext.autoResumeTime) : null }
      : draft,
  SUBSCRIPTION_STATE_IN_GRACE_PERIOD: (draft, previous, _input, rail) => ({
    ...draft,
    state: 'in_grace_period',
    billingIssueDetectedAt: previous?.billingIssueDetectedAt ?? rail,
    gracePeriodEndsAt: draft.currentPeriodEndsAt,
  }),
  SUBSCRIPTION_STATE_ON_HOLD: (draft, previous, _input, rail) => ({
    ...draft,
    state: 'on_hold',
    willRenew: false,
    billingIssueDetectedAt: previous?.billingIssueDetectedAt ?? rail,
    // Access stopped when the hold was first seen; a later read of the same hold does not move it.
    accessEndsAt: previous?.state === 'on_hold' ? previous.accessEndsAt : accessStoppedAt(draft.currentPeriodEndsAt, rail),
  }),
  SUBSCRIPTION_STATE_PAUSED: (draft, previous, input, rail) => ({
    ...draft,
    state: 'paused',
    willRenew: false,
    pausedAt: previous?.pausedAt ?? rail,
    autoResumeAt: secondsOfTime(input.read.pausedStateContext?.autoResumeTime),
  }),
  SUBSCRIPTION_STATE_CANCELED: (draft, previous, input, rail) => ({
    ...draft,
    willRenew: false,
    unsubscribeDetectedAt: previous?.unsubscribeDetectedAt ?? secondsOfTime(input.read.canceledStateContext?.userInitiatedCancellation?.cancelTime) ?? rail,
    expirationReason: androidCancelReason(input.read) ?? 'unknown',
  }),
  SUBSCRIPTION_STATE_EXPIRED: (draft, previous, input, rail) => {
    // Ended once: a later read of the same end does not move it.
    const expiredAt = previous?.state === 'expired' && previous.expiredAt !== null ? previous.expiredAt : accessStoppedAt(draft.currentPeriodEndsAt, rail);
    const fallback: ExpirationReason = previous?.billingIssueDetectedAt != null ? 'billing_error' : (previous?.expirationReason ?? 'unknown');
    return {
      ...draft,
      state: 'expired',
      willRenew: false,
      expiredAt,
      accessEndsAt: expiredAt,
      expirationReason: androidCancelReason(input.read) ?? fallback,
      unsubscribeDetectedAt: previous?.unsubscribeDetectedAt ?? null,
    };
  },
};

function payment(next: Subscription, orderId: string | null, ctx: LifecycleContext): LedgerFact[] {
  if (!next.price || next.price.amountMicros <= 0 || next.periodType === 'trial') return [];
  return [{ kind: 'payment', ...next.price, railTimeMs: ctx.railTimeMs, transactionId: orderId, recurring: true }];
}

/** The refunded amount: the subscription's own price, else what was recorded as paid for the order; null when neither says (nothing is booked). */
function refundedPrice(price: Money | null, orderPayment: Money | null | undefined): Money | null {
  if (price && price.amountMicros > 0) return price;
  return orderPayment && orderPayment.amountMicros > 0 ? orderPayment : null;
}

/** The latest order of a subscription read (its primary line item's, else the answer's top-level `latestOrderId`). */
export function latestOrderIdOf(read: SubscriptionRead): string | null {
  const primary = primaryItem(read);
  return primary?.item.latestSuccessfulOrderId ?? (read as { latestOrderId?: string | null }).latestOrderId ?? null;
}

function refundEvent(reason: 'refund' | 'chargeback', price: Money | null): LifecycleEvent {
  return { type: 'subscription.refunded', reason, amountMicros: price?.amountMicros ?? null, currency: price?.currency ?? null };
}

function deriveSubscription(
  previous: Subscription | null,
  input: Extract<AndroidLifecycleInput, { kind: 'subscription' }>,
  ctx: LifecycleContext,
): LifecycleResult {
  const state = input.read.subscriptionState ?? 'SUBSCRIPTION_STATE_UNSPECIFIED';
  const type = recordedType(input.notificationType, state);
  if (previous?.state === 'refunded') return noOp(previous, type, 'A voided or revoked purchase token never gives access again');
  // The store cancels and expires a replaced token after the purchase that replaced it: it stays ended.
  if (previous?.state === 'expired' && previous.expirationReason === 'replaced') return noOp(previous, type, 'A replaced purchase token stays ended');
  const rail = toSeconds(ctx.railTimeMs);
  const revoked = input.notificationType === ANDROID_NOTIFICATION.revoked;
  const primary = primaryItem(input.read);
  const shape = BY_STATE[state];
  if (revoked && (previous || (primary && shape))) {
    // The refund of the latest order, keyed like the voided-purchases entry that names it later
    // (the ledger counts it once); a token first seen revoked also paid for that order.
    const read = previous ? null : fromRead(null, input, primary!, ctx);
    const base = previous ?? shape!(read!.draft, null, input, rail);
    const price = refundedPrice(base.price, input.orderPayment);
    const orderId = read?.orderId ?? latestOrderIdOf(input.read);
    const ledger: LedgerFact[] = [
      ...(read ? payment(base, read.orderId, ctx) : []),
      { kind: 'refund', amountMicros: price?.amountMicros ?? null, currency: price?.currency ?? null, railTimeMs: ctx.railTimeMs, transactionId: orderId },
    ];
    return settle(previous, refundedAt(base, rail), ctx.nowMs, {
      recordedType: type,
      reason: 'Revoked',
      extraEvents: [refundEvent('refund', price ?? base.price)],
      ledger,
    });
  }
  if (!primary || !shape) return noOp(previous, type, `Subscription state ${state} changes nothing`);
  const { draft, newPeriod, orderId } = fromRead(previous, input, primary, ctx);
  const next = shape(draft, previous, input, rail);
  const hints: TransitionHints = { newPaidPeriod: newPeriod, extended: input.notificationType === ANDROID_NOTIFICATION.deferred };
  const replaced = previous === null ? replacementOf(input) : null;
  if (replaced) hints.replaces = replaced;
  const paid = (previous === null || newPeriod) && (next.state === 'active' || next.state === 'trialing');
  return settle(previous, next, ctx.nowMs, { recordedType: type, reason: `Read state ${state}`, hints, ledger: paid ? payment(next, orderId, ctx) : [] });
}

/** A purchase that replaces another (`linkedPurchaseToken`): a product change from the old product, not a new start. */
function replacementOf(input: Extract<AndroidLifecycleInput, { kind: 'subscription' }>): TransitionHints['replaces'] | null {
  if (!input.read.linkedPurchaseToken) return null;
  const previousProductId = input.linked?.productId ?? (input.read.lineItems ?? []).map((item) => item.itemReplacement?.productId).find((id) => Boolean(id));
  if (!previousProductId) return null;
  return { previousProductId, effective: input.linked?.pendingProductId ? 'at_renewal' : 'immediate' };
}

/** The old subscription of a replaced purchase: ends at once (`replaced`), or at its expiry when its line item deferred the replacement. */
function deriveReplaced(previous: Subscription | null, input: Extract<AndroidLifecycleInput, { kind: 'replaced' }>, ctx: LifecycleContext): LifecycleResult {
  const type = 'LINKED_PURCHASE';
  if (!previous || previous.state === 'expired' || previous.state === 'refunded') return noOp(previous, type, 'Nothing to replace');
  const rail = toSeconds(ctx.railTimeMs);
  const reason = `Replaced by purchase ${input.byPurchaseToken}`;
  if (previous.pendingProductId) {
    const next: Subscription = { ...previous, willRenew: false, expirationReason: 'replaced' };
    return settle(previous, next, ctx.nowMs, { recordedType: type, reason });
  }
  const expiredAt = accessStoppedAt(previous.accessEndsAt, rail);
  const next: Subscription = { ...previous, state: 'expired', willRenew: false, expiredAt, accessEndsAt: expiredAt, expirationReason: 'replaced' };
  return settle(previous, next, ctx.nowMs, { recordedType: type, reason });
}

/** A voided purchase: refunded at once, a refund (or chargeback) in the ledger, for good. */
function deriveVoided(previous: Subscription | null, input: Extract<AndroidLifecycleInput, { kind: 'voided' }>, ctx: LifecycleContext): LifecycleResult {
  const reason = CHARGEBACK_REASONS.has(input.entry.voidedReason ?? -1) ? 'chargeback' : 'refund';
  const voidedMs = Number(input.entry.voidedTimeMillis);
  const railTimeMs = Number.isFinite(voidedMs) && voidedMs > 0 ? voidedMs : ctx.railTimeMs;
  const price = refundedPrice(previous?.price ?? null, input.orderPayment);
  const ledger: LedgerFact[] = [
    { kind: reason, amountMicros: price?.amountMicros ?? null, currency: price?.currency ?? null, railTimeMs, transactionId: input.entry.orderId ?? null },
  ];
  const type = 'VOIDED_PURCHASE';
  if (!previous)
    return { decision: 'applied', subscription: null, events: [], ledger, recordedType: type, reason: `Voided purchase (${reason}) of an unknown token` };
  const already = previous.state === 'refunded';
  const next = already ? previous : refundedAt(previous, toSeconds(railTimeMs));
  return settle(previous, next, ctx.nowMs, {
    recordedType: type,
    reason: `Voided purchase (${reason})`,
    ledger,
    extraEvents: already ? [] : [refundEvent(reason, price)],
  });
}

const PRODUCT_STATES: Record<number, SubscriptionState> = { 0: 'active', 1: 'expired' };

function deriveProduct(previous: Subscription | null, input: Extract<AndroidLifecycleInput, { kind: 'product' }>, ctx: LifecycleContext): LifecycleResult {
  const purchaseState = input.read.purchaseState ?? 0;
  const type =
    input.notificationType === null
      ? `PURCHASE_STATE_${purchaseState}`
      : input.notificationType === 1
        ? 'ONE_TIME_PRODUCT_PURCHASED'
        : 'ONE_TIME_PRODUCT_CANCELED';
  if (previous?.state === 'refunded') return noOp(previous, type, 'A voided purchase token never gives access again');
  const state = PRODUCT_STATES[purchaseState];
  if (!state || (state === 'expired' && !previous)) return noOp(previous, type, `Purchase state ${purchaseState} changes nothing`);
  const productId = input.read.productId ?? input.productId;
  const rail = toSeconds(ctx.railTimeMs);
  const purchaseMs = Number(input.read.purchaseTimeMillis);
  const purchasedAt = previous?.purchasedAt ?? (Number.isFinite(purchaseMs) && purchaseMs > 0 ? toSeconds(purchaseMs) : rail);
  const next: Subscription = {
    object: 'subscription',
    id: input.purchaseToken,
    rail: 'android_store',
    productId,
    entitlementKeys: [...ctx.entitlementKeysOf(productId)],
    kind: 'non_renewing',
    state,
    periodType: 'normal',
    willRenew: false,
    isActive: false,
    purchasedAt,
    originalPurchasedAt: previous?.originalPurchasedAt ?? purchasedAt,
    currentPeriodStartsAt: null,
    currentPeriodEndsAt: null,
    accessEndsAt: state === 'active' ? null : rail,
    unsubscribeDetectedAt: null,
    billingIssueDetectedAt: null,
    gracePeriodEndsAt: null,
    pausedAt: null,
    autoResumeAt: null,
    expiredAt: state === 'active' ? null : rail,
    expirationReason: state === 'active' ? null : 'unknown',
    refundedAt: previous?.refundedAt ?? null,
    ownershipType: 'purchased',
    pendingProductId: null,
    offer: null,
    price: previous?.price ?? null,
    priceChange: null,
    storeEnvironment: input.read.purchaseType === 0 ? 'sandbox' : 'production',
    updatedAt: previous?.updatedAt ?? 0,
  };
  return settle(previous, next, ctx.nowMs, { recordedType: type, reason: `Purchase state ${purchaseState}` });
}

/**
 * The subscription after one Android notification and read. A token once voided or revoked
 * stays `refunded` whatever a later read says. Read states it cannot place (pending, unknown)
 * change nothing (`no_op`). Throws RailFieldError when an amount is out of bounds.
 */
export function deriveAndroidLifecycle(previous: Subscription | null, input: AndroidLifecycleInput, ctx: LifecycleContext): LifecycleResult {
  switch (input.kind) {
    case 'subscription':
      return deriveSubscription(previous, input, ctx);
    case 'product':
      return deriveProduct(previous, input, ctx);
    case 'voided':
      return deriveVoided(previous, input, ctx);
    case 'replaced':
      return deriveReplaced(previous, input, ctx);
  }
}
