// The Android rows of the subscription lifecycle: one case per read state or notification row,
// each named after the row it checks.
import type { androidpublisher_v3 } from '@googleapis/androidpublisher';
import { RailFieldError } from '../../libs/rails/src/model/rail-bounds.js';
import { type AndroidLifecycleInput, deriveAndroidLifecycle } from '../../libs/rails/src/lifecycle/android-lifecycle.js';
import type { LifecycleContext, LifecycleResult } from '../../libs/rails/src/lifecycle/lifecycle-outcome.js';
import type { Subscription } from '../../libs/rails/src/lifecycle/subscription.js';

type Read = androidpublisher_v3.Schema$SubscriptionPurchaseV2;
type LineItem = androidpublisher_v3.Schema$SubscriptionPurchaseLineItem;

const DAY = 86_400;
const T0 = 1_800_000_000;
const T1 = T0 + 30 * DAY;
const T2 = T1 + 30 * DAY;
const iso = (seconds: number): string => new Date(seconds * 1000).toISOString();

const ctxAt = (seconds: number): LifecycleContext => ({ nowMs: seconds * 1000, railTimeMs: seconds * 1000, entitlementKeysOf: () => ['pro'] });

function lineItem(fields: Partial<LineItem> = {}): LineItem {
  return {
    productId: 'pro',
    expiryTime: iso(T1),
    latestSuccessfulOrderId: 'GPA.1-0',
    offerDetails: { basePlanId: 'monthly' },
    offerPhase: { basePrice: {} },
    autoRenewingPlan: { autoRenewEnabled: true, recurringPrice: { currencyCode: 'EUR', units: '4', nanos: 990_000_000 } },
    ...fields,
  };
}

function read(state: string, fields: Partial<Read> = {}, item: Partial<LineItem> = {}): Read {
  return { subscriptionState: state, startTime: iso(T0), lineItems: [lineItem(item)], ...fields };
}

function derive(
  previous: Subscription | null,
  notificationType: number | null,
  purchase: Read,
  at = T0 + 60,
  extra: { linked?: Subscription | null } = {},
): LifecycleResult {
  const input: AndroidLifecycleInput = { kind: 'subscription', purchaseToken: 'tok_1', notificationType, read: purchase, ...extra };
  return deriveAndroidLifecycle(previous, input, ctxAt(at));
}

const ACTIVE = 'SUBSCRIPTION_STATE_ACTIVE';
const active = (): Subscription => derive(null, 4, read(ACTIVE)).subscription!;
const types = (result: LifecycleResult) => result.events.map((event) => event.type);

