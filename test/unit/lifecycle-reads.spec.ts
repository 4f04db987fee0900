// Reads of the App Store (and purchase sync) move the subscription object like notifications; the
// causes of entitlement updates follow the lifecycle's events; a transfer's event.
import type { JWSRenewalInfoDecodedPayload, JWSTransactionDecodedPayload } from '@apple/app-store-server-library';
import { type IosReadInput, deriveIosLifecycle, deriveIosRead } from '../../libs/rails/src/lifecycle/ios-lifecycle.js';
import { type LifecycleContext, type LifecycleEvent, differs } from '../../libs/rails/src/lifecycle/lifecycle-outcome.js';
import type { Subscription } from '../../libs/rails/src/lifecycle/subscription.js';
import { RailFieldError } from '../../libs/rails/src/model/rail-bounds.js';
import { iosMoneyReturnOf } from '../../libs/rails/src/model/rail-record-access.js';
import { lifecycleChangeCauses, transferredEvent } from '../../libs/rails/src/model/subscription-events.js';

const DAY = 86_400;
const T0 = 1_800_000_000;
const T1 = T0 + 30 * DAY;
const T2 = T1 + 30 * DAY;

const ctxAt = (nowSeconds: number): LifecycleContext => ({ nowMs: nowSeconds * 1000, railTimeMs: nowSeconds * 1000, entitlementKeysOf: () => ['pro'] });

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
const renewal = (fields: Partial<JWSRenewalInfoDecodedPayload> = {}): JWSRenewalInfoDecodedPayload => ({
  originalTransactionId: '1000',
  autoRenewProductId: 'pro_monthly',
  autoRenewStatus: 1,
  ...fields,
});
const read = (status: number | null, tx = transaction(), info: JWSRenewalInfoDecodedPayload | null = renewal()): IosReadInput => ({
  status,
  transaction: tx,
  renewalInfo: info,
  recordedType: 'reconciliation',
});
const types = (events: readonly LifecycleEvent[]) => events.map((event) => event.type);

