import { invoiceSubscriptionId, paymentIdsOf } from '../../libs/rails/src/card/card-lifecycle-wiring.js';
import { moneyReturnOf, recordAccessOf } from '../../libs/rails/src/model/rail-record-access.js';
import type { Subscription } from '../../libs/rails/src/lifecycle/subscription.js';
import { orderSubscriptions, subscriptionOfRecord } from '../../libs/rails/src/subscriptions/subscription-reads.service.js';

const T = 1_800_000_000;
const DAY = 86_400;

function subscription(over: Partial<Subscription>): Subscription {
  return {
    object: 'subscription',
    id: 'sub_1',
    rail: 'card_payments',
    productId: 'prod_pro',
    entitlementKeys: ['pro'],
    kind: 'auto_renewing',
    state: 'active',
    periodType: 'normal',
    willRenew: true,
    isActive: true,
    purchasedAt: T,
    originalPurchasedAt: T,
    currentPeriodStartsAt: T,
    currentPeriodEndsAt: T + 30 * DAY,
    accessEndsAt: T + 30 * DAY,
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
    storeEnvironment: 'sandbox',
    updatedAt: T,
    ...over,
  };
}

describe('card rail record access follows the subscription state', () => {
  const items = [
    { productId: 'prod_pro', validUntil: T + 30 * DAY },
    { productId: 'prod_addon', validUntil: T + 10 * DAY },
  ];

  it.each([
    ['active', T + 30 * DAY, 'active', 'active', [T + 30 * DAY, T + 10 * DAY]],
    ['trialing', T + 7 * DAY, 'active', 'inactive', [T + 7 * DAY, T + 7 * DAY]],
    ['in_grace_period', T + 3 * DAY, 'active', 'active', [T + 3 * DAY, T + 3 * DAY]],
    ['in_billing_retry', T, 'active', 'inactive', [T, T]],
    ['paused', T + 30 * DAY, 'active', 'inactive', [T + 30 * DAY, T + 30 * DAY]],
    ['expired', T, 'inactive', 'inactive', [T, T]],
    ['refunded', T + 1, 'inactive', 'inactive', [T + 1, T + 1]],
  ] as const)('%s: record %s until accessEndsAt, revenue %s', (state, accessEndsAt, recordState, revenueState, ends) => {
    const access = recordAccessOf(subscription({ state, accessEndsAt }), items);
    expect(access.state).toBe(recordState);
    expect(access.revenueState).toBe(revenueState);
    expect(access.items.map((item) => item.validUntil)).toEqual(ends);
    expect(access.validUntil).toBe(Math.max(...ends));
    expect(access.endedBy).toBe(state === 'refunded' ? 'revoked' : 'expired');
  });

  it('lifetime access keeps the items as they are', () => {
    expect(recordAccessOf(subscription({ accessEndsAt: null }), [{ productId: 'p', validUntil: null }]).validUntil).toBeNull();
  });
});

describe('what an invoice, charge or dispute names', () => {
  it('the subscription of an invoice (top level or under parent), the payment ids of a charge or dispute', () => {
    expect(invoiceSubscriptionId({ object: 'invoice', subscription: 'sub_a' })).toBe('sub_a');
    expect(invoiceSubscriptionId({ object: 'invoice', parent: { subscription_details: { subscription: { id: 'sub_b' } } } })).toBe('sub_b');
    expect(invoiceSubscriptionId({ object: 'charge', id: 'ch_1' })).toBeNull();
    expect(paymentIdsOf({ object: 'charge', id: 'ch_1', payment_intent: 'pi_1' })).toEqual(['ch_1', 'pi_1']);
    expect(paymentIdsOf({ object: 'dispute', id: 'dp_1', charge: { id: 'ch_2' } })).toEqual(['ch_2']);
  });

  it('ledger facts as money returned: refunds keyed by the event, disputes by their id; payments and amountless facts are not', () => {
    const base = { currency: 'USD', railTimeMs: T * 1000 };
    expect(moneyReturnOf({ ...base, kind: 'refund', amountMicros: 5_000_000, transactionId: 'ch_1' }, 'evt_1', 'sub_1')).toEqual(
      expect.objectContaining({ kind: 'refund', factId: 'refund:evt_1', amount: { micros: 5_000_000 }, subscriptionId: 'sub_1' }),
    );
    expect(moneyReturnOf({ ...base, kind: 'reversal', amountMicros: 1, transactionId: 'dp_1' }, 'evt_2', null)?.factId).toBe('reversal:dp_1');
    expect(moneyReturnOf({ ...base, kind: 'payment', amountMicros: 1, transactionId: 'in_1' }, 'evt_3', null)).toBeNull();
    expect(moneyReturnOf({ ...base, kind: 'refund', amountMicros: null, transactionId: 'ch_1' }, 'evt_4', null)).toBeNull();
  });
});

describe('subscription reads', () => {
  const record = {
    rail: 'ios_store' as const,
    subscriptionId: '2000000000000001',
    customerId: 'cdcust_1',
    productId: 'pro.monthly',
    state: 'active' as const,
    validUntil: T + DAY,
    items: [{ productId: 'pro.monthly', validUntil: T + DAY }],
    railTimeMs: T * 1000,
    rawStatus: 'DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_DISABLED',
    lastEventId: null,
    updatedAt: T,
  };

  it('a record without a stored object: active or expired from its state and end, a normal period, no price', () => {
    expect(subscriptionOfRecord(record, ['pro'], 'production', T)).toEqual(
      expect.objectContaining({ state: 'active', isActive: true, willRenew: false, accessEndsAt: T + DAY, price: null, periodType: 'normal' }),
    );
    expect(subscriptionOfRecord(record, ['pro'], 'sandbox', T + DAY)).toEqual(
      expect.objectContaining({ state: 'expired', isActive: false, expiredAt: T + DAY, expirationReason: 'unknown', storeEnvironment: 'sandbox' }),
    );
    expect(subscriptionOfRecord({ ...record, state: 'inactive', railTimeMs: (T + 10) * 1000 }, [], 'sandbox', T + 20).expiredAt).toBe(T + 10);
    expect(subscriptionOfRecord({ ...record, validUntil: null }, [], 'sandbox', T).kind).toBe('non_renewing');
  });

  it('live first, then the latest change first', () => {
    const ordered = orderSubscriptions([
      subscription({ id: 'a', isActive: false, updatedAt: T + 9 }),
      subscription({ id: 'b', isActive: true, updatedAt: T + 1 }),
      subscription({ id: 'c', isActive: true, updatedAt: T + 5 }),
    ]);
    expect(ordered.map((s) => s.id)).toEqual(['c', 'b', 'a']);
  });
});
