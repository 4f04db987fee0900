/**
 * Google Play real-time developer notifications (a Pub/Sub push) and the purchases read
 * from the Android Publisher API, reduced to what the rail needs. Pure.
 */
import { RAIL_MAX_AMOUNT_MICROS, RailFieldError, checkRailAmount, checkRailMillis, checkRailSeconds, checkRailText } from '../model/rail-bounds.js';
import { type AndroidPricedLineItem, androidPriceLines } from '../model/rail-prices.js';
import type { RailPriceLine } from '../model/rail-revenue-feed.service.js';

export const SUBSCRIPTION_NOTIFICATION_TYPES: Record<number, string> = {
  1: 'SUBSCRIPTION_RECOVERED',
  2: 'SUBSCRIPTION_RENEWED',
  3: 'SUBSCRIPTION_CANCELED',
  4: 'SUBSCRIPTION_PURCHASED',
  5: 'SUBSCRIPTION_ON_HOLD',
  6: 'SUBSCRIPTION_IN_GRACE_PERIOD',
  7: 'SUBSCRIPTION_RESTARTED',
  8: 'SUBSCRIPTION_PRICE_CHANGE_CONFIRMED',
  9: 'SUBSCRIPTION_DEFERRED',
  10: 'SUBSCRIPTION_PAUSED',
  11: 'SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED',
  12: 'SUBSCRIPTION_REVOKED',
  13: 'SUBSCRIPTION_EXPIRED',
  20: 'SUBSCRIPTION_PENDING_PURCHASE_CANCELED',
};

export const ONE_TIME_NOTIFICATION_TYPES: Record<number, string> = {
  1: 'ONE_TIME_PRODUCT_PURCHASED',
  2: 'ONE_TIME_PRODUCT_CANCELED',
};

/** Subscription states that keep entitlements on until the line item's expiry. */
export const ANDROID_ACTIVE_STATES: readonly string[] = ['SUBSCRIPTION_STATE_ACTIVE', 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD', 'SUBSCRIPTION_STATE_CANCELED'];

export interface PushEnvelope {
  /** base64 of the DeveloperNotification JSON. */
  data: string;
  messageId: string | null;
}

export type AndroidNotification =
  | {
      kind: 'subscription';
      eventType: string;
      packageName: string;
      eventTimeMillis: number;
      purchaseToken: string;
      subscriptionId: string | null;
      revoked: boolean;
    }
  | { kind: 'one_time'; eventType: string; packageName: string; eventTimeMillis: number; purchaseToken: string; sku: string }
  | {
      kind: 'voided';
      eventType: 'VOIDED_PURCHASE';
      packageName: string;
      eventTimeMillis: number;
      purchaseToken: string;
      productType: number | null;
      orderId: string | null;
    }
  | { kind: 'test'; eventType: 'TEST_NOTIFICATION'; packageName: string; eventTimeMillis: number };

export class AndroidFormatError extends Error {}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);
const num = (value: unknown): number | null => {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  return null;
};

/** The push envelope: `message.data` (a string), `message.messageId` (or `message_id`). Null when it is not one. */
export function readPushEnvelope(body: Json): PushEnvelope | null {
  const message = body.message;
  if (!isObject(message) || typeof message.data !== 'string') return null;
  return { data: message.data, messageId: str(message.messageId) ?? str(message.message_id) };
}

/** Throws RailFieldError when the envelope's message id is out of bounds (checked once the push is authenticated). */
export function checkEnvelopeBounds(envelope: PushEnvelope): void {
  checkRailText(envelope.messageId, 'message.messageId');
}

/**
 * Decodes `message.data`. Throws AndroidFormatError when it is not a developer notification,
 * RailFieldError (`message.data.<path>`) when a field the rail stores is out of bounds.
 */