describe('deriveIosRead: the App Store read (status, transaction, renewal info)', () => {
  const subscribed = deriveIosLifecycle(
    null,
    { notificationType: 'SUBSCRIBED', subtype: 'INITIAL_BUY', transaction: transaction(), renewalInfo: renewal() },
    ctxAt(T0 + 10),
  ).subscription!;

  it('status 1, first news: the subscription the transaction describes, started, priced', () => {
    const result = deriveIosRead(null, read(1), ctxAt(T0 + 10));
    expect(result.decision).toBe('applied');
    expect(result.subscription).toEqual(
      expect.objectContaining({ state: 'active', currentPeriodStartsAt: T0, currentPeriodEndsAt: T1, price: { amountMicros: 9_990_000, currency: 'USD' } }),
    );
    expect(types(result.events)).toEqual(['subscription.started']);
    expect(result.ledger).toEqual([]);
  });

  it('status 1, the period the notification already placed: no_op (a read changes nothing it knew)', () => {
    expect(deriveIosRead(subscribed, read(1), ctxAt(T0 + 20)).decision).toBe('no_op');
  });

  it('status 1 with a later period: renewed', () => {
    const next = transaction({ transactionId: '2001', purchaseDate: T1 * 1000, expiresDate: T2 * 1000 });
    const result = deriveIosRead(subscribed, read(1, next), ctxAt(T1 + 10));
    expect(result.subscription).toEqual(expect.objectContaining({ state: 'active', currentPeriodEndsAt: T2 }));
    expect(types(result.events)).toEqual(['subscription.renewed']);
  });

  it('status 4: in the grace period until the renewal info says, a billing issue once', () => {
    const info = renewal({ gracePeriodExpiresDate: (T1 + 6 * DAY) * 1000 });
    const result = deriveIosRead(subscribed, read(4, transaction(), info), ctxAt(T1 + 10));
    expect(result.subscription).toEqual(
      expect.objectContaining({ state: 'in_grace_period', billingIssueDetectedAt: T1 + 10, gracePeriodEndsAt: T1 + 6 * DAY, accessEndsAt: T1 + 6 * DAY }),
    );
    expect(types(result.events)).toEqual(['subscription.billing_issue']);
    // Read again later: the same problem, nothing new.
    expect(deriveIosRead(result.subscription, read(4, transaction(), info), ctxAt(T1 + 100)).decision).toBe('no_op');
  });

  it('status 3: billing retry, access until the paid period end, willRenew false', () => {
    const result = deriveIosRead(subscribed, read(3), ctxAt(T1 + 10));
    expect(result.subscription).toEqual(expect.objectContaining({ state: 'in_billing_retry', willRenew: false, accessEndsAt: T1, isActive: false }));
  });

  it('status 2: expired with the renewal info expirationIntent; a second read is no_op', () => {
    const result = deriveIosRead(subscribed, read(2, transaction(), renewal({ autoRenewStatus: 0, expirationIntent: 2 })), ctxAt(T1 + 10));
    expect(result.subscription).toEqual(expect.objectContaining({ state: 'expired', expirationReason: 'billing_error', expiredAt: T1 }));
    expect(types(result.events)).toEqual(['subscription.expired']);
    expect(deriveIosRead(result.subscription, read(2, transaction(), renewal({ autoRenewStatus: 0 })), ctxAt(T1 + 99)).decision).toBe('no_op');
  });

  it('status 5 or a revocationDate: refunded at once, the refund a ledger fact of the transaction (as the REFUND notification books it)', () => {
    const result = deriveIosRead(subscribed, read(5, transaction({ revocationDate: (T0 + DAY) * 1000 })), ctxAt(T0 + DAY + 5));
    expect(result.subscription).toEqual(expect.objectContaining({ state: 'refunded', refundedAt: T0 + DAY, accessEndsAt: T0 + DAY }));
    expect(result.events).toEqual([{ type: 'subscription.refunded', reason: 'refund', amountMicros: 9_990_000, currency: 'USD' }]);
    const refund = { kind: 'refund', amountMicros: 9_990_000, currency: 'USD', railTimeMs: (T0 + DAY) * 1000, transactionId: transaction().transactionId };
    expect(result.ledger).toEqual([refund]);
    const notified = deriveIosLifecycle(
      subscribed,
      { notificationType: 'REFUND', transaction: transaction({ revocationDate: (T0 + DAY) * 1000 }), renewalInfo: null },
      ctxAt(T0 + DAY + 5),
    );
    expect(notified.ledger).toEqual([refund]);
    // One key whichever books it first: the notification (its UUID at hand) and the read (none).
    const keyOf = (fact: (typeof result.ledger)[number], eventId: string) => iosMoneyReturnOf(fact, eventId, 'orig')?.factId;
    expect(keyOf(notified.ledger[0], 'notification-uuid')).toBe(`refund:${refund.transactionId}`);
    expect(keyOf(result.ledger[0], '')).toBe(`refund:${refund.transactionId}`);
    // The REFUND notification after the read: the same refund, not announced again.
    const after = deriveIosLifecycle(
      result.subscription,
      { notificationType: 'REFUND', transaction: transaction({ revocationDate: (T0 + DAY) * 1000 }), renewalInfo: null },
      ctxAt(T0 + DAY + 60),
    );
    expect(after.events).toEqual([]);
    expect(after.ledger).toEqual([refund]);
    expect(deriveIosRead(result.subscription, read(5, transaction({ revocationDate: (T0 + DAY) * 1000 })), ctxAt(T0 + DAY + 50)).decision).toBe('no_op');
  });

  it('status null (purchase sync): the transaction alone says active, or expired once past its end', () => {
    expect(deriveIosRead(null, read(null, transaction(), null), ctxAt(T0 + 10)).subscription?.state).toBe('active');
    expect(deriveIosRead(null, read(null, transaction(), null), ctxAt(T1 + 10)).subscription).toEqual(
      expect.objectContaining({ state: 'expired', expirationReason: 'unknown', expiredAt: T1 }),
    );
  });

  it('a status it cannot place is no_op; an amount out of range throws RailFieldError', () => {
    expect(deriveIosRead(subscribed, read(9), ctxAt(T0 + 10)).decision).toBe('no_op');
    expect(() => deriveIosRead(null, read(1, transaction({ price: 2e12 })), ctxAt(T0 + 10))).toThrow(RailFieldError);
  });
});

