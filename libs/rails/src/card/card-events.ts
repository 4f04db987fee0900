/**
 * The card processor's webhook events (Stripe's event and object shapes), reduced to what
 * the rail reads. Pure: parsing and the card state table of docs/rails.md ("Card payments (Stripe)").
 */
import { checkRailAmount, checkRailQuantity, checkRailSeconds, checkRailText } from '../model/rail-bounds.js';
import { cardInvoicePayment, cardPriceLines } from '../model/rail-prices.js';
import type { RailPayment, RailPriceLine } from '../model/rail-revenue-feed.service.js';

export const CARD_SUBSCRIPTION_EVENTS = ['customer.subscription.created', 'customer.subscription.updated', 'customer.subscription.deleted'] as const;
export const CARD_CHECKOUT_COMPLETED = 'checkout.session.completed';
export const CARD_INVOICE_PAID = 'invoice.paid';

/** Subscription statuses that keep entitlements on (until the current period end). */
export const CARD_ACTIVE_STATUSES: readonly string[] = ['active', 'trialing', 'past_due'];

export interface CardCustomerHints {
  /** `metadata.serviceCustomerId` (or `crossdeckCustomerId`): a `cdcust_` id of the project and environment. */
  serviceCustomerId: string | null;
  /** `metadata.developerUserId` (or a checkout session's `client_reference_id`). */
  developerUserId: string | null;
}

/** One item of a subscription (`items.data[]`). */
export interface CardSubscriptionItem {
  /** `prod_…` of the item's price (null when the item carries none). */
  productId: string | null;
  /** Unix seconds: the item's `current_period_end`, else the subscription's. */
  currentPeriodEnd: number | null;
}

export interface CardSubscription {
  id: string;
  /** The card customer (`cus_…`; the processor always sets it on subscriptions). */
  customer: string;
  status: string;
  /** `prod_…` of the first item's price. */
  productId: string | null;
  /** Every item, in the processor's order. */
  items: CardSubscriptionItem[];
  /** Unix seconds: the items' latest `current_period_end`, else the subscription's. */
  currentPeriodEnd: number | null;
  cancelAtPeriodEnd: boolean;
  hints: CardCustomerHints;
  /** Every fixed-price item's price per billing period (revenue ledger); null when none carries one. */
  price: RailPriceLine[] | null;
}

export interface CardCheckoutSession {
  id: string;
  customer: string | null;
  subscription: string | null;
  hints: CardCustomerHints;
}

export type CardEvent =
  | { kind: 'subscription'; id: string; type: string; created: number; livemode: boolean; subscription: CardSubscription }
  | { kind: 'checkout'; id: string; type: string; created: number; livemode: boolean; session: CardCheckoutSession }
  | { kind: 'invoice'; id: string; type: string; created: number; livemode: boolean; customer: string | null; payment: RailPayment | null }
  | { kind: 'ignored'; id: string; type: string; created: number; livemode: boolean };

/** The event is authentic but not the processor's format: 400 invalid_param_value. */
export class CardEventFormatError extends Error {}

/** Where a parsed event's object sits in the event (field names of RailFieldError). */
const OBJECT = 'data.object';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 ? value : null);
const int = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? Math.floor(value) : null);

/** An expandable reference: the id string, or the expanded object's `id`. */
function ref(value: unknown): string | null {
  if (isObject(value)) return str(value.id);
  return str(value);
}

function hints(object: Json, clientReferenceId: unknown = undefined): CardCustomerHints {
  const metadata = isObject(object.metadata) ? object.metadata : {};
  const serviceCustomerId = str(metadata.serviceCustomerId) ?? str(metadata.crossdeckCustomerId);
  const developerUserId = str(metadata.developerUserId);
  const reference = str(clientReferenceId);
  checkRailText(serviceCustomerId, `${OBJECT}.metadata.${str(metadata.serviceCustomerId) ? 'serviceCustomerId' : 'crossdeckCustomerId'}`);
  checkRailText(developerUserId, `${OBJECT}.metadata.developerUserId`);
  checkRailText(reference, `${OBJECT}.client_reference_id`);
  return { serviceCustomerId, developerUserId: developerUserId ?? reference };
}

/** A card amount's minor unit (a cent) in micros of its currency. */
const CARD_MICROS_PER_MINOR_UNIT = 10_000;

