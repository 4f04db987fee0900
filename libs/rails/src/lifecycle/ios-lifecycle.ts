/**
 * iOS store: the subscription after one App Store Server Notification V2 (or the same decoded
 * data read from the App Store Server API), with its events and ledger facts. Pure.
 */
import type { JWSRenewalInfoDecodedPayload, JWSTransactionDecodedPayload } from '@apple/app-store-server-library';
import { accessEndOf, accessStoppedAt, refundedAt, restoredAfterReversal } from './access.js';
import {
  type LedgerFact,
  type LifecycleContext,
  type LifecycleEvent,
  type LifecycleResult,
  type Settlement,
  noOp,
  settle,
  toSeconds,
} from './lifecycle-outcome.js';
import { iosMoney } from './money.js';
import type { ExpirationReason, Money, OfferDiscount, OfferType, PeriodType, PriceChange, Subscription, SubscriptionOffer } from './subscription.js';

export interface IosLifecycleInput {
  notificationType: string;
  subtype?: string | null;
  /** The notification's id: the consumption request's id derives from it. */
  notificationUUID?: string | null;
  /** The decoded, verified `signedTransactionInfo` (null when the notification carries none). */
  transaction: JWSTransactionDecodedPayload | null;
  /** The decoded, verified `signedRenewalInfo` (null when absent or unverified). */
  renewalInfo: JWSRenewalInfoDecodedPayload | null;
}

const TRANSACTION = 'signedTransactionInfo';
const RENEWAL = 'signedRenewalInfo';
/** Apple answers a consumption request within 12 hours. */
const CONSUMPTION_DEADLINE_SECONDS = 12 * 60 * 60;

const OFFER_TYPES: Record<number, OfferType> = { 1: 'introductory', 2: 'promotional', 3: 'offer_code', 4: 'win_back' };
const OFFER_DISCOUNTS: Record<string, OfferDiscount> = { FREE_TRIAL: 'free_trial', PAY_AS_YOU_GO: 'pay_as_you_go', PAY_UP_FRONT: 'pay_up_front' };
const EXPIRED_REASONS: Record<string, ExpirationReason> = {
  VOLUNTARY: 'unsubscribe',
  BILLING_RETRY: 'billing_error',
  PRICE_INCREASE: 'price_increase',
  PRODUCT_NOT_FOR_SALE: 'product_unavailable',
};

const secondsOrNull = (ms: number | undefined): number | null => (typeof ms === 'number' ? toSeconds(ms) : null);

export function iosOffer(source: Pick<JWSTransactionDecodedPayload, 'offerType' | 'offerIdentifier' | 'offerDiscountType'>): SubscriptionOffer | null {
  const type = typeof source.offerType === 'number' ? OFFER_TYPES[source.offerType] : undefined;
  if (!type) return null;
  return { type, id: source.offerIdentifier ?? null, discount: OFFER_DISCOUNTS[source.offerDiscountType ?? ''] ?? null };
}

/** `trial` for a free trial, `intro` for another introductory offer, else `normal`. */
export function iosPeriodType(transaction: JWSTransactionDecodedPayload): PeriodType {
  if (transaction.offerDiscountType === 'FREE_TRIAL') return 'trial';
  if (transaction.offerType === 1) return 'intro';
  return 'normal';
}

function isAutoRenewable(transaction: JWSTransactionDecodedPayload): boolean {
  return transaction.type === 'Auto-Renewable Subscription' || (transaction.type === undefined && typeof transaction.expiresDate === 'number');
}

function transactionPrice(transaction: JWSTransactionDecodedPayload): Money | null {
  return iosMoney(transaction.price, transaction.currency, `${TRANSACTION}.price`, `${TRANSACTION}.currency`);
}

