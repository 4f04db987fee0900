// The iOS rows of the subscription lifecycle: one case per notification (subtype) row, each
// named after the row it checks.
import type { JWSRenewalInfoDecodedPayload, JWSTransactionDecodedPayload } from '@apple/app-store-server-library';
import { RailFieldError } from '../../libs/rails/src/model/rail-bounds.js';
import { type IosLifecycleInput, deriveIosLifecycle } from '../../libs/rails/src/lifecycle/ios-lifecycle.js';
import type { LifecycleContext, LifecycleResult } from '../../libs/rails/src/lifecycle/lifecycle-outcome.js';
import type { Subscription } from '../../libs/rails/src/lifecycle/subscription.js';

const DAY = 86_400;
/** A period's start, Unix seconds. */
const T0 = 1_800_000_000;
const T1 = T0 + 30 * DAY;
const T2 = T1 + 30 * DAY;

const ctxAt = (nowSeconds: number, railSeconds = nowSeconds): LifecycleContext => ({
  nowMs: nowSeconds * 1000,
  railTimeMs: railSeconds * 1000,
  entitlementKeysOf: (productId) => (productId.startsWith('pro') ? ['pro'] : ['basic']),
});

function transaction(fields: Partial<JWSTransactionDecodedPayload> = {}): JWSTransactionDecodedPayload {
  return {
    transactionId: '2000',
    originalTransactionId: '1000',
    productId: 'pro_monthly',
    type: 'Auto-Renewable Subscription',
    purchaseDate: T0 * 1000,
    originalPurchaseDate: T0 * 1000,
    expiresDate: T1 * 1000,
    price: 9990,
    currency: 'USD',
    environment: 'Production',
    inAppOwnershipType: 'PURCHASED',
    ...fields,
  };
}

function renewal(fields: Partial<JWSRenewalInfoDecodedPayload> = {}): JWSRenewalInfoDecodedPayload {
  return { originalTransactionId: '1000', autoRenewProductId: 'pro_monthly', autoRenewStatus: 1, ...fields };
}

function derive(
  previous: Subscription | null,
  notificationType: string,
  subtype: string | null,
  tx = transaction(),
  info: JWSRenewalInfoDecodedPayload | null = renewal(),
  at = T0 + DAY,
): LifecycleResult {
  const input: IosLifecycleInput = { notificationType, subtype, notificationUUID: 'a1b2c3d4-0000-4000-8000-000000000001', transaction: tx, renewalInfo: info };
  return deriveIosLifecycle(previous, input, ctxAt(at));
}

/** A paid, renewing subscription in its first period (what `SUBSCRIBED` leaves). */
const subscribed = (): Subscription => derive(null, 'SUBSCRIBED', 'INITIAL_BUY').subscription!;
const types = (result: LifecycleResult) => result.events.map((event) => event.type);

