import { ApiProperty } from '@nestjs/swagger';
import { RAILS, type Rail } from './entitlement-rules.js';

/** `source` of the public shape. */
export class EntitlementSource {
  @ApiProperty({ enum: RAILS, example: 'manual' }) rail: Rail;
  @ApiProperty({ description: 'Product identifier on the rail (`manual` for manual grants)', example: 'manual' }) productId: string;
  @ApiProperty({
    description: 'Subscription identifier on the rail (for manual grants: the audit event id of the grant)',
    example: 'srv_grant_k3j2h1g0f9e8d7c6b5a4z3y2',
  })
  subscriptionId: string;
}

/** The spec's PublicEntitlement, exactly. */
export class PublicEntitlement {
  @ApiProperty({ example: 'entitlement' }) object: 'entitlement';
  @ApiProperty({ example: 'pro_access' }) key: string;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ type: Number, nullable: true, description: 'Unix seconds; null means lifetime' }) validUntil: number | null;
  @ApiProperty({ type: EntitlementSource }) source: EntitlementSource;
  @ApiProperty({ description: 'Unix seconds' }) updatedAt: number;
}

/** List envelope of the entitlement reads. */
export class EntitlementList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [PublicEntitlement] }) data: PublicEntitlement[];
  @ApiProperty({ description: 'Starts with cdcust_; empty string when the customer is unknown (public read only)', example: 'cdcust_3f9a0c1d2e4b' })
  serviceCustomerId: string;
  @ApiProperty({ description: 'The same value as serviceCustomerId (the public clients read this name)', example: 'cdcust_3f9a0c1d2e4b' })
  crossdeckCustomerId: string;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}

/** 200 of grant and revoke. `auditEventId` is additive: the id of the entry written with the change. */
export class EntitlementMutation {
  @ApiProperty({ example: 'entitlement_mutation' }) object: 'entitlement_mutation';
  @ApiProperty({ enum: ['grant', 'revoke'] }) action: 'grant' | 'revoke';
  @ApiProperty({ example: 'cdcust_3f9a0c1d2e4b' }) serviceCustomerId: string;
  @ApiProperty({ example: 'cdcust_3f9a0c1d2e4b', description: 'The same value as serviceCustomerId (the public clients read this name)' })
  crossdeckCustomerId: string;
  @ApiProperty({ type: PublicEntitlement, description: 'The manual entitlement after the change (isActive true on grant, false on revoke)' })
  entitlement: PublicEntitlement;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
  @ApiProperty({ example: 'srv_grant_k3j2h1g0f9e8d7c6b5a4z3y2', description: 'Audit entry written in the same transaction (GET /v1/server/audit/{eventId})' })
  auditEventId: string;
}