/** The subscription a transaction describes on its own (a paid, renewing period), over what was known before. */
function fromTransaction(
  previous: Subscription | null,
  transaction: JWSTransactionDecodedPayload,
  renewal: JWSRenewalInfoDecodedPayload | null,
  ctx: LifecycleContext,
): Subscription {
  const productId = transaction.productId!;
  const renewing = isAutoRenewable(transaction);
  const purchasedAt = secondsOrNull(transaction.purchaseDate) ?? toSeconds(ctx.railTimeMs);
  const periodEnd = renewing ? secondsOrNull(transaction.expiresDate) : null;
  const periodType = renewing ? iosPeriodType(transaction) : 'normal';
  const willRenew = renewing && (renewal?.autoRenewStatus !== undefined ? renewal.autoRenewStatus === 1 : (previous?.willRenew ?? true));
  return {
    object: 'subscription',
    id: transaction.originalTransactionId!,
    rail: 'ios_store',
    productId,
    entitlementKeys: [...ctx.entitlementKeysOf(productId)],
    kind: renewing ? 'auto_renewing' : 'non_renewing',
    state: periodType === 'trial' ? 'trialing' : 'active',
    periodType,
    willRenew,
    isActive: false,
    purchasedAt,
    originalPurchasedAt: secondsOrNull(transaction.originalPurchaseDate) ?? previous?.originalPurchasedAt ?? purchasedAt,
    currentPeriodStartsAt: renewing ? purchasedAt : null,
    currentPeriodEndsAt: periodEnd,
    accessEndsAt: periodEnd,
    unsubscribeDetectedAt: willRenew || !renewing ? null : (previous?.unsubscribeDetectedAt ?? toSeconds(ctx.railTimeMs)),
    billingIssueDetectedAt: null,
    gracePeriodEndsAt: null,
    pausedAt: null,
    autoResumeAt: null,
    expiredAt: null,
    expirationReason: willRenew || !renewing ? null : (previous?.expirationReason ?? 'unsubscribe'),
    refundedAt: previous?.refundedAt ?? null,
    ownershipType: transaction.inAppOwnershipType === 'FAMILY_SHARED' ? 'family_shared' : 'purchased',
    pendingProductId: pendingProductOf(renewal, productId, previous?.pendingProductId ?? null),
    offer: iosOffer(transaction),
    price: transactionPrice(transaction),
    priceChange: carriedPriceChange(previous?.priceChange ?? null, transactionPrice(transaction)),
    storeEnvironment: transaction.environment === 'Production' ? 'production' : 'sandbox',
    updatedAt: previous?.updatedAt ?? 0,
  };
}

/** A pending or accepted price change stays until a period is billed at its price (then `applied`, dropped the period after). */
function carriedPriceChange(change: PriceChange | null, price: Money | null): PriceChange | null {
  if (!change || change.state === 'applied') return null;
  const billed = price !== null && price.currency === change.currency && price.amountMicros === change.amountMicros;
  return billed ? { ...change, state: 'applied' } : change;
}

/** The renewal info's product for the next period when it differs from the one in force. */
function pendingProductOf(renewal: JWSRenewalInfoDecodedPayload | null, productId: string, fallback: string | null): string | null {
  if (!renewal) return fallback === productId ? null : fallback;
  return renewal.autoRenewProductId && renewal.autoRenewProductId !== productId ? renewal.autoRenewProductId : null;
}

/** The subscription as known before, or as the notification's transaction describes it when it is the first news of it. */
function known(previous: Subscription | null, input: IosLifecycleInput & { transaction: JWSTransactionDecodedPayload }, ctx: LifecycleContext): Subscription {
  return previous ?? fromTransaction(null, input.transaction, input.renewalInfo, ctx);
}

/** A paid transaction's payment; a family-shared one is the purchaser's money, not this customer's. */
function payment(transaction: JWSTransactionDecodedPayload, ctx: LifecycleContext): LedgerFact[] {
  const price = transactionPrice(transaction);
  if (!price || price.amountMicros <= 0 || typeof transaction.revocationDate === 'number' || transaction.inAppOwnershipType === 'FAMILY_SHARED') return [];
  return [
    {
      kind: 'payment',
      ...price,
      railTimeMs: transaction.purchaseDate ?? ctx.railTimeMs,
      transactionId: transaction.transactionId ?? null,
      recurring: isAutoRenewable(transaction),
    },
  ];
}