describe('iOS lifecycle: SUBSCRIBED (INITIAL_BUY, RESUBSCRIBE)', () => {
  it.each([
    ['a paid purchase is `active`, periodType `normal`', {}, 'active', 'normal', null],
    [
      '`trialing` when the transaction’s `offerDiscountType` is `FREE_TRIAL`',
      { offerType: 1, offerDiscountType: 'FREE_TRIAL', price: 0 },
      'trialing',
      'trial',
      { type: 'introductory', id: null, discount: 'free_trial' },
    ],
    [
      '`intro` for other introductory offers (`offerType` 1)',
      { offerType: 1, offerDiscountType: 'PAY_AS_YOU_GO', price: 990 },
      'active',
      'intro',
      { type: 'introductory', id: null, discount: 'pay_as_you_go' },
    ],
    [
      '`offer` from `offerType`/`offerIdentifier`/`offerDiscountType` (an offer code)',
      { offerType: 3, offerIdentifier: 'SPRING', offerDiscountType: 'PAY_UP_FRONT' },
      'active',
      'normal',
      { type: 'offer_code', id: 'SPRING', discount: 'pay_up_front' },
    ],
  ])('SUBSCRIBED (INITIAL_BUY): %s', (_row, fields, state, periodType, offer) => {
    const result = derive(null, 'SUBSCRIBED', 'INITIAL_BUY', transaction(fields));
    expect(result.decision).toBe('applied');
    expect(result.subscription).toMatchObject({ state, periodType, offer, isActive: true, accessEndsAt: T1, willRenew: true, kind: 'auto_renewing' });
    expect(result.events[0]).toEqual({ type: 'subscription.started', periodType, isTrialStart: state === 'trialing' });
  });

  it('SUBSCRIBED (INITIAL_BUY): the object carries the rail’s fields, money in micros, and a payment in the ledger', () => {
    const result = derive(null, 'SUBSCRIBED', 'INITIAL_BUY');
    expect(result.subscription).toEqual({
      object: 'subscription',
      id: '1000',
      rail: 'ios_store',
      productId: 'pro_monthly',
      entitlementKeys: ['pro'],
      kind: 'auto_renewing',
      state: 'active',
      periodType: 'normal',
      willRenew: true,
      isActive: true,
      purchasedAt: T0,
      originalPurchasedAt: T0,
      currentPeriodStartsAt: T0,
      currentPeriodEndsAt: T1,
      accessEndsAt: T1,
      unsubscribeDetectedAt: null,
      billingIssueDetectedAt: null,
      gracePeriodEndsAt: null,
      pausedAt: null,
      autoResumeAt: null,
      expiredAt: null,
      expirationReason: null,
      refundedAt: null,
      ownershipType: 'purchased',
      pendingProductId: null,
      offer: null,
      price: { amountMicros: 9_990_000, currency: 'USD' },
      priceChange: null,
      storeEnvironment: 'production',
      updatedAt: T0 + DAY,
    });
    expect(result.ledger).toEqual([
      { kind: 'payment', amountMicros: 9_990_000, currency: 'USD', railTimeMs: T0 * 1000, transactionId: '2000', recurring: true },
    ]);
  });

  it('SUBSCRIBED (RESUBSCRIBE) after an expiry is a new start', () => {
    const ended = derive(subscribed(), 'EXPIRED', 'VOLUNTARY', transaction(), renewal({ autoRenewStatus: 0 }), T1 + 1).subscription!;
    const result = derive(
      ended,
      'SUBSCRIBED',
      'RESUBSCRIBE',
      transaction({ transactionId: '2002', purchaseDate: T2 * 1000, expiresDate: (T2 + 30 * DAY) * 1000 }),
      renewal(),
      T2,
    );
    expect(result.subscription).toMatchObject({ state: 'active', expiredAt: null, expirationReason: null, isActive: true, originalPurchasedAt: T0 });
    expect(types(result)).toEqual(['subscription.started']);
  });

  it('a family-shared transaction is `ownershipType: family_shared`; a Sandbox one `storeEnvironment: sandbox`', () => {
    const result = derive(null, 'SUBSCRIBED', 'INITIAL_BUY', transaction({ inAppOwnershipType: 'FAMILY_SHARED', environment: 'Sandbox' }));
    expect(result.subscription).toMatchObject({ ownershipType: 'family_shared', storeEnvironment: 'sandbox' });
    expect(result.ledger).toEqual([]); // the family organiser paid, not this customer
  });

  it('a re-sent SUBSCRIBED changes nothing: no_op, no event', () => {
    const first = derive(null, 'SUBSCRIBED', 'INITIAL_BUY');
    const again = derive(first.subscription, 'SUBSCRIBED', 'INITIAL_BUY', transaction(), renewal(), T0 + 2 * DAY);
    expect(again.events).toEqual([]);
    expect(again.ledger).toHaveLength(1); // counted once by its transaction id in the ledger
  });
});

