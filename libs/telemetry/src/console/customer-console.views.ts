import { ApiProperty } from '@nestjs/swagger';
import { AuditEntryData } from '#audit';
import { SubscriptionView } from '#rails';

/** Response shapes of the operator console's customer reads. */
export class CustomerSearchHitView {
  @ApiProperty({ example: 'customer' }) object: 'customer';
  @ApiProperty({ example: 'cdcust_3f9a0c1d2e4b' }) serviceCustomerId: string;
  @ApiProperty({ description: 'The same value as serviceCustomerId (the public clients read this name)' }) crossdeckCustomerId: string;
  @ApiProperty({ type: String, nullable: true, description: 'The latest developer user id linked' }) userId: string | null;
  @ApiProperty({ type: [String] }) anonymousIds: string[];
  @ApiProperty({ type: String, nullable: true }) email: string | null;
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
  @ApiProperty({ enum: ['user_id', 'anonymous_id', 'customer_id', 'email', 'rail_id'] }) matchedBy: string;
}

export class CustomerSearchList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [CustomerSearchHitView] }) data: CustomerSearchHitView[];
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}

export class CustomerMrrView {
  @ApiProperty({ description: "Monthly recurring revenue in the project's reporting currency, minor units" }) amountMinor: number;
  @ApiProperty({ example: 'USD' }) currency: string;
}

export class CustomerListItemView {
  @ApiProperty({ example: 'customer' }) object: 'customer';
  @ApiProperty({ example: 'cdcust_3f9a0c1d2e4b' }) serviceCustomerId: string;
  @ApiProperty({ description: 'The same value as serviceCustomerId' }) crossdeckCustomerId: string;
  @ApiProperty({ type: String, nullable: true, description: 'The latest developer user id linked' }) userId: string | null;
  @ApiProperty({ type: String, nullable: true }) email: string | null;
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
  @ApiProperty({ type: CustomerMrrView }) mrr: CustomerMrrView;
  @ApiProperty({ description: "In the revenue ledger's paying set (an active priced subscription in any currency)" }) paying: boolean;
  @ApiProperty({ type: String, nullable: true, example: '2026-12-07', description: 'The last UTC day with events; null when never seen' }) lastSeenDay:
    string | null;
  @ApiProperty({ type: [String], description: 'Rails of its subscriptions' }) rails: string[];
  @ApiProperty({ type: [String], description: 'Products of its subscriptions' }) products: string[];
  @ApiProperty({
    type: [String],
    enum: ['trialing', 'active', 'in_grace_period', 'in_billing_retry', 'on_hold', 'paused', 'expired', 'refunded'],
    description:
      'Each distinct lifecycle state of its subscriptions; expired only when none is anything else (every subscription ended); empty without subscriptions',
  })
  states: string[];
}

export class CustomerListPage {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [CustomerListItemView] }) data: CustomerListItemView[];
  @ApiProperty({ description: 'More rows follow (pass nextCursor as cursor)' }) hasMore: boolean;
  @ApiProperty({ type: String, nullable: true }) nextCursor: string | null;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}

export class CustomerAliasView {
  @ApiProperty({ example: 'developer', description: 'developer, anonymous, or a rail id type (ios_original_transaction_id, card_customer_id, …)' })
  type: string;
  @ApiProperty() value: string;
  @ApiProperty({ enum: ['verified', 'self_asserted'] }) assurance: string;
  @ApiProperty({ type: Number, nullable: true, description: 'Unix seconds' }) verifiedAt: number | null;
  @ApiProperty({ description: 'Unix seconds: when the id was linked' }) createdAt: number;
}

export class CustomerMergeView {
  @ApiProperty({ example: 'mrev_3kTq9Vx2LmN8pR4sW7yZ1aBc' }) id: string;
  @ApiProperty({ enum: ['canonical', 'other'], description: "This customer's side of the identify conflict" }) role: string;
  @ApiProperty() otherCustomerId: string;
  @ApiProperty({ type: String, nullable: true }) developerUserId: string | null;
  @ApiProperty({ type: String, nullable: true }) anonymousId: string | null;
  @ApiProperty({ example: 'pending' }) status: string;
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
}

export class CustomerIdentitiesView {
  @ApiProperty({ type: String, nullable: true }) userId: string | null;
  @ApiProperty({ type: [String] }) anonymousIds: string[];
  @ApiProperty({ type: [CustomerAliasView], description: 'Every node of the alias graph, rail ids included, oldest first' }) aliases: CustomerAliasView[];
  @ApiProperty({ type: [CustomerMergeView], description: 'Identify conflicts naming this customer, newest first' }) merges: CustomerMergeView[];
}

