import { parseCardEvent } from '../../libs/rails/src/card/card-events.js';
import { cents } from '../../libs/reporting/src/revenue/revenue-reads.service.js';
import { checkEnvelopeBounds, parseDeveloperNotification, productState, subscriptionState } from '../../libs/rails/src/android/android-notifications.js';
import { checkNotificationBounds, checkRenewalBounds } from '../../libs/rails/src/ios/ios-notifications.js';
import { checkTransactionBounds } from '../../libs/rails/src/ios/ios-store-rules.js';
import {
  RAIL_ID_MAX_CHARS,
  RAIL_MAX_UNIX_MS,
  RAIL_MAX_UNIX_SECONDS,
  RailFieldError,
  checkRailAmount,
  checkRailMillis,
  checkRailQuantity,
  checkRailSeconds,
  checkRailText,
} from '../../libs/rails/src/model/rail-bounds.js';

const LONG = 'x'.repeat(RAIL_ID_MAX_CHARS + 1);
const TWO_63 = 2 ** 63;

/** The RailFieldError thrown by `run`, by field. */
function fieldOf(run: () => unknown): string | null {
  try {
    run();
    return null;
  } catch (err) {
    if (err instanceof RailFieldError) return err.field;
    throw err;
  }
}

describe('rail field bounds', () => {
  it('ids: up to 512 characters of storable text; times: 0 to the end of year 9999', () => {
    expect(fieldOf(() => checkRailText('x'.repeat(RAIL_ID_MAX_CHARS), 'id'))).toBeNull();
    expect(fieldOf(() => checkRailText(null, 'id'))).toBeNull();
    expect(fieldOf(() => checkRailText(LONG, 'id'))).toBe('id');
    expect(fieldOf(() => checkRailText('a\u0000b', 'id'))).toBe('id');
    expect(fieldOf(() => checkRailText('a\ud800', 'id'))).toBe('id');
    expect(fieldOf(() => checkRailSeconds(RAIL_MAX_UNIX_SECONDS, 't'))).toBeNull();
    for (const bad of [RAIL_MAX_UNIX_SECONDS + 1, -1, 1e308, TWO_63, Infinity, NaN]) expect(fieldOf(() => checkRailSeconds(bad, 't'))).toBe('t');
    expect(fieldOf(() => checkRailMillis(RAIL_MAX_UNIX_MS, 't'))).toBeNull();
    for (const bad of [RAIL_MAX_UNIX_MS + 1, -1, 1e308, TWO_63]) expect(fieldOf(() => checkRailMillis(bad, 't'))).toBe('t');
    expect(new RailFieldError('created', 'must be …').message).toBe('created: must be …');
  });

  describe('card events', () => {
    const sub = (o: Record<string, unknown> = {}, item: Record<string, unknown> = {}) => ({
      id: 'sub_1',
      object: 'subscription',
      customer: 'cus_1',
      status: 'active',
      current_period_end: 1_800_000_000,
      items: { data: [{ current_period_end: 1_800_000_000, price: { product: 'prod_1' }, ...item }] },
      ...o,
    });
    const event = (o: Record<string, unknown> = {}, object: Record<string, unknown> = sub()) => ({
      id: 'evt_1',
      object: 'event',
      type: 'customer.subscription.created',
      created: 1_700_000_000,
      livemode: false,
      data: { object },
      ...o,
    });

    it('a well-formed event parses', () => {
      expect(parseCardEvent(event()).kind).toBe('subscription');
    });

    it.each([
      ['created', () => event({ created: 1e308 })],
      ['created', () => event({ created: TWO_63 })],
      ['created', () => event({ created: -5 })],
      ['id', () => event({ id: `evt_${LONG}` })],
      ['type', () => event({ type: LONG })],
      ['data.object.id', () => event({}, sub({ id: `sub_${LONG}` }))],
      ['data.object.customer', () => event({}, sub({ customer: `cus_${LONG}` }))],
      ['data.object.customer', () => event({}, sub({ customer: { id: `cus_${LONG}` } }))],
      ['data.object.status', () => event({}, sub({ status: 'a\u0000' }))],
      ['data.object.current_period_end', () => event({}, sub({ current_period_end: 1e308 }))],
      ['data.object.items.data[0].current_period_end', () => event({}, sub({}, { current_period_end: TWO_63 }))],
      ['data.object.items.data[0].price.product', () => event({}, sub({}, { price: { product: LONG } }))],
      ['data.object.metadata.serviceCustomerId', () => event({}, sub({ metadata: { serviceCustomerId: LONG } }))],
      ['data.object.metadata.developerUserId', () => event({}, sub({ metadata: { developerUserId: LONG } }))],
      ['data.object.customer', () => event({ type: 'checkout.session.completed' }, { id: 'cs_1', object: 'checkout.session', customer: LONG })],
      ['data.object.subscription', () => event({ type: 'checkout.session.completed' }, { id: 'cs_1', object: 'checkout.session', subscription: LONG })],
      [
        'data.object.client_reference_id',
        () => event({ type: 'checkout.session.completed' }, { id: 'cs_1', object: 'checkout.session', client_reference_id: LONG }),
      ],
    ])('%s out of bounds', (field, make) => {
      expect(fieldOf(() => parseCardEvent(make()))).toBe(field);
    });
  });

  describe('iOS store', () => {
    const notification = { notificationType: 'SUBSCRIBED', notificationUUID: 'u-1', signedDate: 1_700_000_000_000, data: { bundleId: 'com.example' } };
    it('notifications, transactions and renewal infos', () => {
      expect(fieldOf(() => checkNotificationBounds(notification))).toBeNull();
      expect(fieldOf(() => checkNotificationBounds({ ...notification, notificationUUID: LONG }))).toBe('signedPayload.notificationUUID');
      expect(fieldOf(() => checkNotificationBounds({ ...notification, signedDate: 1e308 }))).toBe('signedPayload.signedDate');
      expect(fieldOf(() => checkNotificationBounds({ ...notification, subtype: LONG }))).toBe('signedPayload.subtype');
      expect(fieldOf(() => checkNotificationBounds({ ...notification, data: { bundleId: 'a\u0000' } }))).toBe('signedPayload.data.bundleId');
      const tx = { transactionId: '1', originalTransactionId: '1', productId: 'p', signedDate: 1_700_000_000_000, expiresDate: 1_800_000_000_000 };
      expect(fieldOf(() => checkTransactionBounds(tx, 'signedTransactionInfo'))).toBeNull();
      expect(fieldOf(() => checkTransactionBounds({ ...tx, originalTransactionId: LONG }, 'signedTransactionInfo'))).toBe(
        'signedTransactionInfo.originalTransactionId',
      );
      expect(fieldOf(() => checkTransactionBounds({ ...tx, transactionId: LONG }, 'signedTransactionInfo'))).toBe('signedTransactionInfo.transactionId');
      expect(fieldOf(() => checkTransactionBounds({ ...tx, expiresDate: TWO_63 }, 'signedTransactionInfo'))).toBe('signedTransactionInfo.expiresDate');
      expect(fieldOf(() => checkTransactionBounds({ ...tx, revocationDate: -1 }, 'signedTransactionInfo'))).toBe('signedTransactionInfo.revocationDate');
      expect(fieldOf(() => checkRenewalBounds({ gracePeriodExpiresDate: 1e308 }))).toBe('signedRenewalInfo.gracePeriodExpiresDate');
    });
  });

  describe('Android store', () => {
    const data = (o: Record<string, unknown>) =>
      Buffer.from(JSON.stringify({ version: '1.0', packageName: 'com.example', eventTimeMillis: '1', ...o })).toString('base64');
    it('the push envelope and the developer notification', () => {
      expect(fieldOf(() => checkEnvelopeBounds({ data: '', messageId: LONG }))).toBe('message.messageId');
      expect(fieldOf(() => checkEnvelopeBounds({ data: '', messageId: '123' }))).toBeNull();
      const sub = (n: Record<string, unknown>) => data({ subscriptionNotification: { notificationType: 4, purchaseToken: 'tok', ...n } });
      expect(fieldOf(() => parseDeveloperNotification(sub({})))).toBeNull();
      expect(fieldOf(() => parseDeveloperNotification(sub({ purchaseToken: LONG })))).toBe('message.data.subscriptionNotification.purchaseToken');
      expect(fieldOf(() => parseDeveloperNotification(sub({ subscriptionId: LONG })))).toBe('message.data.subscriptionNotification.subscriptionId');
      expect(fieldOf(() => parseDeveloperNotification(data({ eventTimeMillis: String(TWO_63), testNotification: {} })))).toBe('message.data.eventTimeMillis');
      expect(fieldOf(() => parseDeveloperNotification(data({ packageName: LONG, testNotification: {} })))).toBe('message.data.packageName');
      expect(fieldOf(() => parseDeveloperNotification(data({ oneTimeProductNotification: { notificationType: 1, purchaseToken: 't', sku: LONG } })))).toBe(
        'message.data.oneTimeProductNotification.sku',
      );
      expect(fieldOf(() => parseDeveloperNotification(data({ voidedPurchaseNotification: { purchaseToken: LONG } })))).toBe(
        'message.data.voidedPurchaseNotification.purchaseToken',
      );
    });

    it('purchases read from the Publisher API', () => {
      const read = { subscriptionState: 'SUBSCRIPTION_STATE_ACTIVE', lineItems: [{ productId: 'p', expiryTime: '2030-01-01T00:00:00Z' }] };
      expect(subscriptionState(read, null).validUntil).toBe(Date.parse('2030-01-01T00:00:00Z') / 1000);
      expect(fieldOf(() => subscriptionState({ ...read, externalAccountIdentifiers: { obfuscatedExternalAccountId: LONG } }, null))).toBe(
        'purchase.externalAccountIdentifiers.obfuscatedExternalAccountId',
      );
      expect(fieldOf(() => subscriptionState({ ...read, linkedPurchaseToken: LONG }, null))).toBe('purchase.linkedPurchaseToken');
      expect(fieldOf(() => subscriptionState({ ...read, lineItems: [{ productId: LONG }] }, null))).toBe('purchase.lineItems[0].productId');
      expect(fieldOf(() => subscriptionState({ ...read, lineItems: [{ productId: 'p', expiryTime: '+275760-09-13T00:00:00.000Z' }] }, null))).toBe(
        'purchase.lineItems[0].expiryTime',
      );
      expect(fieldOf(() => productState({ obfuscatedExternalAccountId: LONG }, 'sku'))).toBe('purchase.obfuscatedExternalAccountId');
      expect(fieldOf(() => productState({ productId: LONG }, 'sku'))).toBe('purchase.productId');
    });
  });

  describe('amounts: within ±10^15 micros and a safe integer', () => {
    it.each([
      [0, 10_000, null],
      [100_000_000_000, 10_000, null],
      [-100_000_000_000, 10_000, null],
      [100_000_000_001, 10_000, 'a'],
      [1e308, 10_000, 'a'],
      [2 ** 63, 10_000, 'a'],
      [2 ** 53 + 1, 1, 'a'],
      [Infinity, 1, 'a'],
      [NaN, 1, 'a'],
      [1.5, 1, 'a'],
      ['12', 1_000_000, null],
      ['1000000000', 1_000_000, null],
      ['1000000001', 1_000_000, 'a'],
      ['9223372036854775807', 1_000_000, 'a'],
      ['12.5', 1_000_000, 'a'],
      [999_999_999, 0.001, null],
    ])('checkRailAmount(%j, ×%j): refused naming %j (null: accepted)', (value, microsPerUnit, expected) => {
      expect(fieldOf(() => checkRailAmount(value, 'a', microsPerUnit))).toBe(expected);
    });

    it('quantities: integers from 0 whose total stays within the bound', () => {
      expect(fieldOf(() => checkRailQuantity(3, 'q', 10_000))).toBeNull();
      expect(fieldOf(() => checkRailQuantity(undefined, 'q', 10_000))).toBeNull();
      for (const bad of [1e308, 2 ** 63, 2 ** 53 + 1, -1, 1.5, '2']) expect(fieldOf(() => checkRailQuantity(bad, 'q', 10_000))).toBe('q');
      expect(fieldOf(() => checkRailQuantity(1_000_001, 'q', 1_000_000_000))).toBe('q');
    });

    it('iOS price (milli-units) and Android units and nanos name their field', () => {
      const tx = { transactionId: '1', originalTransactionId: '1', productId: 'p', signedDate: 1, price: 9990 };
      expect(fieldOf(() => checkTransactionBounds(tx, 'signedTransactionInfo'))).toBeNull();
      for (const price of [1e308, 2 ** 63, 2 ** 53 + 1, 1e13]) {
        expect(fieldOf(() => checkTransactionBounds({ ...tx, price }, 'signedTransactionInfo'))).toBe('signedTransactionInfo.price');
      }
      const read = (units: unknown, nanos: unknown) => ({
        lineItems: [{ productId: 'p', autoRenewingPlan: { recurringPrice: { currencyCode: 'USD', units, nanos } } }],
      });
      const field = 'purchase.lineItems[0].autoRenewingPlan.recurringPrice';
      expect(fieldOf(() => subscriptionState(read('9', 990_000_000) as never, null))).toBeNull();
      expect(fieldOf(() => subscriptionState(read('9223372036854775807', 0) as never, null))).toBe(`${field}.units`);
      expect(fieldOf(() => subscriptionState(read(1e308, 0) as never, null))).toBe(`${field}.units`);
      expect(fieldOf(() => subscriptionState(read('1000000000', 999_999_999) as never, null))).toBe(`${field}.units`);
      expect(fieldOf(() => subscriptionState(read('1', 1e308) as never, null))).toBe(`${field}.nanos`);
      expect(fieldOf(() => subscriptionState(read('1', 2 ** 53 + 1) as never, null))).toBe(`${field}.nanos`);
    });

    it('a revenue figure that is not a safe integer fails the read instead of reading null under "measured"', () => {
      expect(cents(1234.4)).toBe(1234);
      for (const bad of [Infinity, -Infinity, NaN, 9.2e21]) expect(() => cents(bad)).toThrow(/revenue figure out of range/);
    });
  });
});