function subscription(object: Json): CardSubscription {
  const id = str(object.id);
  const status = str(object.status);
  const customer = ref(object.customer);
  if (object.object !== 'subscription' || !id || !status || !customer)
    throw new CardEventFormatError('data.object is not a subscription (object, id, status, customer)');
  checkRailText(id, `${OBJECT}.id`);
  checkRailText(status, `${OBJECT}.status`);
  checkRailText(customer, `${OBJECT}.customer`);
  checkRailSeconds(int(object.current_period_end), `${OBJECT}.current_period_end`);
  const listed: unknown[] = isObject(object.items) && Array.isArray(object.items.data) ? object.items.data : [];
  listed.forEach((item, index) => {
    if (!isObject(item)) return;
    checkRailSeconds(int(item.current_period_end), `${OBJECT}.items.data[${index}].current_period_end`);
    if (isObject(item.price)) checkRailText(ref(item.price.product), `${OBJECT}.items.data[${index}].price.product`);
    const unitAmount = isObject(item.price) ? item.price.unit_amount : undefined;
    checkRailAmount(unitAmount, `${OBJECT}.items.data[${index}].price.unit_amount`, CARD_MICROS_PER_MINOR_UNIT);
    checkRailQuantity(item.quantity, `${OBJECT}.items.data[${index}].quantity`, typeof unitAmount === 'number' ? unitAmount * CARD_MICROS_PER_MINOR_UNIT : 0);
  });
  const items = listed.filter(isObject);
  const productId = items.length > 0 && isObject(items[0].price) ? ref(items[0].price.product) : null;
  const itemEnds = items.map((item) => int(item.current_period_end)).filter((end): end is number => end !== null);
  const currentPeriodEnd = itemEnds.length > 0 ? Math.max(...itemEnds) : int(object.current_period_end);
  const subscriptionEnd = int(object.current_period_end);
  return {
    id,
    customer,
    status,
    productId,
    items: items.map((item) => ({
      productId: isObject(item.price) ? ref(item.price.product) : null,
      currentPeriodEnd: int(item.current_period_end) ?? subscriptionEnd ?? currentPeriodEnd,
    })),
    currentPeriodEnd,
    cancelAtPeriodEnd: object.cancel_at_period_end === true,
    hints: hints(object),
    price: cardPriceLines(object),
  };
}

/**
 * A subscription object as the processor's API answers it (the same object its events carry).
 * Throws CardEventFormatError or RailFieldError like parseCardEvent.
 */
export function parseCardSubscription(object: unknown): CardSubscription {
  if (!isObject(object)) throw new CardEventFormatError('the subscription is not a JSON object');
  return subscription(object);
}

function checkoutSession(object: Json): CardCheckoutSession {
  const id = str(object.id);
  if (object.object !== 'checkout.session' || !id) throw new CardEventFormatError('data.object is not a checkout session (object, id)');
  checkRailText(id, `${OBJECT}.id`);
  checkRailText(ref(object.customer), `${OBJECT}.customer`);
  checkRailText(ref(object.subscription), `${OBJECT}.subscription`);
  return { id, customer: ref(object.customer), subscription: ref(object.subscription), hints: hints(object, object.client_reference_id) };
}

/**
 * Reads a verified event. Throws CardEventFormatError when it is not the processor's event
 * format, RailFieldError (model/rail-bounds.ts) when a field it stores is out of bounds.
 */
export function parseCardEvent(body: unknown): CardEvent {
  if (!isObject(body)) throw new CardEventFormatError('the event is not a JSON object');
  const id = str(body.id);
  const type = str(body.type);
  const created = int(body.created);
  if (
    body.object !== 'event' ||
    !id ||
    !type ||
    created === null ||
    typeof body.livemode !== 'boolean' ||
    !isObject(body.data) ||
    !isObject(body.data.object)
  ) {
    throw new CardEventFormatError('not an event (object "event", id, type, created, livemode, data.object)');
  }
  checkRailText(id, 'id');
  checkRailText(type, 'type');
  checkRailSeconds(created, 'created');
  const base = { id, type, created, livemode: body.livemode };
  if ((CARD_SUBSCRIPTION_EVENTS as readonly string[]).includes(type)) return { ...base, kind: 'subscription', subscription: subscription(body.data.object) };
  if (type === CARD_CHECKOUT_COMPLETED) return { ...base, kind: 'checkout', session: checkoutSession(body.data.object) };
  if (type === CARD_INVOICE_PAID && body.data.object.object === 'invoice') {
    const customer = ref(body.data.object.customer);
    checkRailText(customer, `${OBJECT}.customer`);
    checkRailAmount(body.data.object.amount_paid, `${OBJECT}.amount_paid`, CARD_MICROS_PER_MINOR_UNIT);
    return { ...base, kind: 'invoice', customer, payment: cardInvoicePayment(body.data.object, created) };
  }
  return { ...base, kind: 'ignored' };
}

/** Active statuses hold until the current period end (also with cancel_at_period_end); the rest are inactive at once. */
export function cardSubscriptionActive(sub: CardSubscription): boolean {
  return CARD_ACTIVE_STATUSES.includes(sub.status);
}
