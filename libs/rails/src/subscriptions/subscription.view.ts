import { ApiProperty } from '@nestjs/swagger';
import { PURCHASE_RAILS, type PurchaseRail } from '#entitlements';
import {
  EXPIRATION_REASONS,
  type ExpirationReason,
  OFFER_DISCOUNTS,
  OFFER_TYPES,
  type OfferDiscount,
  type OfferType,
  OWNERSHIP_TYPES,
  type OwnershipType,
  PERIOD_TYPES,
  type PeriodType,
  PRICE_CHANGE_STATES,
  type PriceChangeState,
  STORE_ENVIRONMENTS,
  type StoreEnvironment,
  SUBSCRIPTION_KINDS,
  SUBSCRIPTION_STATES,
  type Subscription,
  type SubscriptionKind,
  type SubscriptionState,
} from '../lifecycle/subscription.js';

const SECONDS = 'Unix seconds';
const nullableSeconds = (description: string) => ({ type: Number, nullable: true, description: `${description} (${SECONDS})` });

export class SubscriptionOfferView {
  @ApiProperty({ enum: OFFER_TYPES }) type: OfferType;
  @ApiProperty({ type: String, nullable: true }) id: string | null;
  @ApiProperty({ enum: OFFER_DISCOUNTS, nullable: true }) discount: OfferDiscount | null;
}

export class SubscriptionPriceView {
  @ApiProperty({ description: 'Micros: 1,000,000 = one unit of the currency', example: 9990000 }) amountMicros: number;
  @ApiProperty({ description: 'ISO 4217, upper case', example: 'USD' }) currency: string;
}

export class SubscriptionPriceChangeView extends SubscriptionPriceView {
  @ApiProperty({ enum: PRICE_CHANGE_STATES }) state: PriceChangeState;
  @ApiProperty(nullableSeconds('When the new price takes effect, when the rail says')) effectiveAt: number | null;
}

/** One rail subscription or one-time purchase between purchase and end. */
export class SubscriptionView implements Subscription {
  @ApiProperty({ example: 'subscription' }) object: 'subscription';
  @ApiProperty({ description: "The rail's subscription id (as an entitlement's source.subscriptionId)", example: 'sub_1PqR2sT3uV4w' }) id: string;
  @ApiProperty({ enum: PURCHASE_RAILS }) rail: PurchaseRail;
  @ApiProperty({ description: 'The product now in force on the rail' }) productId: string;
  @ApiProperty({ type: [String], description: 'Entitlement keys of the product catalogue' }) entitlementKeys: string[];
  @ApiProperty({ enum: SUBSCRIPTION_KINDS }) kind: SubscriptionKind;
  @ApiProperty({ enum: SUBSCRIPTION_STATES }) state: SubscriptionState;
  @ApiProperty({ enum: PERIOD_TYPES }) periodType: PeriodType;
  @ApiProperty({ description: 'False once auto-renew is off, in billing retry, on hold, paused, ended or refunded' }) willRenew: boolean;
  @ApiProperty({ description: 'Whether it gives access now' }) isActive: boolean;
  @ApiProperty({ description: `The current period's purchase (renewal) time (${SECONDS})` }) purchasedAt: number;
  @ApiProperty({ description: `The first purchase of this subscription (${SECONDS})` }) originalPurchasedAt: number;
  @ApiProperty(nullableSeconds('Null for lifetime')) currentPeriodStartsAt: number | null;
  @ApiProperty(nullableSeconds('Null for lifetime')) currentPeriodEndsAt: number | null;
  @ApiProperty(nullableSeconds("Until when it gives access (the entitlement's validUntil); null = lifetime")) accessEndsAt: number | null;
  @ApiProperty(nullableSeconds('When auto-renew was seen turned off')) unsubscribeDetectedAt: number | null;
  @ApiProperty(nullableSeconds('Start of the current billing problem')) billingIssueDetectedAt: number | null;
  @ApiProperty(nullableSeconds('End of the grace period while in it')) gracePeriodEndsAt: number | null;
  @ApiProperty(nullableSeconds('When it was paused')) pausedAt: number | null;
  @ApiProperty(nullableSeconds('When a pause ends by itself')) autoResumeAt: number | null;
  @ApiProperty(nullableSeconds('When it ended')) expiredAt: number | null;
  @ApiProperty({ enum: EXPIRATION_REASONS, nullable: true }) expirationReason: ExpirationReason | null;
  @ApiProperty(nullableSeconds('When the latest refund or chargeback was recorded')) refundedAt: number | null;
  @ApiProperty({ enum: OWNERSHIP_TYPES }) ownershipType: OwnershipType;
  @ApiProperty({ type: String, nullable: true, description: 'A product that takes effect at the next renewal' }) pendingProductId: string | null;
  @ApiProperty({ type: SubscriptionOfferView, nullable: true }) offer: SubscriptionOfferView | null;
  @ApiProperty({ type: SubscriptionPriceView, nullable: true, description: "The current period's price (0 in a free trial); null where the rail says nothing" })
  price: SubscriptionPriceView | null;
  @ApiProperty({ type: SubscriptionPriceChangeView, nullable: true }) priceChange: SubscriptionPriceChangeView | null;
  @ApiProperty({ enum: STORE_ENVIRONMENTS }) storeEnvironment: StoreEnvironment;
  @ApiProperty({ description: SECONDS }) updatedAt: number;
}