/** The refunded share of a transaction's price (`revocationPercentage` is in thousandths of a percent). */
function refundedAmount(transaction: JWSTransactionDecodedPayload): Money | null {
  const price = transactionPrice(transaction);
  if (!price) return null;
  const share =
    transaction.revocationType === 'REFUND_PRORATED' && typeof transaction.revocationPercentage === 'number' ? transaction.revocationPercentage / 100_000 : 1;
  return { amountMicros: Math.round(price.amountMicros * share), currency: price.currency };
}

type Step = (previous: Subscription | null, input: IosLifecycleInput & { transaction: JWSTransactionDecodedPayload }, ctx: LifecycleContext) => LifecycleResult;

const recorded = (input: IosLifecycleInput): string => (input.subtype ? `${input.notificationType}/${input.subtype}` : input.notificationType);

function apply(
  previous: Subscription | null,
  draft: Subscription,
  input: IosLifecycleInput,
  ctx: LifecycleContext,
  rest: Omit<Settlement, 'recordedType'>,
): LifecycleResult {
  return settle(previous, draft, ctx.nowMs, { recordedType: recorded(input), ...rest });
}

const subscribed: Step = (previous, input, ctx) => {
  if (input.subtype && input.subtype !== 'INITIAL_BUY' && input.subtype !== 'RESUBSCRIBE') return noOp(previous, recorded(input), 'Unknown SUBSCRIBED subtype');
  const next = fromTransaction(previous, input.transaction, input.renewalInfo, ctx);
  return apply(previous, next, input, ctx, { reason: 'Subscribed', ledger: payment(input.transaction, ctx) });
};

const didRenew: Step = (previous, input, ctx) => {
  const next = fromTransaction(previous, input.transaction, input.renewalInfo, ctx);
  const newPeriod = previous === null || next.purchasedAt > previous.purchasedAt || (next.currentPeriodEndsAt ?? 0) > (previous.currentPeriodEndsAt ?? 0);
  return apply(previous, next, input, ctx, {
    reason: input.subtype === 'BILLING_RECOVERY' ? 'Renewed after a billing problem' : 'Renewed',
    hints: { newPaidPeriod: newPeriod, productChangeEffective: 'at_renewal' },
    ledger: payment(input.transaction, ctx),
  });
};

const renewalStatus: Step = (previous, input, ctx) => {
  const base = known(previous, input, ctx);
  const at = toSeconds(ctx.railTimeMs);
  if (input.subtype === 'AUTO_RENEW_DISABLED') {
    const next: Subscription = {
      ...base,
      willRenew: false,
      unsubscribeDetectedAt: base.unsubscribeDetectedAt ?? at,
      expirationReason: base.expirationReason ?? 'unsubscribe',
    };
    return apply(previous, next, input, ctx, { reason: 'Auto-renew turned off' });
  }
  if (input.subtype === 'AUTO_RENEW_ENABLED') {
    const renewing = base.state !== 'in_billing_retry' && base.state !== 'expired' && base.state !== 'refunded';
    const next: Subscription = {
      ...base,
      willRenew: renewing,
      unsubscribeDetectedAt: null,
      expirationReason: base.state === 'expired' ? base.expirationReason : null,
    };
    return apply(previous, next, input, ctx, { reason: 'Auto-renew turned on' });
  }
  return noOp(previous, recorded(input), 'Unknown DID_CHANGE_RENEWAL_STATUS subtype');
};

const failedToRenew: Step = (previous, input, ctx) => {
  const base = known(previous, input, ctx);
  const paidThrough = secondsOrNull(input.transaction.expiresDate) ?? base.currentPeriodEndsAt;
  const billingIssueDetectedAt = base.billingIssueDetectedAt ?? toSeconds(ctx.railTimeMs);
  if (input.subtype === 'GRACE_PERIOD') {
    const gracePeriodEndsAt = secondsOrNull(input.renewalInfo?.gracePeriodExpiresDate) ?? paidThrough;
    const next: Subscription = { ...base, state: 'in_grace_period', billingIssueDetectedAt, gracePeriodEndsAt, accessEndsAt: gracePeriodEndsAt };
    return apply(previous, next, input, ctx, { reason: 'Renewal failed; in the grace period' });
  }
  if (input.subtype) return noOp(previous, recorded(input), 'Unknown DID_FAIL_TO_RENEW subtype');
  const next: Subscription = {
    ...base,
    state: 'in_billing_retry',
    willRenew: false,
    billingIssueDetectedAt,
    gracePeriodEndsAt: null,
    accessEndsAt: paidThrough,
  };
  return apply(previous, next, input, ctx, { reason: 'Renewal failed; in billing retry' });
};

