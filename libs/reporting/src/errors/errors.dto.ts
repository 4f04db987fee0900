import { ApiProperty } from '@nestjs/swagger';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { ReadMetaView, SurfaceCoverageView } from '../read-envelope.js';
import { LimitQueryDto } from '../read-query.js';

export class ErrorQueryDto {
  @ApiProperty({ description: "The error's fingerprint (8 hex characters; anything else reads as unknown)", example: 'a1b2c3d4' })
  @MaxLength(64, { message: 'fingerprint must be at most 64 characters' })
  @IsNotEmpty({ message: 'fingerprint is required' })
  @IsString({ message: 'fingerprint must be a string' })
  fingerprint: string;
}

export class ErrorAffectedQueryDto extends LimitQueryDto {
  @ApiProperty({ description: "The error's fingerprint", example: 'a1b2c3d4' })
  @MaxLength(64, { message: 'fingerprint must be at most 64 characters' })
  @IsNotEmpty({ message: 'fingerprint is required' })
  @IsString({ message: 'fingerprint must be a string' })
  fingerprint: string;
}

export class AffectedCountsView {
  @ApiProperty({ type: Number, nullable: true, description: 'Distinct developer user ids the error hit' }) users: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Of those, customers with monthly revenue' }) payingUsers: number | null;
}
export class ErrorImpactData {
  @ApiProperty() fingerprint: string;
  @ApiProperty({ type: String, nullable: true, description: 'properties.errorType of the latest event' }) exceptionType: string | null;
  @ApiProperty({ enum: ['open'], description: 'Errors have no resolution workflow yet: always open' }) status: string;
  @ApiProperty({ type: String, nullable: true, enum: ['error', 'warning', 'info'] }) level: string | null;
  @ApiProperty() occurrences: number;
  @ApiProperty({ type: AffectedCountsView }) affected: AffectedCountsView;
  @ApiProperty({ description: 'Unix ms' }) firstSeen: number;
  @ApiProperty({ description: 'Unix ms' }) lastSeen: number;
  @ApiProperty({
    type: SurfaceCoverageView,
    description: "meta.coverage.revenue repeated: whether payingUsers is measured (the CLI's errors command reads it here)",
  })
  coverage: SurfaceCoverageView;
}
export class ErrorImpactEnvelope {
  @ApiProperty({ example: 'error_impact' }) object: string;
  @ApiProperty({ type: ErrorImpactData, nullable: true, description: 'null for an unknown fingerprint' }) data: ErrorImpactData | null;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}

export class AffectedUserItem {
  @ApiProperty({ description: 'Your own user id' }) userId: string;
  @ApiProperty({ type: String, nullable: true, example: 'cdcust_…' }) serviceCustomerId: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'cdcust_…' }) crossdeckCustomerId: string | null;
  @ApiProperty({ description: 'Reporting-currency cents; 0 when not paying' }) monthlyRevenueCents: number;
  @ApiProperty({ description: 'Unix ms' }) lastHitAt: number;
}
export class AffectedUsersData {
  @ApiProperty({ type: [AffectedUserItem] }) rows: AffectedUserItem[];
}
export class AffectedUsersEnvelope {
  @ApiProperty({ example: 'error_affected_users' }) object: string;
  @ApiProperty({ type: AffectedUsersData }) data: AffectedUsersData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}