describe('Android lifecycle: SUBSCRIPTION_STATE_ACTIVE', () => {
  it.each([
    ['`active` (a base-price phase)', { offerPhase: { basePrice: {} } }, 'active', 'normal', 4_990_000],
    ['`trialing` while the line item’s offer phase is a free trial (`offerPhase.freeTrial`)', { offerPhase: { freeTrial: {} } }, 'trialing', 'trial', 0],
    [
      '`trialing` for a zero-priced current phase',
      { offerPhase: undefined, autoRenewingPlan: { autoRenewEnabled: true, recurringPrice: { currencyCode: 'EUR', units: '0', nanos: 0 } } },
      'trialing',
      'trial',
      0,
    ],
    ['`intro` for an introductory phase', { offerPhase: { introductoryPrice: {} } }, 'active', 'intro', 4_990_000],
  ])('%s', (_row, item, state, periodType, amountMicros) => {
    const result = derive(null, 4, read(ACTIVE, {}, item));
    expect(result.subscription).toMatchObject({
      state,
      periodType,
      isActive: true,
      accessEndsAt: T1,
      price: { amountMicros, currency: 'EUR' },
      willRenew: true,
    });
    expect(result.events[0]).toEqual({ type: 'subscription.started', periodType, isTrialStart: state === 'trialing' });
  });

  it('a new purchase: the object from the read (micros from units + nanos / 1000), a payment under the order id', () => {
    const result = derive(null, 4, read(ACTIVE, { testPurchase: {} }));
    expect(result.subscription).toMatchObject({
      id: 'tok_1',
      rail: 'android_store',
      productId: 'pro',
      entitlementKeys: ['pro'],
      kind: 'auto_renewing',
      originalPurchasedAt: T0,
      currentPeriodEndsAt: T1,
      storeEnvironment: 'sandbox',
      ownershipType: 'purchased',
    });
    expect(result.ledger).toEqual([
      { kind: 'payment', amountMicros: 4_990_000, currency: 'EUR', railTimeMs: (T0 + 60) * 1000, transactionId: 'GPA.1-0', recurring: true },
    ]);
  });

  it('SUBSCRIPTION_RENEWED: the expiry moved later is a new paid period (`subscription.renewed`)', () => {
    const result = derive(active(), 2, read(ACTIVE, {}, { expiryTime: iso(T2), latestSuccessfulOrderId: 'GPA.1-1' }), T1);
    expect(result.subscription).toMatchObject({ state: 'active', purchasedAt: T1, currentPeriodEndsAt: T2, accessEndsAt: T2 });
    expect(result.events).toEqual([{ type: 'subscription.renewed', isTrialConversion: false }]);
    expect(result.ledger).toMatchObject([{ kind: 'payment', transactionId: 'GPA.1-1' }]);
  });

  it('a read that changes nothing is `no_op`', () => {
    const before = active();
    expect(derive(before, null, read(ACTIVE), T0 + 120)).toMatchObject({ decision: 'no_op', subscription: before, recordedType: ACTIVE });
  });

  it('a read that changes nothing is `no_op` against the object as stored too (its keys in another order)', () => {
    const before = active();
    const reordered = JSON.parse(JSON.stringify(before, Object.keys(before).sort().reverse())) as Subscription;
    reordered.price = { currency: 'EUR', amountMicros: 4_990_000 };
    expect(derive(reordered, 2, read(ACTIVE), T0 + 120)).toMatchObject({ decision: 'no_op', events: [], ledger: [] });
  });

  it('the payment’s order id falls back to the purchase’s `latestOrderId` (older answers)', () => {
    const result = derive(null, 4, read(ACTIVE, { latestOrderId: 'GPA.top-0' } as Partial<Read>, { latestSuccessfulOrderId: undefined }));
    expect(result.ledger).toMatchObject([{ kind: 'payment', transactionId: 'GPA.top-0' }]);
  });
});

