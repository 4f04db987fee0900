import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** The public shape of one audit entry (spec "Audit entry", plus requestId, actor and createdAt). */
export class AuditEntryData {
  @ApiProperty({ example: 'srv_revoke_k3j2h1g0f9e8d7c6b5a4z3y2' }) eventId: string;
  @ApiProperty({ example: 'manual' }) rail: string;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
  @ApiProperty({ example: 'entitlement.revoked_manually' }) eventType: string;
  @ApiProperty({ example: 'proj_abc' }) projectId: string;
  @ApiProperty({ type: String, nullable: true, example: 'cdcust_abc' }) customerId: string | null;
  @ApiProperty({ example: 'applied' }) decision: string;
  @ApiProperty() reason: string;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'req_3f9a0c1d2e4b5a6978877665' }) requestId: string | null;
  @ApiProperty({ example: 'api_key:key_abc', description: 'Who wrote it: an API key, the operator, a rail or a worker' }) actor: string;
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
  @ApiPropertyOptional({ description: 'Rail entries: the signature, JWS or push token was verified' }) signatureVerified?: boolean;
  @ApiPropertyOptional({ description: "Rail entries: the state applied was read from the rail's API" }) reconciledWithProvider?: boolean;
  @ApiPropertyOptional({ description: 'Rail entries: when the raw event was received (Unix ms)' }) rawEventReceivedAt?: number;
  @ApiPropertyOptional({ description: 'Rail entries: when it was processed (Unix ms)' }) processedAt?: number;
}

export class AuditEntryView {
  @ApiProperty({ example: 'audit_entry' }) object: 'audit_entry';
  @ApiProperty({ type: AuditEntryData }) data: AuditEntryData;
}