describe('iOS lifecycle: per notification', () => {
  const renewedTx = transaction({ transactionId: '2001', purchaseDate: T1 * 1000, expiresDate: T2 * 1000 });

  it('DID_RENEW: `active`, new period (subscription.renewed)', () => {
    const result = derive(subscribed(), 'DID_RENEW', null, renewedTx, renewal(), T1);
    expect(result.subscription).toMatchObject({ state: 'active', purchasedAt: T1, currentPeriodStartsAt: T1, currentPeriodEndsAt: T2, accessEndsAt: T2 });
    expect(result.events).toEqual([{ type: 'subscription.renewed', isTrialConversion: false }]);
    expect(result.ledger).toMatchObject([{ kind: 'payment', transactionId: '2001', amountMicros: 9_990_000 }]);
  });

  it('DID_RENEW (BILLING_RECOVERY): clears `billingIssueDetectedAt` (event `subscription.recovered`)', () => {
    const retrying = derive(subscribed(), 'DID_FAIL_TO_RENEW', null, transaction(), renewal({ isInBillingRetryPeriod: true }), T1).subscription!;
    const result = derive(retrying, 'DID_RENEW', 'BILLING_RECOVERY', renewedTx, renewal(), T1 + 3 * DAY);
    expect(result.subscription).toMatchObject({ state: 'active', billingIssueDetectedAt: null, willRenew: true, isActive: true });
    expect(result.events).toContainEqual({ type: 'subscription.recovered', billingIssueDetectedAt: T1 });
  });

  it('DID_RENEW from a trial: `isTrialConversion`', () => {
    const trial = derive(null, 'SUBSCRIBED', 'INITIAL_BUY', transaction({ offerType: 1, offerDiscountType: 'FREE_TRIAL', price: 0 })).subscription!;
    const result = derive(trial, 'DID_RENEW', null, renewedTx, renewal(), T1);
    expect(result.subscription).toMatchObject({ state: 'active', periodType: 'normal', offer: null });
    expect(result.events).toEqual([{ type: 'subscription.renewed', isTrialConversion: true }]);
  });

  it.each([
    ['AUTO_RENEW_DISABLED', 'willRenew false, unsubscribeDetectedAt set', false, T0 + DAY, 'subscription.canceled'],
    ['AUTO_RENEW_ENABLED', 'willRenew true, unsubscribeDetectedAt cleared', true, null, 'subscription.uncanceled'],
  ])('DID_CHANGE_RENEWAL_STATUS (%s): %s', (subtype, _row, willRenew, unsubscribeDetectedAt, event) => {
    const start = subtype === 'AUTO_RENEW_ENABLED' ? derive(subscribed(), 'DID_CHANGE_RENEWAL_STATUS', 'AUTO_RENEW_DISABLED').subscription! : subscribed();
    const result = derive(start, 'DID_CHANGE_RENEWAL_STATUS', subtype, transaction(), renewal({ autoRenewStatus: willRenew ? 1 : 0 }));
    expect(result.decision).toBe('applied');
    expect(result.subscription).toMatchObject({ state: 'active', willRenew, unsubscribeDetectedAt, isActive: true });
    expect(result.events).toEqual([{ type: event, reason: 'unsubscribe' }]);
  });

  it('DID_FAIL_TO_RENEW (GRACE_PERIOD): `in_grace_period` until the renewal info’s `gracePeriodExpiresDate`', () => {
    const graceEnd = T1 + 16 * DAY;
    const result = derive(subscribed(), 'DID_FAIL_TO_RENEW', 'GRACE_PERIOD', transaction(), renewal({ gracePeriodExpiresDate: graceEnd * 1000 }), T1);
    expect(result.subscription).toMatchObject({
      state: 'in_grace_period',
      gracePeriodEndsAt: graceEnd,
      accessEndsAt: graceEnd,
      billingIssueDetectedAt: T1,
      isActive: true,
    });
    expect(result.events).toEqual([{ type: 'subscription.billing_issue', gracePeriodEndsAt: graceEnd }]);
  });

  it('DID_FAIL_TO_RENEW (no subtype): `in_billing_retry`, access until the paid period’s `expiresDate`, none after', () => {
    const early = deriveIosLifecycle(
      subscribed(),
      { notificationType: 'DID_FAIL_TO_RENEW', transaction: transaction(), renewalInfo: renewal() },
      ctxAt(T1 - 60),
    );
    expect(early.subscription).toMatchObject({
      state: 'in_billing_retry',
      willRenew: false,
      accessEndsAt: T1,
      isActive: true,
      billingIssueDetectedAt: T1 - 60,
    });
    const late = deriveIosLifecycle(
      subscribed(),
      { notificationType: 'DID_FAIL_TO_RENEW', transaction: transaction(), renewalInfo: renewal() },
      ctxAt(T1 + 60),
    );
    expect(late.subscription).toMatchObject({ state: 'in_billing_retry', accessEndsAt: T1, isActive: false });
    expect(types(late)).toEqual(['subscription.billing_issue']);
  });

  it.each([
    ['`in_billing_retry` while `isInBillingRetryPeriod`', true, { state: 'in_billing_retry', isActive: false, gracePeriodEndsAt: null }, []],
    ['else `expired` (`billing_error`)', false, { state: 'expired', expirationReason: 'billing_error', isActive: false }, ['subscription.expired']],
  ])('GRACE_PERIOD_EXPIRED: %s; the billing issue is announced once per episode', (_row, retrying, expected, events) => {
    const grace = derive(
      subscribed(),
      'DID_FAIL_TO_RENEW',
      'GRACE_PERIOD',
      transaction(),
      renewal({ gracePeriodExpiresDate: (T1 + 16 * DAY) * 1000 }),
      T1,
    ).subscription!;
    const result = derive(grace, 'GRACE_PERIOD_EXPIRED', null, transaction(), renewal({ isInBillingRetryPeriod: retrying }), T1 + 16 * DAY);
    expect(result.subscription).toMatchObject({ ...expected, billingIssueDetectedAt: T1 });
    expect(types(result)).toEqual(events);
  });

  it.each([
    ['VOLUNTARY', 'unsubscribe'],
    ['BILLING_RETRY', 'billing_error'],
    ['PRICE_INCREASE', 'price_increase'],
    ['PRODUCT_NOT_FOR_SALE', 'product_unavailable'],
  ])('EXPIRED (%s): `expired` with reason `%s`', (subtype, reason) => {
    const result = derive(subscribed(), 'EXPIRED', subtype, transaction(), renewal({ autoRenewStatus: 0 }), T1 + 10);
    expect(result.subscription).toMatchObject({
      state: 'expired',
      expirationReason: reason,
      expiredAt: T1,
      accessEndsAt: T1,
      isActive: false,
      willRenew: false,
    });
    expect(result.events).toEqual([{ type: 'subscription.expired', expirationReason: reason }]);
  });

  it('REFUND: `refunded`, a refund in the ledger of the transaction’s price', () => {
    const refundAt = T0 + 5 * DAY;
    const result = derive(subscribed(), 'REFUND', null, transaction({ revocationDate: refundAt * 1000, revocationReason: 1 }), renewal(), refundAt);
    expect(result.subscription).toMatchObject({ state: 'refunded', refundedAt: refundAt, accessEndsAt: refundAt, isActive: false, willRenew: false });
    expect(result.events).toEqual([{ type: 'subscription.refunded', reason: 'refund', amountMicros: 9_990_000, currency: 'USD' }]);
    expect(result.ledger).toEqual([{ kind: 'refund', amountMicros: 9_990_000, currency: 'USD', railTimeMs: refundAt * 1000, transactionId: '2000' }]);
  });

  it('REFUND of a prorated refund: the ledger holds the refunded share (`revocationPercentage` in thousandths of a percent)', () => {
    const result = derive(
      subscribed(),
      'REFUND',
      null,
      transaction({ revocationDate: (T0 + DAY) * 1000, revocationType: 'REFUND_PRORATED', revocationPercentage: 50_000 }),
    );
    expect(result.ledger[0]).toMatchObject({ kind: 'refund', amountMicros: 4_995_000 });
  });

  it('REVOKE: `refunded` (event reason `family_revoked`); no ledger refund: this customer paid nothing', () => {
    const shared = derive(null, 'SUBSCRIBED', 'INITIAL_BUY', transaction({ inAppOwnershipType: 'FAMILY_SHARED' })).subscription!;
    const result = derive(
      shared,
      'REVOKE',
      null,
      transaction({ inAppOwnershipType: 'FAMILY_SHARED', revocationDate: (T0 + 2 * DAY) * 1000 }),
      renewal(),
      T0 + 2 * DAY,
    );
    expect(result.subscription).toMatchObject({ state: 'refunded', isActive: false });
    expect(result.events).toEqual([{ type: 'subscription.refunded', reason: 'family_revoked', amountMicros: 0, currency: 'USD' }]);
    expect(result.ledger).toEqual([]);
  });

  it('REFUND_REVERSED: back to the state before the refund, the refund reversed in the ledger', () => {
    const before = subscribed();
    const refunded = derive(before, 'REFUND', null, transaction({ revocationDate: (T0 + 2 * DAY) * 1000 }), renewal(), T0 + 2 * DAY).subscription!;
    const result = derive(refunded, 'REFUND_REVERSED', null, transaction(), renewal(), T0 + 3 * DAY);
    expect(result.subscription).toMatchObject({
      state: 'active',
      accessEndsAt: T1,
      isActive: true,
      willRenew: true,
      expirationReason: null,
      refundedAt: T0 + 2 * DAY,
    });
    expect(result.events).toEqual([{ type: 'subscription.refund_reversed', amountMicros: 9_990_000, currency: 'USD' }]);
    expect(result.ledger).toMatchObject([{ kind: 'reversal', amountMicros: 9_990_000, currency: 'USD' }]);
  });

  it('REFUND_DECLINED: nothing changes; recorded', () => {
    const before = subscribed();
    const result = derive(before, 'REFUND_DECLINED', null);
    expect(result).toMatchObject({ decision: 'no_op', subscription: before, events: [], ledger: [], recordedType: 'REFUND_DECLINED' });
  });

  it.each([
    ['RENEWAL_EXTENDED', null],
    ['RENEWAL_EXTENSION', 'SUMMARY'],
  ])('%s (%s): `currentPeriodEndsAt` / `accessEndsAt` moved to the new `expiresDate` (event `subscription.extended`)', (type, subtype) => {
    const result = derive(subscribed(), type, subtype, transaction({ expiresDate: (T1 + 7 * DAY) * 1000 }));
    expect(result.subscription).toMatchObject({ currentPeriodEndsAt: T1 + 7 * DAY, accessEndsAt: T1 + 7 * DAY });
    expect(result.events).toEqual([{ type: 'subscription.extended', previousAccessEndsAt: T1 }]);
    expect(result.ledger).toEqual([]);
  });

  it('DID_CHANGE_RENEWAL_PREF (UPGRADE): new `productId` at once (event `subscription.product_changed`, `effective: "immediate"`)', () => {
    const upgradeTx = transaction({
      transactionId: '3000',
      productId: 'pro_yearly',
      purchaseDate: (T0 + 5 * DAY) * 1000,
      expiresDate: (T0 + 370 * DAY) * 1000,
      price: 99990,
    });
    const result = derive(subscribed(), 'DID_CHANGE_RENEWAL_PREF', 'UPGRADE', upgradeTx, renewal({ autoRenewProductId: 'pro_yearly' }), T0 + 5 * DAY);
    expect(result.subscription).toMatchObject({ productId: 'pro_yearly', pendingProductId: null, accessEndsAt: T0 + 370 * DAY });
    expect(result.events).toEqual([{ type: 'subscription.product_changed', previousProductId: 'pro_monthly', effective: 'immediate' }]);
  });

  it('DID_CHANGE_RENEWAL_PREF (DOWNGRADE), (none: change cancelled): `pendingProductId` set / cleared; applied at the next `DID_RENEW`', () => {
    const downgraded = derive(subscribed(), 'DID_CHANGE_RENEWAL_PREF', 'DOWNGRADE', transaction(), renewal({ autoRenewProductId: 'basic_monthly' }));
    expect(downgraded.subscription).toMatchObject({ productId: 'pro_monthly', pendingProductId: 'basic_monthly' });
    expect(downgraded.events).toEqual([]);
    const cancelled = derive(downgraded.subscription, 'DID_CHANGE_RENEWAL_PREF', null, transaction(), renewal());
    expect(cancelled.subscription).toMatchObject({ pendingProductId: null });
    const renewed = derive(
      downgraded.subscription,
      'DID_RENEW',
      null,
      transaction({ transactionId: '2001', productId: 'basic_monthly', purchaseDate: T1 * 1000, expiresDate: T2 * 1000, price: 4990 }),
      renewal({ autoRenewProductId: 'basic_monthly' }),
      T1,
    );
    expect(renewed.subscription).toMatchObject({ productId: 'basic_monthly', pendingProductId: null, entitlementKeys: ['basic'] });
    expect(renewed.events).toEqual([
      { type: 'subscription.renewed', isTrialConversion: false },
      { type: 'subscription.product_changed', previousProductId: 'pro_monthly', effective: 'at_renewal' },
    ]);
  });

  it('OFFER_REDEEMED: `offer` and `periodType` of the period it applies to', () => {
    const result = derive(subscribed(), 'OFFER_REDEEMED', null, transaction({ offerType: 2, offerIdentifier: 'winter', offerDiscountType: 'PAY_AS_YOU_GO' }));
    expect(result.subscription).toMatchObject({ offer: { type: 'promotional', id: 'winter', discount: 'pay_as_you_go' }, periodType: 'normal' });
  });

  it.each([
    ['PENDING', 'pending'],
    ['ACCEPTED', 'accepted'],
  ])('PRICE_INCREASE (%s): `priceChange.state` `%s` with the new price from renewal info', (subtype, state) => {
    const info = renewal({ renewalPrice: 12990, currency: 'USD', renewalDate: T1 * 1000, priceIncreaseStatus: subtype === 'ACCEPTED' ? 1 : 0 });
    const result = derive(subscribed(), 'PRICE_INCREASE', subtype, transaction(), info);
    const priceChange = { state, amountMicros: 12_990_000, currency: 'USD', effectiveAt: T1 };
    expect(result.subscription?.priceChange).toEqual(priceChange);
    expect(result.events).toEqual([{ type: 'subscription.price_change', priceChange }]);
  });

  it('PRICE_INCREASE then DID_RENEW at the new price: `priceChange.state` `applied`', () => {
    const info = renewal({ renewalPrice: 12990, currency: 'USD', renewalDate: T1 * 1000 });
    const accepted = derive(subscribed(), 'PRICE_INCREASE', 'ACCEPTED', transaction(), info).subscription!;
    const result = derive(
      accepted,
      'DID_RENEW',
      null,
      transaction({ transactionId: '2001', purchaseDate: T1 * 1000, expiresDate: T2 * 1000, price: 12990 }),
      renewal(),
      T1,
    );
    expect(result.subscription).toMatchObject({ price: { amountMicros: 12_990_000 }, priceChange: { state: 'applied', amountMicros: 12_990_000 } });
    expect(result.events).toContainEqual({
      type: 'subscription.price_change',
      priceChange: { state: 'applied', amountMicros: 12_990_000, currency: 'USD', effectiveAt: T1 },
    });
  });

  it('CONSUMPTION_REQUEST: a refund request answered within 12 h, announced (`subscription.consumption_requested`)', () => {
    const before = subscribed();
    const result = derive(before, 'CONSUMPTION_REQUEST', null, transaction(), renewal(), T0 + 4 * DAY);
    const requestId = 'cr_a1b2c3d4000040008000000000000001';
    expect(result.decision).toBe('applied');
    expect(result.subscription).toMatchObject({ state: 'active' });
    expect(result.events).toEqual([{ type: 'subscription.consumption_requested', requestId, deadline: T0 + 4 * DAY + 12 * 3600 }]);
    expect(result.refundRequest).toEqual({
      id: requestId,
      subscriptionId: '1000',
      transactionId: '2000',
      receivedAt: T0 + 4 * DAY,
      deadline: T0 + 4 * DAY + 12 * 3600,
    });
  });

  it('ONE_TIME_CHARGE: `kind: non_renewing`, `active`, lifetime, a purchase in the ledger', () => {
    const oneTime = transaction({ type: 'Non-Consumable', productId: 'pro_lifetime', expiresDate: undefined, price: 49990 });
    const result = derive(null, 'ONE_TIME_CHARGE', null, oneTime, null);
    expect(result.subscription).toMatchObject({
      kind: 'non_renewing',
      state: 'active',
      accessEndsAt: null,
      currentPeriodEndsAt: null,
      willRenew: false,
      isActive: true,
    });
    expect(types(result)).toEqual(['subscription.started', 'purchase.completed']);
    expect(result.ledger).toMatchObject([{ kind: 'payment', amountMicros: 49_990_000, recurring: false }]);
  });
});