describe('Android lifecycle: per read state or notification', () => {
  it('`_IN_GRACE_PERIOD`: `in_grace_period` until the line item’s `expiryTime`', () => {
    const graceEnd = T1 + 7 * DAY;
    const result = derive(active(), 6, read('SUBSCRIPTION_STATE_IN_GRACE_PERIOD', {}, { expiryTime: iso(graceEnd) }), T1);
    expect(result.subscription).toMatchObject({
      state: 'in_grace_period',
      gracePeriodEndsAt: graceEnd,
      accessEndsAt: graceEnd,
      billingIssueDetectedAt: T1,
      isActive: true,
    });
    expect(result.events).toEqual([{ type: 'subscription.billing_issue', gracePeriodEndsAt: graceEnd }]);
    expect(result.subscription).toMatchObject({ purchasedAt: T0 });
    expect(result.ledger).toEqual([]);
    const recovered = derive(result.subscription, 1, read(ACTIVE, {}, { expiryTime: iso(T2), latestSuccessfulOrderId: 'GPA.1-1' }), T1 + 2 * DAY);
    expect(recovered.subscription).toMatchObject({ state: 'active', purchasedAt: T1 + 2 * DAY, billingIssueDetectedAt: null });
    expect(recovered.events).toEqual([
      { type: 'subscription.renewed', isTrialConversion: false },
      { type: 'subscription.recovered', billingIssueDetectedAt: T1 },
    ]);
    expect(recovered.ledger).toMatchObject([{ kind: 'payment', transactionId: 'GPA.1-1' }]);
  });

  it('`_ON_HOLD`: `on_hold` (`billingIssueDetectedAt` kept), no access', () => {
    const grace = derive(active(), 6, read('SUBSCRIPTION_STATE_IN_GRACE_PERIOD', {}, { expiryTime: iso(T1 + 7 * DAY) }), T1).subscription!;
    const result = derive(grace, 5, read('SUBSCRIPTION_STATE_ON_HOLD', {}, { expiryTime: iso(T1 + 7 * DAY) }), T1 + 7 * DAY);
    expect(result.subscription).toMatchObject({ state: 'on_hold', billingIssueDetectedAt: T1, willRenew: false, isActive: false });
    expect(result.events).toEqual([]);
    // The same hold read later moves nothing.
    expect(derive(result.subscription, 5, read('SUBSCRIPTION_STATE_ON_HOLD', {}, { expiryTime: iso(T1 + 7 * DAY) }), T1 + 9 * DAY).decision).toBe('no_op');
  });

  it('`_PAUSED`: `paused`, `autoResumeAt` from `pausedStateContext.autoResumeTime`', () => {
    const resume = T1 + 30 * DAY;
    const result = derive(active(), 10, read('SUBSCRIPTION_STATE_PAUSED', { pausedStateContext: { autoResumeTime: iso(resume) } }), T1);
    expect(result.subscription).toMatchObject({ state: 'paused', pausedAt: T1, autoResumeAt: resume, willRenew: false, isActive: false });
    expect(result.events).toEqual([{ type: 'subscription.paused', autoResumeAt: resume }]);
    const resumed = derive(result.subscription, 7, read(ACTIVE, {}, { expiryTime: iso(resume + 30 * DAY) }), resume);
    expect(resumed.subscription).toMatchObject({ state: 'active', pausedAt: null, autoResumeAt: null, isActive: true });
    expect(types(resumed)).toContain('subscription.resumed');
  });

  it('`PAUSE_SCHEDULE_CHANGED`: a scheduled pause sets only `autoResumeAt`', () => {
    const resume = T1 + 30 * DAY;
    const result = derive(active(), 11, read(ACTIVE, { pausedStateContext: { autoResumeTime: iso(resume) } }), T0 + DAY);
    expect(result.subscription).toMatchObject({ state: 'active', autoResumeAt: resume, pausedAt: null, isActive: true });
    expect(result.events).toEqual([]);
  });

  it.each([
    ['user', 'unsubscribe', { userInitiatedCancellation: { cancelTime: iso(T0 + DAY) } }],
    ['system', 'billing_error', { systemInitiatedCancellation: {} }],
    ['developer', 'developer_initiated', { developerInitiatedCancellation: {} }],
    ['replacement', 'replaced', { replacementCancellation: {} }],
  ])('`_CANCELED` (%s): `active` until expiry with `willRenew: false` and `expirationReason` %s', (_who, reason, canceledStateContext) => {
    const result = derive(
      active(),
      3,
      read('SUBSCRIPTION_STATE_CANCELED', { canceledStateContext }, { autoRenewingPlan: { autoRenewEnabled: false } }),
      T0 + DAY,
    );
    expect(result.subscription).toMatchObject({
      state: 'active',
      willRenew: false,
      expirationReason: reason,
      unsubscribeDetectedAt: T0 + DAY,
      accessEndsAt: T1,
      isActive: true,
    });
    expect(result.events).toEqual([{ type: 'subscription.canceled', reason: reason === 'replaced' ? 'unknown' : reason }]);
  });

  it('`_EXPIRED`: `expired` with that reason', () => {
    const canceledStateContext = { userInitiatedCancellation: {} };
    const canceled = derive(active(), 3, read('SUBSCRIPTION_STATE_CANCELED', { canceledStateContext }), T0 + DAY).subscription!;
    const result = derive(canceled, 13, read('SUBSCRIPTION_STATE_EXPIRED', { canceledStateContext }), T1 + 60);
    expect(result.subscription).toMatchObject({ state: 'expired', expirationReason: 'unsubscribe', expiredAt: T1, accessEndsAt: T1, isActive: false });
    expect(result.events).toEqual([{ type: 'subscription.expired', expirationReason: 'unsubscribe' }]);
    // Read again later (another notification): still ended when it ended.
    expect(derive(result.subscription, 13, read('SUBSCRIPTION_STATE_EXPIRED', { canceledStateContext }), T2).decision).toBe('no_op');
  });

  it.each([
    ['SUBSCRIPTION_RECOVERED', 1],
    ['SUBSCRIPTION_RESTARTED', 7],
  ])('%s: `active`; recovered clears `billingIssueDetectedAt`', (_name, type) => {
    const hold = derive(active(), 5, read('SUBSCRIPTION_STATE_ON_HOLD'), T1 + DAY).subscription!;
    const result = derive(hold, type, read(ACTIVE, {}, { expiryTime: iso(T2 + DAY), latestSuccessfulOrderId: 'GPA.1-1' }), T1 + DAY * 2);
    expect(result.subscription).toMatchObject({ state: 'active', billingIssueDetectedAt: null, willRenew: true, isActive: true });
    expect(result.events).toContainEqual({ type: 'subscription.recovered', billingIssueDetectedAt: T1 + DAY });
  });

  it('SUBSCRIPTION_RESTARTED after a cancellation: auto-renew on again (`subscription.uncanceled`)', () => {
    const canceled = derive(
      active(),
      3,
      read('SUBSCRIPTION_STATE_CANCELED', { canceledStateContext: { userInitiatedCancellation: {} } }),
      T0 + DAY,
    ).subscription!;
    const result = derive(canceled, 7, read(ACTIVE), T0 + 2 * DAY);
    expect(result.subscription).toMatchObject({ willRenew: true, unsubscribeDetectedAt: null, expirationReason: null });
    expect(result.events).toEqual([{ type: 'subscription.uncanceled', reason: 'unsubscribe' }]);
  });

  it('SUBSCRIPTION_REVOKED: `refunded` at once, whatever the read state says', () => {
    const result = derive(active(), 12, read('SUBSCRIPTION_STATE_EXPIRED'), T0 + 3 * DAY);
    expect(result.subscription).toMatchObject({ state: 'refunded', refundedAt: T0 + 3 * DAY, accessEndsAt: T0 + 3 * DAY, isActive: false });
    expect(result.events).toEqual([{ type: 'subscription.refunded', reason: 'refund', amountMicros: 4_990_000, currency: 'EUR' }]);
  });

  it('SUBSCRIPTION_REVOKED: a refund of the latest order in the ledger (the order id the voided-purchases entry names)', () => {
    const result = derive(active(), 12, read('SUBSCRIPTION_STATE_EXPIRED', {}, { latestSuccessfulOrderId: 'GPA.1-1' }), T0 + 3 * DAY);
    expect(result.ledger).toEqual([{ kind: 'refund', amountMicros: 4_990_000, currency: 'EUR', railTimeMs: (T0 + 3 * DAY) * 1000, transactionId: 'GPA.1-1' }]);
    // Seen again (the token is refunded): nothing more.
    expect(derive(result.subscription, 12, read('SUBSCRIPTION_STATE_EXPIRED'), T0 + 4 * DAY)).toMatchObject({ decision: 'no_op', ledger: [] });
  });

  it('SUBSCRIPTION_REVOKED of a token first seen revoked: its order paid, then refunded', () => {
    const result = derive(null, 12, read(ACTIVE), T0 + DAY);
    expect(result.ledger).toMatchObject([
      { kind: 'payment', amountMicros: 4_990_000, transactionId: 'GPA.1-0' },
      { kind: 'refund', amountMicros: 4_990_000, currency: 'EUR', transactionId: 'GPA.1-0' },
    ]);
    expect(types(result)).toEqual(['subscription.refunded']);
  });

  it('SUBSCRIPTION_REVOKED of a subscription that states no price: the order’s recorded payment is the amount; without one, no amount', () => {
    const unpriced: Subscription = { ...active(), price: null };
    const paid = deriveAndroidLifecycle(
      unpriced,
      { kind: 'subscription', purchaseToken: 'tok_1', notificationType: 12, read: read(ACTIVE), orderPayment: { amountMicros: 3_990_000, currency: 'EUR' } },
      ctxAt(T0 + DAY),
    );
    expect(paid.ledger).toMatchObject([{ kind: 'refund', amountMicros: 3_990_000, currency: 'EUR', transactionId: 'GPA.1-0' }]);
    expect(paid.events).toEqual([{ type: 'subscription.refunded', reason: 'refund', amountMicros: 3_990_000, currency: 'EUR' }]);
    const unknown = derive(unpriced, 12, read(ACTIVE), T0 + DAY);
    expect(unknown.ledger).toMatchObject([{ kind: 'refund', amountMicros: null, currency: null, transactionId: 'GPA.1-0' }]);
    expect(unknown.events).toEqual([{ type: 'subscription.refunded', reason: 'refund', amountMicros: null, currency: null }]);
  });

  it.each([
    ['OUTSTANDING', 'pending'],
    ['CONFIRMED', 'accepted'],
    ['APPLIED', 'applied'],
  ])('SUBSCRIPTION_PRICE_CHANGE_CONFIRMED and a line item’s `priceChangeDetails` (%s): `priceChange` `%s`', (priceChangeState, state) => {
    const autoRenewingPlan = {
      autoRenewEnabled: true,
      recurringPrice: { currencyCode: 'EUR', units: '4', nanos: 990_000_000 },
      priceChangeDetails: { priceChangeState, newPrice: { currencyCode: 'EUR', units: '5', nanos: 490_000_000 }, expectedNewPriceChargeTime: iso(T1) },
    };
    const result = derive(active(), 8, read(ACTIVE, {}, { autoRenewingPlan }), T0 + DAY);
    const priceChange = { state, amountMicros: 5_490_000, currency: 'EUR', effectiveAt: T1 };
    expect(result.subscription?.priceChange).toEqual(priceChange);
    expect(result.events).toEqual([{ type: 'subscription.price_change', priceChange }]);
  });

  it('SUBSCRIPTION_DEFERRED: `accessEndsAt` moved (event `subscription.extended`), no payment', () => {
    const result = derive(active(), 9, read(ACTIVE, {}, { expiryTime: iso(T1 + 14 * DAY) }), T0 + DAY);
    expect(result.subscription).toMatchObject({ accessEndsAt: T1 + 14 * DAY, purchasedAt: T0 });
    expect(result.events).toEqual([{ type: 'subscription.extended', previousAccessEndsAt: T1 }]);
    expect(result.ledger).toEqual([]);
  });

  describe('a purchase with `linkedPurchaseToken`', () => {
    const upgrade = () => read(ACTIVE, { linkedPurchaseToken: 'tok_old' }, { productId: 'pro_yearly', expiryTime: iso(T0 + 365 * DAY) });

    it('the linked (old) token’s subscription ends at once with `expirationReason: "replaced"`', () => {
      const old = active();
      const result = deriveAndroidLifecycle(old, { kind: 'replaced', byPurchaseToken: 'tok_1' }, ctxAt(T0 + 5 * DAY));
      expect(result.subscription).toMatchObject({ state: 'expired', expirationReason: 'replaced', expiredAt: T0 + 5 * DAY, isActive: false });
      expect(result.events).toEqual([{ type: 'subscription.expired', expirationReason: 'replaced' }]);
    });

    it('the replaced token stays ended when the store then cancels and expires it', () => {
      const replaced = deriveAndroidLifecycle(active(), { kind: 'replaced', byPurchaseToken: 'tok_1' }, ctxAt(T0 + 5 * DAY)).subscription!;
      const canceled = read('SUBSCRIPTION_STATE_CANCELED', { canceledStateContext: { replacementCancellation: {} } });
      expect(derive(replaced, 3, canceled, T0 + 5 * DAY + 10)).toMatchObject({ decision: 'no_op', subscription: replaced });
      expect(derive(replaced, 13, read('SUBSCRIPTION_STATE_EXPIRED'), T0 + 6 * DAY)).toMatchObject({ decision: 'no_op', events: [] });
    });

    it('unless its line item carries a deferred replacement: then at its expiry', () => {
      const old = derive(null, 4, read(ACTIVE, {}, { deferredItemReplacement: { productId: 'pro_yearly' } })).subscription!;
      expect(old.pendingProductId).toBe('pro_yearly');
      const result = deriveAndroidLifecycle(old, { kind: 'replaced', byPurchaseToken: 'tok_1' }, ctxAt(T0 + 5 * DAY));
      expect(result.subscription).toMatchObject({ state: 'active', willRenew: false, expirationReason: 'replaced', accessEndsAt: T1, isActive: true });
    });

    it('the new one is a `subscription.product_changed` of the same customer, not a new start', () => {
      const old = active();
      const result = derive(null, 4, upgrade(), T0 + 5 * DAY, { linked: old });
      expect(result.subscription).toMatchObject({ productId: 'pro_yearly', originalPurchasedAt: T0, state: 'active' });
      expect(result.events).toEqual([{ type: 'subscription.product_changed', previousProductId: 'pro', effective: 'immediate' }]);
    });
  });
});

