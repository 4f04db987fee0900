/**
 * The subscription object: what the service knows about one rail subscription (iOS
 * `originalTransactionId`, card `sub_…`, Android purchase token) or one-time purchase between
 * purchase and end. Pure types; times are Unix seconds, money is in micros (1,000,000 = one
 * unit of the ISO 4217 currency).
 */
import type { PurchaseRail } from '../model/rail-model.js';

export const SUBSCRIPTION_KINDS = ['auto_renewing', 'non_renewing'] as const;
export type SubscriptionKind = (typeof SUBSCRIPTION_KINDS)[number];

/**
 * Where a subscription stands. `canceled` is not a state: a subscription whose auto-renew is
 * off stays `active` (or `trialing`) with `willRenew: false` until it ends.
 */
export const SUBSCRIPTION_STATES = ['active', 'trialing', 'in_grace_period', 'in_billing_retry', 'on_hold', 'paused', 'expired', 'refunded'] as const;
export type SubscriptionState = (typeof SUBSCRIPTION_STATES)[number];

/** The current period's kind. */
export const PERIOD_TYPES = ['trial', 'intro', 'normal', 'prepaid'] as const;
export type PeriodType = (typeof PERIOD_TYPES)[number];

/** Why a subscription ended (or will end, while auto-renew is off). */
export const EXPIRATION_REASONS = [
  'unsubscribe',
  'billing_error',
  'developer_initiated',
  'price_increase',
  'customer_support',
  'product_unavailable',
  'replaced',
  'refund',
  'unknown',
] as const;
export type ExpirationReason = (typeof EXPIRATION_REASONS)[number];

export const OWNERSHIP_TYPES = ['purchased', 'family_shared'] as const;
export type OwnershipType = (typeof OWNERSHIP_TYPES)[number];

export const STORE_ENVIRONMENTS = ['production', 'sandbox'] as const;
export type StoreEnvironment = (typeof STORE_ENVIRONMENTS)[number];

export const OFFER_TYPES = ['introductory', 'promotional', 'offer_code', 'win_back'] as const;
export type OfferType = (typeof OFFER_TYPES)[number];

export const OFFER_DISCOUNTS = ['free_trial', 'pay_as_you_go', 'pay_up_front'] as const;
export type OfferDiscount = (typeof OFFER_DISCOUNTS)[number];

/** The offer of the current period. */
export interface SubscriptionOffer {
  type: OfferType;
  id: string | null;
  discount: OfferDiscount | null;
}

/** An amount in micros of an ISO 4217 currency (upper case). */
export interface Money {
  amountMicros: number;
  currency: string;
}

export const PRICE_CHANGE_STATES = ['pending', 'accepted', 'applied'] as const;
export type PriceChangeState = (typeof PRICE_CHANGE_STATES)[number];

/** A price change the rail announced: the new price and when it takes effect (null when the rail does not say). */
export interface PriceChange extends Money {
  state: PriceChangeState;
  effectiveAt: number | null;
}

export interface Subscription {
  object: 'subscription';
  /** The rail's subscription id (as `source.subscriptionId`). */
  id: string;
  rail: PurchaseRail;
  /** The product now in force on the rail. */
  productId: string;
  /** From the product catalogue. */
  entitlementKeys: string[];
  kind: SubscriptionKind;
  state: SubscriptionState;
  periodType: PeriodType;
  /** False once auto-renew is off, in billing retry, on hold, paused, ended, refunded. */
  willRenew: boolean;
  /** Whether it gives access at the clock it was derived at (see access.ts). */
  isActive: boolean;
  /** The current period's purchase (renewal) time. */
  purchasedAt: number;
  /** The first purchase of this subscription. */
  originalPurchasedAt: number;
  /** Null for lifetime. */
  currentPeriodStartsAt: number | null;
  currentPeriodEndsAt: number | null;
  /** Until when it gives access (the entitlement's `validUntil`); null = lifetime. */
  accessEndsAt: number | null;
  /** When auto-renew was seen turned off; null again once turned back on. */
  unsubscribeDetectedAt: number | null;
  /** Start of the current billing problem; null once paid. */
  billingIssueDetectedAt: number | null;
  /** End of the grace period while in it. */
  gracePeriodEndsAt: number | null;
  pausedAt: number | null;
  autoResumeAt: number | null;
  /** When it ended. */
  expiredAt: number | null;
  /** Why it ended; while auto-renew is off, why it will end. */
  expirationReason: ExpirationReason | null;
  /** When the latest refund or chargeback of this subscription was recorded. */
  refundedAt: number | null;
  ownershipType: OwnershipType;
  /** A change that takes effect at the next renewal. */
  pendingProductId: string | null;
  offer: SubscriptionOffer | null;
  /** The current period's price as the rail states it (0 in a free trial); null where the rail says nothing. */
  price: Money | null;
  priceChange: PriceChange | null;
  storeEnvironment: StoreEnvironment;
  updatedAt: number;
}
