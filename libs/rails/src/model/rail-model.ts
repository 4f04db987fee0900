/**
 * Pure types and rules of the rail model shared by every purchase rail (iOS store, card
 * payments, Android store). No I/O.
 */
import type { PurchaseRail } from '#entitlements';

import type { Subscription } from '../lifecycle/subscription.js';

export type { PurchaseRail };

/** A rail subscription's state on the rail, reduced to what entitlements need. */
export const RAIL_STATES = ['active', 'inactive'] as const;
export type RailState = (typeof RAIL_STATES)[number];

/** What a rail event did (the `decision` of a rail notification's answer, docs/rails.md). */
export const RAIL_DECISIONS = ['applied', 'no_op', 'rejected'] as const;
export type RailDecision = (typeof RAIL_DECISIONS)[number];

/** Alias node types of rail ids in identity's alias graph (kept by erasure: financial records). */
export const RAIL_ALIAS_TYPES = {
  iosOriginalTransactionId: 'ios_original_transaction_id',
  iosAppAccountToken: 'ios_app_account_token',
  cardCustomerId: 'card_customer_id',
  androidPurchaseToken: 'android_purchase_token',
  androidObfuscatedAccountId: 'android_obfuscated_account_id',
} as const;

/**
 * One product a subscription grants, until its own end (Unix seconds; null = lifetime). A
 * card subscription has one per item (`items.data[].price.product`, the item's
 * `current_period_end`); the other rails have exactly one: (productId, validUntil).
 */
export interface RailSubscriptionItem {
  productId: string;
  validUntil: number | null;
}

/** One stored subscription record. Times: validUntil Unix seconds (null = lifetime), railTimeMs ms. */
export interface RailSubscriptionRecord {
  rail: PurchaseRail;
  subscriptionId: string;
  customerId: string;
  /** The primary product (card: the first item whose product is in the catalogue). */
  productId: string;
  state: RailState;
  /** The subscription's end: the latest of its items' ends. */
  validUntil: number | null;
  /** Every product of the subscription with its own end (never empty). */
  items: RailSubscriptionItem[];
  railTimeMs: number;
  rawStatus: string | null;
  lastEventId: string | null;
  updatedAt: number;
  /** The subscription object as last derived (null: applied before the lifecycle was stored, or by a rail that does not derive it). */
  subscription?: Subscription | null;
}

/**
 * Newest rail time wins: an event whose rail time is older than the stored state's is a
 * no_op. Equal times apply (a re-send of the same state changes nothing anyway). Android
 * passes `ignoreRailTime`: the state it read from the Publisher API is always current.
 */
export function isOlderThanStored(stored: { railTimeMs: number } | null, railTimeMs: number, ignoreRailTime = false): boolean {
  if (!stored || ignoreRailTime) return false;
  return railTimeMs < stored.railTimeMs;
}

type ItemsSource = Pick<RailSubscriptionRecord, 'productId' | 'validUntil'> & { items?: readonly RailSubscriptionItem[] };

/** A subscription's items; a single-product subscription is the one item (productId, validUntil). */
export function itemsOf(record: ItemsSource): RailSubscriptionItem[] {
  if (record.items && record.items.length > 0) return record.items.map((item) => ({ productId: item.productId, validUntil: item.validUntil }));
  return [{ productId: record.productId, validUntil: record.validUntil }];
}

/** Whether two item lists are the same (order included: it is the rail's). */
export function sameItems(a: readonly RailSubscriptionItem[], b: readonly RailSubscriptionItem[]): boolean {
  return a.length === b.length && a.every((item, index) => item.productId === b[index].productId && item.validUntil === b[index].validUntil);
}

/** Whether applying `next` over `stored` changes anything a reader sees. */
export function changesState(
  stored: (Pick<RailSubscriptionRecord, 'customerId' | 'productId' | 'state' | 'validUntil'> & { items?: readonly RailSubscriptionItem[] }) | null,
  next: Pick<RailSubscriptionRecord, 'customerId' | 'productId' | 'state' | 'validUntil'> & { items?: readonly RailSubscriptionItem[] },
): boolean {
  if (!stored) return true;
  return (
    stored.customerId !== next.customerId ||
    stored.productId !== next.productId ||
    stored.state !== next.state ||
    stored.validUntil !== next.validUntil ||
    !sameItems(itemsOf(stored), itemsOf(next))
  );
}

/** Live: active and not past validUntil at `nowMs`. */
export function isLive(record: Pick<RailSubscriptionRecord, 'state' | 'validUntil'>, nowMs: number): boolean {
  return record.state === 'active' && (record.validUntil === null || nowMs < record.validUntil * 1000);
}

/** What migration's gate reads of a customer on a rail: a live subscription, only lapsed ones, or none. */
export type CustomerRailStatus = 'live' | 'lapsed' | 'none';

export function customerRailStatus(records: readonly Pick<RailSubscriptionRecord, 'state' | 'validUntil'>[], nowMs: number): CustomerRailStatus {
  if (records.length === 0) return 'none';
  return records.some((record) => isLive(record, nowMs)) ? 'live' : 'lapsed';
}