describe('Android lifecycle: voided purchases', () => {
  it.each([
    ['a refund (`voidedReason` 1)', 'refund', 1],
    ['a chargeback (`voidedReason` 7)', 'chargeback', 7],
    ['a chargeback (`voidedReason` 8)', 'chargeback', 8],
    ['a chargeback (`voidedReason` 9)', 'chargeback', 9],
    ['a notification without a reason', 'refund', undefined],
  ])('VOIDED_PURCHASE, %s: `refunded` at once, a %s in the ledger', (_name, kind, voidedReason) => {
    const voidedAt = T0 + 4 * DAY;
    const result = deriveAndroidLifecycle(
      active(),
      { kind: 'voided', purchaseToken: 'tok_1', entry: { orderId: 'GPA.1-0', voidedReason, voidedTimeMillis: String(voidedAt * 1000) } },
      ctxAt(voidedAt + 60),
    );
    expect(result.subscription).toMatchObject({ state: 'refunded', refundedAt: voidedAt, isActive: false });
    expect(result.ledger).toEqual([{ kind, amountMicros: 4_990_000, currency: 'EUR', railTimeMs: voidedAt * 1000, transactionId: 'GPA.1-0' }]);
    expect(result.events).toEqual([{ type: 'subscription.refunded', reason: kind, amountMicros: 4_990_000, currency: 'EUR' }]);
  });

  it('a voided purchase token never gives access again, whatever a later subscriptionsv2 read says', () => {
    const voided = deriveAndroidLifecycle(active(), { kind: 'voided', purchaseToken: 'tok_1', entry: { orderId: 'GPA.1-0' } }, ctxAt(T0 + DAY)).subscription!;
    const later = derive(voided, 2, read(ACTIVE, {}, { expiryTime: iso(T2) }), T1);
    expect(later).toMatchObject({ decision: 'no_op', subscription: { state: 'refunded', isActive: false } });
    expect(later.events).toEqual([]);
  });

  it('a voided order of a subscription that states no price: the order’s recorded payment is the amount (a stated price wins)', () => {
    const entry = { orderId: 'GPA.1-0', voidedReason: 1 };
    const orderPayment = { amountMicros: 3_990_000, currency: 'EUR' };
    const unpriced = deriveAndroidLifecycle({ ...active(), price: null }, { kind: 'voided', purchaseToken: 'tok_1', entry, orderPayment }, ctxAt(T0 + DAY));
    expect(unpriced.ledger).toMatchObject([{ kind: 'refund', amountMicros: 3_990_000, currency: 'EUR', transactionId: 'GPA.1-0' }]);
    expect(unpriced.events).toEqual([{ type: 'subscription.refunded', reason: 'refund', amountMicros: 3_990_000, currency: 'EUR' }]);
    const priced = deriveAndroidLifecycle(active(), { kind: 'voided', purchaseToken: 'tok_1', entry, orderPayment }, ctxAt(T0 + DAY));
    expect(priced.ledger).toMatchObject([{ amountMicros: 4_990_000 }]);
    const neither = deriveAndroidLifecycle({ ...active(), price: null }, { kind: 'voided', purchaseToken: 'tok_1', entry }, ctxAt(T0 + DAY));
    expect(neither.ledger).toMatchObject([{ amountMicros: null, currency: null }]);
  });

  it('a voided purchase of a token the service never saw is a ledger fact without a subscription', () => {
    const result = deriveAndroidLifecycle(null, { kind: 'voided', purchaseToken: 'tok_x', entry: { orderId: 'GPA.9-0', voidedReason: 7 } }, ctxAt(T0));
    expect(result).toMatchObject({ decision: 'applied', subscription: null, ledger: [{ kind: 'chargeback', amountMicros: null, transactionId: 'GPA.9-0' }] });
  });
});