/** List envelope of the subscription reads: live ones first, then the latest change first; at most 100. */
export class SubscriptionList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [SubscriptionView] }) data: Subscription[];
  @ApiProperty({ description: 'Starts with cdcust_; empty string when the customer is unknown (public read only)', example: 'cdcust_3f9a0c1d2e4b' })
  serviceCustomerId: string;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}

/** The lifecycle event types of the customer history (the `subscription.*` events and `purchase.completed`). */
export const HISTORY_EVENT_TYPES = [
  'subscription.started',
  'subscription.renewed',
  'subscription.recovered',
  'subscription.canceled',
  'subscription.uncanceled',
  'subscription.billing_issue',
  'subscription.paused',
  'subscription.resumed',
  'subscription.extended',
  'subscription.product_changed',
  'subscription.price_change',
  'subscription.expired',
  'subscription.refunded',
  'subscription.refund_reversed',
  'subscription.transferred',
  'purchase.completed',
  'subscription.consumption_requested',
] as const;

/** One lifecycle event of a customer's subscriptions. */
export class HistoryEntryView {
  @ApiProperty({
    description: "The entry's id: pass the last one of a page as `before` to read the next (older) page",
    example: 'hist_3f9a0c1d2e4b5a6978c0d1e2',
  })
  id: string;
  @ApiProperty({ enum: HISTORY_EVENT_TYPES, description: 'The lifecycle event, as the outbound webhook of the same type names it' }) type: string;
  @ApiProperty({ description: `The rail's time of what caused it (${SECONDS})` }) occurredAt: number;
  @ApiProperty({ enum: PURCHASE_RAILS }) rail: PurchaseRail;
  @ApiProperty({ description: "The rail's subscription id", example: 'sub_1PqR2sT3uV4w' }) subscriptionId: string;
  @ApiProperty({ description: 'The product in force after the change' }) productId: string;
  @ApiProperty({ description: "The service's audit entry of the change (GET /v1/server/audit/{eventId})", example: 'rail_evt_k3j2h1g0f9e8d7c6b5a4z3y2' })
  auditEventId: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The rail's own id of what caused it (iOS notificationUUID, card event id, Android Pub/Sub messageId); null for a read",
  })
  railEventId: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: "The type's own fields, as its webhook event carries them (periodType and isTrialStart, reason, gracePeriodEndsAt, previousProductId …)",
  })
  details: Record<string, unknown>;
}

/** A page of a customer's history: newest first. */
export class HistoryList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [HistoryEntryView] }) data: HistoryEntryView[];
  @ApiProperty({ description: 'Whether older entries remain (read them with before = the last id of this page)' }) hasMore: boolean;
}