describe('iOS lifecycle: what it cannot place, and bad amounts', () => {
  it.each([
    ['an unknown subtype', 'DID_FAIL_TO_RENEW', 'SOMETHING_NEW', 'DID_FAIL_TO_RENEW/SOMETHING_NEW'],
    ['a future notification type', 'FUTURE_TYPE', null, 'FUTURE_TYPE'],
    ['TEST', 'TEST', null, 'TEST'],
    ['an unknown EXPIRED subtype', 'EXPIRED', 'NEW_REASON', 'EXPIRED/NEW_REASON'],
  ])('%s: no change, `no_op` with the type recorded', (_name, type, subtype, recordedType) => {
    const before = subscribed();
    expect(derive(before, type, subtype)).toMatchObject({ decision: 'no_op', subscription: before, events: [], recordedType });
  });

  it.each([
    ['signedTransactionInfo.price', { price: 2e15 }],
    ['signedTransactionInfo.price', { price: Number.NaN }],
  ])('an amount out of ±10^15 micros is a validation error naming %s', (field, fields) => {
    expect(() => derive(null, 'SUBSCRIBED', 'INITIAL_BUY', transaction(fields))).toThrow(RailFieldError);
    expect(() => derive(null, 'SUBSCRIBED', 'INITIAL_BUY', transaction(fields))).toThrow(field);
  });
});