const gracePeriodExpired: Step = (previous, input, ctx) => {
  const base = known(previous, input, ctx);
  const at = toSeconds(ctx.railTimeMs);
  const paidThrough = secondsOrNull(input.transaction.expiresDate) ?? base.currentPeriodEndsAt;
  if (input.renewalInfo?.isInBillingRetryPeriod) {
    const next: Subscription = {
      ...base,
      state: 'in_billing_retry',
      willRenew: false,
      billingIssueDetectedAt: base.billingIssueDetectedAt ?? at,
      gracePeriodEndsAt: null,
      accessEndsAt: accessEndOf('in_billing_retry', base, paidThrough),
    };
    return apply(previous, next, input, ctx, { reason: 'Grace period over; in billing retry' });
  }
  return apply(previous, ended(base, 'billing_error', at), input, ctx, { reason: 'Grace period over; expired' });
};

function ended(base: Subscription, reason: ExpirationReason, at: number): Subscription {
  const expiredAt = accessStoppedAt(base.state === 'in_grace_period' ? base.gracePeriodEndsAt : base.accessEndsAt, at);
  return { ...base, state: 'expired', willRenew: false, expiredAt, expirationReason: reason, gracePeriodEndsAt: null, accessEndsAt: expiredAt };
}

const expired: Step = (previous, input, ctx) => {
  const reason = input.subtype ? EXPIRED_REASONS[input.subtype] : 'unknown';
  if (!reason) return noOp(previous, recorded(input), 'Unknown EXPIRED subtype');
  const base = known(previous, input, ctx);
  const paidEnd = secondsOrNull(input.transaction.expiresDate);
  return apply(previous, ended({ ...base, accessEndsAt: paidEnd ?? base.accessEndsAt }, reason, toSeconds(ctx.railTimeMs)), input, ctx, { reason: 'Expired' });
};

const refund: Step = (previous, input, ctx) => {
  const base = known(previous, input, ctx);
  const at = secondsOrNull(input.transaction.revocationDate) ?? toSeconds(ctx.railTimeMs);
  const amount = refundedAmount(input.transaction);
  const event: LifecycleEvent = {
    type: 'subscription.refunded',
    reason: 'refund',
    amountMicros: amount?.amountMicros ?? null,
    currency: amount?.currency ?? null,
  };
  const ledger: LedgerFact[] = amount
    ? [{ kind: 'refund', ...amount, railTimeMs: input.transaction.revocationDate ?? ctx.railTimeMs, transactionId: input.transaction.transactionId ?? null }]
    : [];
  // The same refund a read or a purchase sync found first: announced then; its ledger fact (keyed by the transaction) counts once.
  const seen = previous?.state === 'refunded' && previous.refundedAt === at;
  return apply(previous, refundedAt(base, at), input, ctx, { reason: 'Refunded', extraEvents: seen ? [] : [event], ledger });
};

const revoke: Step = (previous, input, ctx) => {
  const base = known(previous, input, ctx);
  const at = secondsOrNull(input.transaction.revocationDate) ?? toSeconds(ctx.railTimeMs);
  const event: LifecycleEvent = { type: 'subscription.refunded', reason: 'family_revoked', amountMicros: 0, currency: base.price?.currency ?? null };
  return apply(previous, refundedAt(base, at), input, ctx, { reason: 'Revoked (family sharing removed)', extraEvents: [event] });
};

const refundReversed: Step = (previous, input, ctx) => {
  const base = known(previous, input, ctx);
  if (base.state !== 'refunded') return noOp(previous, recorded(input), 'No refund to reverse');
  const amount = refundedAmount(input.transaction);
  const next = restoredAfterReversal(base, base.currentPeriodEndsAt);
  const event: LifecycleEvent = { type: 'subscription.refund_reversed', amountMicros: amount?.amountMicros ?? null, currency: amount?.currency ?? null };
  const ledger: LedgerFact[] = amount
    ? [{ kind: 'reversal', ...amount, railTimeMs: ctx.railTimeMs, transactionId: input.transaction.transactionId ?? null }]
    : [];
  return apply(previous, next, input, ctx, { reason: 'Refund reversed', extraEvents: [event], ledger });
};

