/**
 * The prices and payments the rails' own payloads carry, read for the revenue ledger. Pure:
 * amounts stay in the rail's unit (card minor units, store millionths); the ledger
 * normalises them to a month.
 */
import type { BillingPeriodUnit, RailPayment, RailPriceLine } from './rail-revenue-feed.service.js';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const PERIOD_UNITS: readonly string[] = ['day', 'week', 'month', 'year'];
const finite = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** ISO 4217 code in upper case, or null when the value is not three letters. */
export function currencyCode(value: unknown): string | null {
  return typeof value === 'string' && /^[A-Za-z]{3}$/.test(value) ? value.toUpperCase() : null;
}

/**
 * Card: one line per subscription item with a fixed price (`items.data[].price.unit_amount`,
 * `currency`, `recurring.interval` / `interval_count`, the item's `quantity`); null when no
 * item carries one (metered or tiered prices).
 */
export function cardPriceLines(subscription: Json): RailPriceLine[] | null {
  const listed: unknown[] = isObject(subscription.items) && Array.isArray(subscription.items.data) ? subscription.items.data : [];
  const lines: RailPriceLine[] = [];
  for (const item of listed) {
    if (!isObject(item) || !isObject(item.price)) continue;
    const price = item.price;
    const amount = finite(price.unit_amount);
    const currency = currencyCode(price.currency);
    const recurring = isObject(price.recurring) ? price.recurring : null;
    const unit =
      recurring && typeof recurring.interval === 'string' && PERIOD_UNITS.includes(recurring.interval) ? (recurring.interval as BillingPeriodUnit) : null;
    if (amount === null || amount < 0 || !currency || !unit) continue;
    const count = finite(recurring?.interval_count);
    const quantity = finite(item.quantity);
    lines.push({
      currency,
      amount: { minor: Math.round(amount) },
      quantity: quantity !== null && quantity >= 0 ? Math.floor(quantity) : 1,
      period: { unit, count: count !== null && count >= 1 ? Math.floor(count) : 1 },
      periodMs: null,
    });
  }
  return lines.length > 0 ? lines : null;
}

/** Card `invoice.paid`: the invoice's paid amount; recurring when it bills a subscription. */
export function cardInvoicePayment(invoice: Json, createdSeconds: number): RailPayment | null {
  const id = typeof invoice.id === 'string' && invoice.id.length > 0 && invoice.id.length <= 512 ? invoice.id : null;
  const amount = finite(invoice.amount_paid);
  const currency = currencyCode(invoice.currency);
  if (!id || amount === null || amount <= 0 || !currency) return null;
  const transitions = isObject(invoice.status_transitions) ? invoice.status_transitions : {};
  const paidAt = finite(transitions.paid_at) ?? createdSeconds;
  const subscription =
    invoice.subscription ??
    (isObject(invoice.parent) && isObject(invoice.parent.subscription_details) ? invoice.parent.subscription_details.subscription : null);
  return {
    transactionId: id,
    currency,
    amount: { minor: Math.round(amount) },
    recurring: Boolean(subscription),
    paidAtMs: Math.floor(paidAt) * 1000,
    subscriptionId: typeof subscription === 'string' && subscription.length > 0 && subscription.length <= 512 ? subscription : null,
  };
}

/** The price fields of a decoded iOS transaction. */
export interface StorePricedTransaction {
  transactionId?: string;
  type?: string;
  price?: number;
  currency?: string;
  purchaseDate?: number;
  expiresDate?: number;
  signedDate?: number;
  revocationDate?: number;
}

/**
 * iOS: a subscription transaction's `price` (milli-units) and `currency`, over the period
 * from `purchaseDate` to `expiresDate`; one-off purchases carry no recurring price.
 */
export function iosPriceLines(transaction: StorePricedTransaction): RailPriceLine[] | null {
  const price = finite(transaction.price);
  const currency = currencyCode(transaction.currency);
  if (price === null || price < 0 || !currency || typeof transaction.expiresDate !== 'number') return null;
  const periodMs = typeof transaction.purchaseDate === 'number' ? transaction.expiresDate - transaction.purchaseDate : null;
  return [{ currency, amount: { micros: Math.round(price * 1000) }, quantity: 1, period: null, periodMs: periodMs !== null && periodMs > 0 ? periodMs : null }];
}

/** iOS: a paid, unrevoked transaction is recognised cash (recurring for auto-renewable subscriptions). */
export function iosPayment(transaction: StorePricedTransaction): RailPayment | null {
  const price = finite(transaction.price);
  const currency = currencyCode(transaction.currency);
  if (!transaction.transactionId || price === null || price <= 0 || !currency || typeof transaction.revocationDate === 'number') return null;
  return {
    transactionId: transaction.transactionId,
    currency,
    amount: { micros: Math.round(price * 1000) },
    recurring: transaction.type === 'Auto-Renewable Subscription',
    paidAtMs: transaction.purchaseDate ?? transaction.signedDate ?? 0,
  };
}

/** The price fields of an Android `subscriptionsv2.get` line item. */
export interface AndroidPricedLineItem {
  expiryTime?: string | null;
  autoRenewingPlan?: { recurringPrice?: { currencyCode?: string | null; units?: string | number | null; nanos?: number | null } | null } | null;
  offerDetails?: { basePlanId?: string | null } | null;
}

const BASE_PLAN_PERIODS: [RegExp, { unit: BillingPeriodUnit; count: number }][] = [
  [/(annual|yearly|year|12m)/i, { unit: 'year', count: 1 }],
  [/(semi|6m|half)/i, { unit: 'month', count: 6 }],
  [/(quarter|3m)/i, { unit: 'month', count: 3 }],
  [/(week)/i, { unit: 'week', count: 1 }],
  [/(month|1m)/i, { unit: 'month', count: 1 }],
];

/**
 * Android: each auto-renewing line item's `recurringPrice` (units + nanos). The period comes
 * from the base plan id when it names one (`monthly`, `annual` …), else from the purchase's
 * start to the item's expiry.
 */
export function androidPriceLines(lineItems: readonly AndroidPricedLineItem[], startTime: string | null | undefined): RailPriceLine[] | null {
  const startMs = startTime ? Date.parse(startTime) : NaN;
  const lines: RailPriceLine[] = [];
  for (const item of lineItems) {
    const price = item.autoRenewingPlan?.recurringPrice;
    const currency = currencyCode(price?.currencyCode);
    const units = typeof price?.units === 'string' && /^-?\d+$/.test(price.units) ? Number(price.units) : finite(price?.units);
    if (!price || !currency || units === null || units < 0) continue;
    const micros = units * 1_000_000 + Math.round((finite(price.nanos) ?? 0) / 1000);
    const basePlan = item.offerDetails?.basePlanId ?? '';
    const period = BASE_PLAN_PERIODS.find(([pattern]) => pattern.test(basePlan))?.[1] ?? null;
    const expiryMs = item.expiryTime ? Date.parse(item.expiryTime) : NaN;
    const periodMs = Number.isFinite(startMs) && Number.isFinite(expiryMs) && expiryMs > startMs ? expiryMs - startMs : null;
    lines.push({ currency, amount: { micros }, quantity: 1, period, periodMs });
  }
  return lines.length > 0 ? lines : null;
}