describe('Android lifecycle: one-time products, states it cannot place, bad amounts', () => {
  it('a one-time product purchased (`purchaseState` 0) is `non_renewing`, `active`, lifetime (`purchase.completed`)', () => {
    const result = deriveAndroidLifecycle(
      null,
      { kind: 'product', purchaseToken: 'tok_p', productId: 'coins', notificationType: 1, read: { purchaseState: 0, purchaseTimeMillis: String(T0 * 1000) } },
      ctxAt(T0 + 5),
    );
    expect(result.subscription).toMatchObject({ kind: 'non_renewing', state: 'active', accessEndsAt: null, purchasedAt: T0, isActive: true });
    expect(types(result)).toEqual(['subscription.started', 'purchase.completed']);
  });

  it.each(['SUBSCRIPTION_STATE_PENDING', 'SUBSCRIPTION_STATE_UNSPECIFIED', 'SUBSCRIPTION_STATE_FUTURE'])(
    '%s: no change, `no_op` with the state recorded',
    (state) => {
      expect(derive(null, null, read(state))).toMatchObject({ decision: 'no_op', subscription: null, recordedType: state });
    },
  );

  it('an unknown notification type on a read is recorded by its number', () => {
    const before = active();
    expect(derive(before, 99, read(ACTIVE), T0 + 120)).toMatchObject({ decision: 'no_op', recordedType: 'SUBSCRIPTION_NOTIFICATION_99' });
  });

  it.each([
    ['units beyond ±10^15 micros', 'purchase.lineItems[0].autoRenewingPlan.recurringPrice', { currencyCode: 'EUR', units: '1000000001', nanos: 0 }],
    ['units that are not an integer', 'purchase.lineItems[0].autoRenewingPlan.recurringPrice.units', { currencyCode: 'EUR', units: '4.5', nanos: 0 }],
    ['nanos out of range', 'purchase.lineItems[0].autoRenewingPlan.recurringPrice.nanos', { currencyCode: 'EUR', units: '4', nanos: 1_000_000_000 }],
  ])('%s: a validation error naming %s', (_name, field, recurringPrice) => {
    const call = () => derive(null, 4, read(ACTIVE, {}, { autoRenewingPlan: { recurringPrice } }));
    expect(call).toThrow(RailFieldError);
    expect(call).toThrow(`${field}:`);
  });
});