const extended: Step = (previous, input, ctx) => {
  if (input.subtype && input.subtype !== 'SUMMARY') return noOp(previous, recorded(input), 'Renewal extension not applied');
  const base = known(previous, input, ctx);
  const end = secondsOrNull(input.transaction.expiresDate);
  if (end === null || (base.currentPeriodEndsAt !== null && end <= base.currentPeriodEndsAt)) return noOp(previous, recorded(input), 'No later expiry');
  const next: Subscription = {
    ...base,
    currentPeriodEndsAt: end,
    accessEndsAt: base.state === 'active' || base.state === 'trialing' ? end : base.accessEndsAt,
  };
  return apply(previous, next, input, ctx, { reason: 'Renewal date extended', hints: { extended: true } });
};

const renewalPreference: Step = (previous, input, ctx) => {
  if (input.subtype === 'UPGRADE') {
    const next = fromTransaction(previous, input.transaction, input.renewalInfo, ctx);
    return apply(previous, next, input, ctx, { reason: 'Upgraded', hints: { productChangeEffective: 'immediate' }, ledger: payment(input.transaction, ctx) });
  }
  if (input.subtype && input.subtype !== 'DOWNGRADE') return noOp(previous, recorded(input), 'Unknown DID_CHANGE_RENEWAL_PREF subtype');
  const base = known(previous, input, ctx);
  const pendingProductId = input.subtype === 'DOWNGRADE' ? pendingProductOf(input.renewalInfo, base.productId, null) : null;
  return apply(previous, { ...base, pendingProductId }, input, ctx, { reason: pendingProductId ? 'Downgrade at the next renewal' : 'Plan change cancelled' });
};

const offerRedeemed: Step = (previous, input, ctx) => {
  const base = known(previous, input, ctx);
  const upgraded = input.subtype === 'UPGRADE';
  const next: Subscription = upgraded
    ? fromTransaction(previous, input.transaction, input.renewalInfo, ctx)
    : { ...base, offer: iosOffer(input.transaction), periodType: isAutoRenewable(input.transaction) ? iosPeriodType(input.transaction) : base.periodType };
  return apply(previous, next, input, ctx, { reason: 'Offer redeemed', ledger: upgraded ? payment(input.transaction, ctx) : [] });
};

const priceIncrease: Step = (previous, input, ctx) => {
  const state = input.subtype === 'PENDING' ? 'pending' : input.subtype === 'ACCEPTED' ? 'accepted' : null;
  if (!state) return noOp(previous, recorded(input), 'Unknown PRICE_INCREASE subtype');
  const base = known(previous, input, ctx);
  const renewal = input.renewalInfo;
  const price = renewal ? iosMoney(renewal.renewalPrice, renewal.currency, `${RENEWAL}.renewalPrice`, `${RENEWAL}.currency`) : null;
  if (!price) return noOp(previous, recorded(input), 'The renewal info states no new price');
  const priceChange: PriceChange = { state, ...price, effectiveAt: secondsOrNull(renewal?.renewalDate) ?? base.currentPeriodEndsAt };
  return apply(previous, { ...base, priceChange }, input, ctx, { reason: `Price increase ${state}` });
};

const consumptionRequest: Step = (previous, input, ctx) => {
  const receivedAt = toSeconds(ctx.railTimeMs);
  const subscriptionId = input.transaction.originalTransactionId!;
  const requestId = `cr_${(input.notificationUUID ?? `${subscriptionId}_${ctx.railTimeMs}`).replace(/-/g, '').toLowerCase()}`;
  const deadline = receivedAt + CONSUMPTION_DEADLINE_SECONDS;
  const base = known(previous, input, ctx);
  return apply(previous, base, input, ctx, {
    reason: 'Consumption information requested',
    extraEvents: [{ type: 'subscription.consumption_requested', requestId, deadline }],
    refundRequest: { id: requestId, subscriptionId, transactionId: input.transaction.transactionId ?? null, receivedAt, deadline },
  });
};