export function parseDeveloperNotification(data: string): AndroidNotification {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(data, 'base64').toString('utf8'));
  } catch {
    throw new AndroidFormatError('message.data is not base64 JSON');
  }
  if (!isObject(decoded)) throw new AndroidFormatError('message.data is not a JSON object');
  const packageName = str(decoded.packageName);
  const eventTimeMillis = num(decoded.eventTimeMillis);
  if (!packageName || eventTimeMillis === null) throw new AndroidFormatError('the developer notification lacks packageName or eventTimeMillis');
  checkRailText(packageName, 'message.data.packageName');
  checkRailMillis(eventTimeMillis, 'message.data.eventTimeMillis');
  const base = { packageName, eventTimeMillis };
  if (isObject(decoded.subscriptionNotification)) {
    const n = decoded.subscriptionNotification;
    const type = num(n.notificationType);
    const purchaseToken = str(n.purchaseToken);
    if (type === null || !SUBSCRIPTION_NOTIFICATION_TYPES[type] || !purchaseToken)
      throw new AndroidFormatError('subscriptionNotification lacks a known notificationType or purchaseToken');
    checkRailText(purchaseToken, 'message.data.subscriptionNotification.purchaseToken');
    checkRailText(str(n.subscriptionId), 'message.data.subscriptionNotification.subscriptionId');
    return {
      ...base,
      kind: 'subscription',
      eventType: SUBSCRIPTION_NOTIFICATION_TYPES[type],
      purchaseToken,
      subscriptionId: str(n.subscriptionId),
      revoked: type === 12,
    };
  }
  if (isObject(decoded.oneTimeProductNotification)) {
    const n = decoded.oneTimeProductNotification;
    const type = num(n.notificationType);
    const purchaseToken = str(n.purchaseToken);
    const sku = str(n.sku);
    if (type === null || !ONE_TIME_NOTIFICATION_TYPES[type] || !purchaseToken || !sku)
      throw new AndroidFormatError('oneTimeProductNotification lacks a known notificationType, purchaseToken or sku');
    checkRailText(purchaseToken, 'message.data.oneTimeProductNotification.purchaseToken');
    checkRailText(sku, 'message.data.oneTimeProductNotification.sku');
    return { ...base, kind: 'one_time', eventType: ONE_TIME_NOTIFICATION_TYPES[type], purchaseToken, sku };
  }
  if (isObject(decoded.voidedPurchaseNotification)) {
    const n = decoded.voidedPurchaseNotification;
    const purchaseToken = str(n.purchaseToken);
    if (!purchaseToken) throw new AndroidFormatError('voidedPurchaseNotification lacks purchaseToken');
    checkRailText(purchaseToken, 'message.data.voidedPurchaseNotification.purchaseToken');
    checkRailText(str(n.orderId), 'message.data.voidedPurchaseNotification.orderId');
    return { ...base, kind: 'voided', eventType: 'VOIDED_PURCHASE', purchaseToken, productType: num(n.productType), orderId: str(n.orderId) };
  }
  if (isObject(decoded.testNotification)) return { ...base, kind: 'test', eventType: 'TEST_NOTIFICATION' };
  throw new AndroidFormatError('the developer notification carries no known notification');
}

/** What the rail reads of `purchases.subscriptionsv2.get` (SubscriptionPurchaseV2). */
export interface AndroidSubscriptionRead {
  subscriptionState?: string | null;
  acknowledgementState?: string | null;
  linkedPurchaseToken?: string | null;
  testPurchase?: object | null;
  externalAccountIdentifiers?: { obfuscatedExternalAccountId?: string | null } | null;
  lineItems?: ({ productId?: string | null; expiryTime?: string | null } & AndroidPricedLineItem)[] | null;
  startTime?: string | null;
  latestOrderId?: string | null;
}

/** What the rail reads of `purchases.products.get` (ProductPurchase). */
export interface AndroidProductRead {
  purchaseState?: number | null;
  acknowledgementState?: number | null;
  purchaseType?: number | null;
  obfuscatedExternalAccountId?: string | null;
  productId?: string | null;
}

export interface AndroidPurchaseState {
  productId: string | null;
  active: boolean;
  /** Unix seconds; null = lifetime. */
  validUntil: number | null;
  rawStatus: string;
  sandbox: boolean;
  needsAcknowledgement: boolean;
  obfuscatedAccountId: string | null;
  linkedPurchaseToken: string | null;
  /** The line items' recurring prices (revenue ledger), and the latest order's id (a payment, counted once). */
  price?: RailPriceLine[] | null;
  orderId?: string | null;
}