export class CustomerTraitsView {
  @ApiProperty({ type: String, nullable: true }) email: string | null;
  @ApiProperty({ type: String, nullable: true }) firstName: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: { oneOf: [{ type: 'string', nullable: true }, { type: 'number' }, { type: 'boolean' }] },
    description: 'Every other trait identify stored, by key',
  })
  other: Record<string, string | number | boolean | null>;
}

export class CustomerEntitlementView {
  @ApiProperty({ example: 'pro_access' }) key: string;
  @ApiProperty() active: boolean;
  @ApiProperty({ enum: ['active', 'revoked', 'expired'] }) state: string;
  @ApiProperty({ enum: ['grant', 'rail', 'migration'] }) source: string;
  @ApiProperty({ enum: ['ios_store', 'card_payments', 'android_store', 'manual'] }) rail: string;
  @ApiProperty() productId: string;
  @ApiProperty() subscriptionId: string;
  @ApiProperty({ type: Number, nullable: true, description: 'Unix seconds; null means lifetime' }) validUntil: number | null;
  @ApiProperty({ description: 'Unix seconds' }) grantedAt: number;
  @ApiProperty({ description: 'Unix seconds' }) updatedAt: number;
}

export class CustomerSubscriptionItemView {
  @ApiProperty() productId: string;
  @ApiProperty({ type: Number, nullable: true, description: 'Unix seconds' }) validUntil: number | null;
}

export class CustomerSubscriptionView {
  @ApiProperty({ enum: ['ios_store', 'card_payments', 'android_store'] }) rail: string;
  @ApiProperty({ description: "The rail's id: original transaction id, sub_… or purchase token" }) subscriptionId: string;
  @ApiProperty() productId: string;
  @ApiProperty({ enum: ['active', 'inactive'] }) state: string;
  @ApiProperty({ type: Number, nullable: true, description: 'Unix seconds' }) validUntil: number | null;
  @ApiProperty({ type: [CustomerSubscriptionItemView] }) items: CustomerSubscriptionItemView[];
  @ApiProperty({ type: String, nullable: true, description: "The rail's own status word" }) railStatus: string | null;
  @ApiProperty({ description: 'Unix seconds' }) updatedAt: number;
}

export class CustomerErasureView {
  @ApiProperty({ enum: ['queued', 'deleted'] }) status: string;
  @ApiProperty({ description: 'Unix ms' }) queuedAt: number;
  @ApiProperty({ type: Number, nullable: true, description: 'Unix ms' }) deletedAt: number | null;
}

export class CustomerEventView {
  @ApiProperty() id: string;
  @ApiProperty({ example: 'screen_view' }) name: string;
  @ApiProperty({ description: 'Unix ms' }) timestampMs: number;
  @ApiProperty({ type: String, nullable: true, enum: ['error', 'warning', 'info'] }) level: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Error issue of an error event' }) fingerprint: string | null;
}

export class CustomerDetailView {
  @ApiProperty({ example: 'customer_detail' }) object: 'customer_detail';
  @ApiProperty() serviceCustomerId: string;
  @ApiProperty({ description: 'The same value as serviceCustomerId' }) crossdeckCustomerId: string;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
  @ApiProperty({ description: 'Marked forgotten (its personal data is erased or queued for erasure)' }) forgotten: boolean;
  @ApiProperty({ type: CustomerIdentitiesView }) identities: CustomerIdentitiesView;
  @ApiProperty({ type: CustomerTraitsView }) traits: CustomerTraitsView;
  @ApiProperty({ type: CustomerListItemView, description: "The customer's row of the customer list: MRR, paying, states, last seen" })
  summary: CustomerListItemView;
  @ApiProperty({ type: [CustomerEntitlementView], description: 'Active and past, by key' }) entitlements: CustomerEntitlementView[];
  @ApiProperty({ type: [CustomerSubscriptionView], description: 'Rail subscription records, newest change first' }) subscriptions: CustomerSubscriptionView[];
  @ApiProperty({
    type: [SubscriptionView],
    description: 'The subscription objects with their lifecycle state, live ones first (what the customer subscriptions read answers)',
  })
  subscriptionObjects: SubscriptionView[];
  @ApiProperty({ type: CustomerErasureView, nullable: true }) erasure: CustomerErasureView | null;
  @ApiProperty({ type: [CustomerEventView], description: 'The latest 20 events, newest first' }) recentEvents: CustomerEventView[];
}

export class CustomerTimelineView {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [AuditEntryData], description: 'Each as GET /v1/server/audit/{eventId} answers it, newest first' }) data: AuditEntryData[];
  @ApiProperty({ description: 'Older entries remain (pass the last eventId as before)' }) hasMore: boolean;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}