const oneTimeCharge: Step = (previous, input, ctx) => {
  const base = fromTransaction(previous, input.transaction, input.renewalInfo, ctx);
  const next: Subscription = {
    ...base,
    kind: 'non_renewing',
    state: 'active',
    periodType: 'normal',
    willRenew: false,
    currentPeriodStartsAt: null,
    currentPeriodEndsAt: null,
    accessEndsAt: null,
  };
  return apply(previous, next, input, ctx, { reason: 'One-time purchase', ledger: payment(input.transaction, ctx) });
};

const STEPS: Record<string, Step> = {
  SUBSCRIBED: subscribed,
  DID_RENEW: didRenew,
  DID_CHANGE_RENEWAL_STATUS: renewalStatus,
  DID_FAIL_TO_RENEW: failedToRenew,
  GRACE_PERIOD_EXPIRED: gracePeriodExpired,
  EXPIRED: expired,
  REFUND: refund,
  REVOKE: revoke,
  REFUND_REVERSED: refundReversed,
  RENEWAL_EXTENDED: extended,
  RENEWAL_EXTENSION: extended,
  DID_CHANGE_RENEWAL_PREF: renewalPreference,
  OFFER_REDEEMED: offerRedeemed,
  PRICE_INCREASE: priceIncrease,
  CONSUMPTION_REQUEST: consumptionRequest,
  ONE_TIME_CHARGE: oneTimeCharge,
};

/**
 * The subscription after one iOS notification. Types it cannot place (TEST, REFUND_DECLINED,
 * unknown or future types and subtypes) change nothing: `no_op` with the type recorded. Throws
 * RailFieldError when an amount is out of bounds.
 */
export function deriveIosLifecycle(previous: Subscription | null, input: IosLifecycleInput, ctx: LifecycleContext): LifecycleResult {
  const step = STEPS[input.notificationType];
  if (!step) return noOp(previous, recorded(input), `${input.notificationType} changes no subscription`);
  const transaction = input.transaction;
  if (!transaction?.originalTransactionId || !transaction.productId) return noOp(previous, recorded(input), `${input.notificationType} carries no transaction`);
  return step(previous, { ...input, transaction }, ctx);
}

/**
 * What a read holds about one subscription: an App Store Server API "Get All Subscription
 * Statuses" item (status, latest transaction, renewal info), or a signed transaction alone
 * (purchase sync: `status` null, read from the transaction).
 */
export interface IosReadInput {
  /** 1 active, 2 expired, 3 billing retry, 4 billing grace period, 5 revoked; null: the transaction's own (revoked, past its end, else active). */
  status: number | null;
  transaction: JWSTransactionDecodedPayload;
  /** The decoded, verified `signedRenewalInfo` (null when absent or unverified). */
  renewalInfo: JWSRenewalInfoDecodedPayload | null;
  /** The type recorded in the audit entry (`reconciliation`, `purchase_sync`). */
  recordedType: string;
}

/** The App Store's `expirationIntent`: why an expired subscription ended. */
const EXPIRATION_INTENTS: Record<number, ExpirationReason> = {
  1: 'unsubscribe',
  2: 'billing_error',
  3: 'price_increase',
  4: 'product_unavailable',
  5: 'unknown',
};

/** The status a transaction stands for on its own: revoked, expired once past `expiresDate`, else active. */
function statusOfTransaction(transaction: JWSTransactionDecodedPayload, nowMs: number): number {
  if (typeof transaction.revocationDate === 'number') return 5;
  if (typeof transaction.expiresDate === 'number' && transaction.expiresDate <= nowMs) return 2;
  return 1;
}

/**
 * The subscription after a read of the App Store (a refresh, a read at expiry, the migration
 * gate) or a purchase sync: the latest transaction describes the period in force, the status
 * where it stands. What only notifications tell (a price change's state, when a billing problem
 * began) is kept while the period is the same. Payments are counted from the transaction; a
 * refund the read finds first is a ledger fact keyed by its transaction, as the store's REFUND
 * notification's is (counted once, whichever comes first). Throws
 * RailFieldError when an amount is out of bounds.
 */
