import { cardSubscriptionActive, CardEventFormatError, parseCardEvent } from '../../libs/rails/src/card/card-events.js';
import {
  AndroidFormatError,
  parseDeveloperNotification,
  productState,
  readPushEnvelope,
  subscriptionState,
} from '../../libs/rails/src/android/android-notifications.js';
import { stateOfNotification } from '../../libs/rails/src/ios/ios-notifications.js';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

describe('card events', () => {
  const sub = {
    id: 'sub_1',
    object: 'subscription',
    customer: { id: 'cus_1', object: 'customer' },
    status: 'active',
    current_period_end: 100,
    metadata: { serviceCustomerId: 'cdcust_x' },
    items: {
      data: [
        { current_period_end: 200, price: { product: { id: 'prod_1' } } },
        { current_period_end: 300, price: { product: 'prod_2' } },
      ],
    },
  };
  const event = (type: string, object: unknown) => ({ id: 'evt_1', object: 'event', type, created: 10, livemode: false, data: { object } });

  it('reads subscriptions: expanded references, first item product, latest item period end', () => {
    const parsed = parseCardEvent(event('customer.subscription.updated', sub));
    expect(parsed).toEqual(
      expect.objectContaining({
        kind: 'subscription',
        subscription: expect.objectContaining({
          id: 'sub_1',
          customer: 'cus_1',
          productId: 'prod_1',
          currentPeriodEnd: 300,
          hints: { serviceCustomerId: 'cdcust_x', developerUserId: null },
        }),
      }),
    );
  });

  it('falls back to the subscription period end; checkout sessions take client_reference_id', () => {
    const parsed = parseCardEvent(event('customer.subscription.created', { ...sub, items: { data: [] } }));
    expect(parsed.kind === 'subscription' && parsed.subscription.currentPeriodEnd).toBe(100);
    const checkout = parseCardEvent(
      event('checkout.session.completed', { id: 'cs_1', object: 'checkout.session', customer: 'cus_1', client_reference_id: 'user_1' }),
    );
    expect(checkout).toEqual(
      expect.objectContaining({ kind: 'checkout', session: expect.objectContaining({ hints: { serviceCustomerId: null, developerUserId: 'user_1' } }) }),
    );
    expect(parseCardEvent(event('invoice.paid', { id: 'in_1' })).kind).toBe('ignored');
  });

  it('refuses what is not an event', () => {
    expect(() => parseCardEvent({ id: 'evt_1' })).toThrow(CardEventFormatError);
    expect(() => parseCardEvent(event('customer.subscription.updated', { id: 'x', object: 'invoice' }))).toThrow(CardEventFormatError);
  });

  it.each([
    ['active', true],
    ['trialing', true],
    ['past_due', true],
    ['canceled', false],
    ['unpaid', false],
    ['incomplete', false],
    ['incomplete_expired', false],
    ['paused', false],
  ])('status %s active: %s', (status, active) => {
    const parsed = parseCardEvent(event('customer.subscription.updated', { ...sub, status }));
    expect(parsed.kind === 'subscription' && cardSubscriptionActive(parsed.subscription)).toBe(active);
  });
});

describe('Android notifications', () => {
  it('reads the push envelope and the developer notification', () => {
    expect(readPushEnvelope({ message: { data: 'x', message_id: '7' } })).toEqual({ data: 'x', messageId: '7' });
    expect(readPushEnvelope({ message: {} })).toBeNull();
    const n = parseDeveloperNotification(
      b64({ packageName: 'com.a', eventTimeMillis: '5', subscriptionNotification: { notificationType: 12, purchaseToken: 'tok', subscriptionId: 'pro' } }),
    );
    expect(n).toEqual({
      kind: 'subscription',
      eventType: 'SUBSCRIPTION_REVOKED',
      packageName: 'com.a',
      eventTimeMillis: 5,
      purchaseToken: 'tok',
      subscriptionId: 'pro',
      revoked: true,
    });
    expect(
      parseDeveloperNotification(
        b64({ packageName: 'com.a', eventTimeMillis: 5, oneTimeProductNotification: { notificationType: 2, purchaseToken: 't', sku: 's' } }),
      ).eventType,
    ).toBe('ONE_TIME_PRODUCT_CANCELED');
    expect(() =>
      parseDeveloperNotification(b64({ packageName: 'com.a', eventTimeMillis: 5, subscriptionNotification: { notificationType: 99, purchaseToken: 't' } })),
    ).toThrow(AndroidFormatError);
  });

  it('maps the read purchase to a state', () => {
    const read = {
      subscriptionState: 'SUBSCRIPTION_STATE_CANCELED',
      acknowledgementState: 'ACKNOWLEDGEMENT_STATE_PENDING',
      testPurchase: {},
      externalAccountIdentifiers: { obfuscatedExternalAccountId: 'acct' },
      lineItems: [{ productId: 'pro', expiryTime: '2030-01-01T00:00:00Z' }],
    };
    expect(subscriptionState(read, null)).toEqual({
      productId: 'pro',
      active: true,
      validUntil: Date.parse('2030-01-01T00:00:00Z') / 1000,
      rawStatus: 'SUBSCRIPTION_STATE_CANCELED',
      sandbox: true,
      needsAcknowledgement: true,
      obfuscatedAccountId: 'acct',
      linkedPurchaseToken: null,
      price: null,
      orderId: null,
    });
    expect(subscriptionState({ ...read, subscriptionState: 'SUBSCRIPTION_STATE_ON_HOLD' }, null).active).toBe(false);
    expect(productState({ purchaseState: 0, purchaseType: 0, acknowledgementState: 0 }, 'sku')).toEqual(
      expect.objectContaining({ productId: 'sku', active: true, validUntil: null, sandbox: true, needsAcknowledgement: true }),
    );
    expect(productState({ purchaseState: 1 }, 'sku')).toEqual(expect.objectContaining({ active: false, sandbox: false }));
  });
});

describe('iOS notification states', () => {
  const tx = { originalTransactionId: 'o', productId: 'p', expiresDate: 10_000 };
  it.each([
    ['SUBSCRIBED', undefined, { state: 'active', validUntil: 10 }],
    ['DID_RENEW', undefined, { state: 'active', validUntil: 10 }],
    ['DID_FAIL_TO_RENEW', 'GRACE_PERIOD', { state: 'active', validUntil: 20 }],
    ['EXPIRED', 'VOLUNTARY', { state: 'inactive', endedBy: 'expired', validUntil: 5 }],
    ['REFUND', undefined, { state: 'inactive', endedBy: 'revoked', validUntil: 5 }],
    ['REVOKE', undefined, { state: 'inactive', endedBy: 'revoked', validUntil: 5 }],
  ])('%s/%s', (notificationType, subtype, expected) => {
    expect(stateOfNotification({ notificationType, subtype, signedDate: 5_000 }, tx, { gracePeriodExpiresDate: 20_000 })).toEqual(
      expect.objectContaining(expected),
    );
  });

  it('ONE_TIME_CHARGE is lifetime; other types change nothing', () => {
    expect(stateOfNotification({ notificationType: 'ONE_TIME_CHARGE', signedDate: 1 }, { productId: 'p' }, null)).toEqual(
      expect.objectContaining({ state: 'active', validUntil: null }),
    );
    expect(stateOfNotification({ notificationType: 'DID_FAIL_TO_RENEW', signedDate: 1 }, tx, null)).toBeNull();
    expect(stateOfNotification({ notificationType: 'TEST', signedDate: 1 }, tx, null)).toBeNull();
  });
});