/** Field names of a Publisher API read in RailFieldError. */
const READ = 'purchase';

/** The state of a `subscriptionsv2.get` read; RailFieldError (`purchase.<path>`) when a field the rail stores is out of bounds. */
export function subscriptionState(read: AndroidSubscriptionRead, fallbackProductId: string | null): AndroidPurchaseState {
  const items = read.lineItems ?? [];
  const expiries = items.map((item) => (item.expiryTime ? Date.parse(item.expiryTime) : NaN)).filter((ms) => Number.isFinite(ms));
  const state = read.subscriptionState ?? 'SUBSCRIPTION_STATE_UNSPECIFIED';
  items.forEach((item, index) => {
    checkRailText(item.productId, `${READ}.lineItems[${index}].productId`);
    const ms = item.expiryTime ? Date.parse(item.expiryTime) : NaN;
    if (Number.isFinite(ms)) checkRailSeconds(Math.floor(ms / 1000), `${READ}.lineItems[${index}].expiryTime`);
    const price = item.autoRenewingPlan?.recurringPrice;
    if (price) {
      const field = `${READ}.lineItems[${index}].autoRenewingPlan.recurringPrice`;
      checkRailAmount(price.units, `${field}.units`, 1_000_000);
      checkRailAmount(price.nanos, `${field}.nanos`, 0.001);
      if (typeof price.nanos === 'number' && Math.abs(price.nanos) > 999_999_999) throw new RailFieldError(`${field}.nanos`, 'must be within ±999,999,999');
      const micros = Number(price.units ?? 0) * 1_000_000 + Math.round((price.nanos ?? 0) / 1000);
      if (Math.abs(micros) > RAIL_MAX_AMOUNT_MICROS)
        throw new RailFieldError(`${field}.units`, `must be an amount within ±${RAIL_MAX_AMOUNT_MICROS / 1e6} units of its currency`);
    }
  });
  checkRailText(state, `${READ}.subscriptionState`);
  checkRailText(read.linkedPurchaseToken, `${READ}.linkedPurchaseToken`);
  checkRailText(read.externalAccountIdentifiers?.obfuscatedExternalAccountId, `${READ}.externalAccountIdentifiers.obfuscatedExternalAccountId`);
  return {
    productId: items.find((item) => item.productId)?.productId ?? fallbackProductId,
    active: ANDROID_ACTIVE_STATES.includes(state),
    validUntil: expiries.length > 0 ? Math.floor(Math.max(...expiries) / 1000) : null,
    rawStatus: state,
    sandbox: read.testPurchase !== undefined && read.testPurchase !== null,
    needsAcknowledgement: read.acknowledgementState === 'ACKNOWLEDGEMENT_STATE_PENDING',
    obfuscatedAccountId: read.externalAccountIdentifiers?.obfuscatedExternalAccountId ?? null,
    linkedPurchaseToken: read.linkedPurchaseToken ?? null,
    price: androidPriceLines(items, read.startTime),
    orderId: typeof read.latestOrderId === 'string' && read.latestOrderId.length > 0 && read.latestOrderId.length <= 512 ? read.latestOrderId : null,
  };
}

const PURCHASE_STATES: Record<number, string> = { 0: 'PURCHASED', 1: 'CANCELED', 2: 'PENDING' };

/** The state of a `products.get` read; RailFieldError (`purchase.<name>`) when a field the rail stores is out of bounds. */
export function productState(read: AndroidProductRead, sku: string): AndroidPurchaseState {
  const purchaseState = read.purchaseState ?? 0;
  checkRailText(read.productId, `${READ}.productId`);
  checkRailText(read.obfuscatedExternalAccountId, `${READ}.obfuscatedExternalAccountId`);
  return {
    productId: read.productId ?? sku,
    active: purchaseState === 0,
    validUntil: null,
    rawStatus: PURCHASE_STATES[purchaseState] ?? `PURCHASE_STATE_${purchaseState}`,
    sandbox: read.purchaseType === 0,
    needsAcknowledgement: read.acknowledgementState === 0,
    obfuscatedAccountId: read.obfuscatedExternalAccountId ?? null,
    linkedPurchaseToken: null,
  };
}