export function deriveIosRead(previous: Subscription | null, input: IosReadInput, ctx: LifecycleContext): LifecycleResult {
  const { transaction, renewalInfo, recordedType } = input;
  if (!transaction.originalTransactionId || !transaction.productId) return noOp(previous, recordedType, 'The read carries no transaction');
  const at = toSeconds(ctx.railTimeMs);
  const status = input.status ?? statusOfTransaction(transaction, ctx.nowMs);
  const done = (draft: Subscription, reason: string, rest: Omit<Settlement, 'recordedType' | 'reason'> = {}) =>
    settle(previous, draft, ctx.nowMs, { recordedType, reason, ...rest });

  if (status === 5 || typeof transaction.revocationDate === 'number') {
    if (previous?.state === 'refunded') return noOp(previous, recordedType, 'Already refunded');
    const base = previous ?? fromTransaction(null, transaction, renewalInfo, ctx);
    const familyShared = transaction.inAppOwnershipType === 'FAMILY_SHARED';
    const amount = familyShared ? null : refundedAmount(transaction);
    const event: LifecycleEvent = familyShared
      ? { type: 'subscription.refunded', reason: 'family_revoked', amountMicros: 0, currency: base.price?.currency ?? null }
      : { type: 'subscription.refunded', reason: 'refund', amountMicros: amount?.amountMicros ?? null, currency: amount?.currency ?? null };
    // The refund the store's REFUND notification would book, keyed by the transaction: it counts once whichever comes first.
    const ledger: LedgerFact[] = amount
      ? [{ kind: 'refund', ...amount, railTimeMs: transaction.revocationDate ?? ctx.railTimeMs, transactionId: transaction.transactionId ?? null }]
      : [];
    return done(refundedAt(base, secondsOrNull(transaction.revocationDate) ?? at), 'Read: refunded or revoked', { extraEvents: [event], ledger });
  }
  if (status < 1 || status > 4) return noOp(previous, recordedType, `Read: status ${status} is not one the service places`);

  const current = fromTransaction(previous, transaction, renewalInfo, ctx);
  const samePeriod =
    previous !== null &&
    previous.productId === current.productId &&
    previous.purchasedAt === current.purchasedAt &&
    previous.currentPeriodEndsAt === current.currentPeriodEndsAt;
  const newPeriod =
    previous !== null &&
    !samePeriod &&
    (current.purchasedAt > previous.purchasedAt || (current.currentPeriodEndsAt ?? 0) > (previous.currentPeriodEndsAt ?? 0));
  const base: Subscription = samePeriod ? { ...current, priceChange: previous.priceChange } : current;
  const billingIssueDetectedAt = previous?.billingIssueDetectedAt ?? at;

  switch (status) {
    case 1:
      return done(base, newPeriod ? 'Read: renewed' : 'Read: active', {
        hints: { newPaidPeriod: newPeriod, productChangeEffective: newPeriod ? 'at_renewal' : 'immediate' },
      });
    case 4: {
      const gracePeriodEndsAt = secondsOrNull(renewalInfo?.gracePeriodExpiresDate) ?? base.currentPeriodEndsAt;
      return done(
        { ...base, state: 'in_grace_period', billingIssueDetectedAt, gracePeriodEndsAt, accessEndsAt: gracePeriodEndsAt },
        'Read: in the grace period',
      );
    }
    case 3:
      return done(
        { ...base, state: 'in_billing_retry', willRenew: false, billingIssueDetectedAt, gracePeriodEndsAt: null, accessEndsAt: base.currentPeriodEndsAt },
        'Read: in billing retry',
      );
    default: {
      if (previous?.state === 'expired' && samePeriod) return noOp(previous, recordedType, 'Read: already expired');
      const intent = typeof renewalInfo?.expirationIntent === 'number' ? EXPIRATION_INTENTS[renewalInfo.expirationIntent] : undefined;
      const reason = intent ?? previous?.expirationReason ?? 'unknown';
      const kept = { ...base, billingIssueDetectedAt: previous?.billingIssueDetectedAt ?? null };
      return done(ended(kept, reason, at), 'Read: expired');
    }
  }
}
