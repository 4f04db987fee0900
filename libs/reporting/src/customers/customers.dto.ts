import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { ReadMetaView } from '../read-envelope.js';

export class CustomersData {
  @ApiProperty({ type: Number, nullable: true, description: 'Distinct customers with an active priced subscription' }) payingCustomers: number | null;
  @ApiProperty({ type: Number, nullable: true }) totalCustomers: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Distinct customers with an event in the last 30 days' }) activePeople: number | null;
}
export class CustomersEnvelope {
  @ApiProperty({ example: 'customers' }) object: string;
  @ApiProperty({ type: CustomersData }) data: CustomersData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}

export class RankedQueryDto {
  @ApiPropertyOptional({ enum: ['mrr', 'read_cost'], default: 'read_cost' })
  @IsOptional()
  @IsIn(['mrr', 'read_cost'], { message: 'by must be mrr or read_cost' })
  by?: 'mrr' | 'read_cost';

  @ApiPropertyOptional({ enum: ['paying', 'non_paying', 'all'], default: 'all' })
  @IsOptional()
  @IsIn(['paying', 'non_paying', 'all'], { message: 'segment must be paying, non_paying or all' })
  segment?: 'paying' | 'non_paying' | 'all';

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 25 })
  @IsOptional()
  @Type(() => Number)
  @Min(1, { message: 'limit must be between 1 and 100' })
  @Max(100, { message: 'limit must be between 1 and 100' })
  @IsInt({ message: 'limit must be an integer between 1 and 100' })
  limit?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 90, default: 30, description: 'Read-cost window in days' })
  @IsOptional()
  @Type(() => Number)
  @Min(1, { message: 'days must be between 1 and 90' })
  @Max(90, { message: 'days must be between 1 and 90' })
  @IsInt({ message: 'days must be an integer between 1 and 90' })
  days?: number;
}

export class RankedRowView {
  @ApiProperty({ type: String, nullable: true, description: 'Your own user id (identify), when the customer has one' }) userId: string | null;
  @ApiProperty({ example: 'cdcust_…' }) serviceCustomerId: string;
  @ApiProperty({ example: 'cdcust_…', description: 'The same id under the name public clients read' }) crossdeckCustomerId: string;
  @ApiProperty({ description: 'Minor units of the reporting currency' }) monthlyRevenueCents: number;
  @ApiProperty() paying: boolean;
  @ApiProperty({ type: Number, nullable: true, description: 'Metered reads in the window; null while read cost is not instrumented' }) readCost: number | null;
}
export class RankedData {
  @ApiProperty({ type: [RankedRowView] }) rows: RankedRowView[];
}
export class RankedEnvelope {
  @ApiProperty({ example: 'customers_ranked' }) object: string;
  @ApiProperty({ type: RankedData }) data: RankedData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}

/** The identifiers crossmatch takes; exactly one. */
export const CROSSMATCH_KEYS = ['userId', 'anonymousId', 'customerId', 'appleOriginalTransactionId', 'googlePurchaseToken', 'stripeCustomerId'] as const;
export type CrossmatchKey = (typeof CROSSMATCH_KEYS)[number];

const id = () => [IsOptional(), MaxLength(512, { message: 'identifiers are at most 512 characters' }), IsString()];
function Identifier(): PropertyDecorator {
  return (target, key) => id().forEach((decorator) => decorator(target, key));
}

export class CrossmatchQueryDto {
  @ApiPropertyOptional({ description: 'Your own user id (identify)' }) @Identifier() userId?: string;
  @ApiPropertyOptional() @Identifier() anonymousId?: string;
  @ApiPropertyOptional({ example: 'cdcust_…' }) @Identifier() customerId?: string;
  @ApiPropertyOptional() @Identifier() appleOriginalTransactionId?: string;
  @ApiPropertyOptional() @Identifier() googlePurchaseToken?: string;
  @ApiPropertyOptional({ example: 'cus_…' }) @Identifier() stripeCustomerId?: string;
}

export class CrossmatchCustomerView {
  @ApiProperty() serviceCustomerId: string;
  @ApiProperty() crossdeckCustomerId: string;
  @ApiProperty({ type: String, nullable: true }) userId: string | null;
}
export class CrossmatchRevenueView {
  @ApiProperty() paying: boolean;
  @ApiProperty() monthlyCents: number;
}
export class CrossmatchEntitlementsView {
  @ApiProperty() active: number;
  @ApiProperty({ type: [String] }) keys: string[];
}
export class CrossmatchReadCostView {
  @ApiProperty({ type: Number, nullable: true }) reads: number | null;
  @ApiProperty() windowDays: number;
}
export class CrossmatchData {
  @ApiProperty({ type: CrossmatchCustomerView, nullable: true }) customer: CrossmatchCustomerView | null;
  @ApiProperty({ type: CrossmatchRevenueView }) revenue: CrossmatchRevenueView;
  @ApiProperty({ type: CrossmatchEntitlementsView }) entitlements: CrossmatchEntitlementsView;
  @ApiProperty({ type: CrossmatchReadCostView }) readCost: CrossmatchReadCostView;
}
export class CrossmatchEnvelope {
  @ApiProperty({ example: 'crossmatch' }) object: string;
  @ApiProperty({ type: CrossmatchData }) data: CrossmatchData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}