describe('differs: a stored object against a derived one', () => {
  it('key order inside nested values does not count (jsonb reorders keys)', () => {
    const a = { price: { amountMicros: 1, currency: 'USD' } } as unknown as Subscription;
    const b = { price: { currency: 'USD', amountMicros: 1 } } as unknown as Subscription;
    expect(differs(a, b)).toBe(false);
    expect(differs(a, { price: { currency: 'USD', amountMicros: 2 } } as unknown as Subscription)).toBe(true);
  });
});

describe('lifecycleChangeCauses: why keys moved with a lifecycle change', () => {
  const next = { state: 'inactive' as const, productId: 'p', validUntil: 1, rawStatus: 'x' };
  const refunded = (reason: 'refund' | 'chargeback' | 'family_revoked'): LifecycleEvent => ({
    type: 'subscription.refunded',
    reason,
    amountMicros: 1,
    currency: 'USD',
  });

  it.each<[string, LifecycleEvent[], 'activated' | 'extended' | 'deactivated', string]>([
    ['a chargeback', [refunded('chargeback')], 'deactivated', 'chargeback'],
    ['a refund', [refunded('refund')], 'deactivated', 'refund'],
    ['a pause', [{ type: 'subscription.paused', autoResumeAt: null }], 'deactivated', 'pause'],
    [
      'a product change (old keys)',
      [{ type: 'subscription.product_changed', previousProductId: 'a', effective: 'immediate' }],
      'deactivated',
      'product_change',
    ],
    ['a product change (new keys)', [{ type: 'subscription.product_changed', previousProductId: 'a', effective: 'immediate' }], 'activated', 'product_change'],
    ['an extension', [{ type: 'subscription.extended', previousAccessEndsAt: 1 }], 'extended', 'extension'],
    ['a reversed refund', [{ type: 'subscription.refund_reversed', amountMicros: 1, currency: 'USD' }], 'activated', 'refund_reversed'],
    ['a billing problem', [{ type: 'subscription.billing_issue', gracePeriodEndsAt: null }], 'deactivated', 'billing_issue'],
    ['an expiry for billing', [{ type: 'subscription.expired', expirationReason: 'billing_error' }], 'deactivated', 'billing_issue'],
    ['an expiry', [{ type: 'subscription.expired', expirationReason: 'unsubscribe' }], 'deactivated', 'expiration'],
    ['a purchase', [{ type: 'subscription.started', periodType: 'normal', isTrialStart: false }], 'activated', 'purchase'],
    ['a renewal', [{ type: 'subscription.renewed', isTrialConversion: false }], 'extended', 'renewal'],
  ])('%s', (_name, events, change, cause) => {
    expect(lifecycleChangeCauses(events, next)[change]).toBe(cause);
  });
});

describe('transferredEvent', () => {
  it('carries fromServiceCustomerId, the subscription and the flat fields filled from it; no rail event id', () => {
    const subscription = deriveIosRead(null, read(1), ctxAt(T0 + 10)).subscription!;
    const event = transferredEvent({ rail: 'ios_store', subscriptionId: '1000', productId: 'pro_monthly' }, subscription, 'cdcust_a', 'cdcust_b', 'rail_evt_x');
    expect(event).toEqual({
      type: 'subscription.transferred',
      data: {
        serviceCustomerId: 'cdcust_b',
        fromServiceCustomerId: 'cdcust_a',
        rail: 'ios_store',
        subscriptionId: '1000',
        productId: 'pro_monthly',
        state: 'active',
        validUntil: T1,
        willRenew: true,
        priceMicros: 9_990_000,
        currency: 'USD',
        subscription,
        railEventId: null,
        auditEventId: 'rail_evt_x',
      },
    });
  });
});
