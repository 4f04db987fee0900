import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { ReadMetaView } from '../read-envelope.js';

export class RevenueQueryDto {
  @ApiPropertyOptional({ enum: ['total', 'day'], default: 'total' })
  @IsOptional()
  @IsIn(['total', 'day'], { message: 'granularity must be total or day' })
  granularity?: 'total' | 'day';

  @ApiPropertyOptional({ minimum: 1, maximum: 366, default: 30, description: 'With granularity=day: the series window in days' })
  @IsOptional()
  @Type(() => Number)
  @Min(1, { message: 'days must be between 1 and 366' })
  @Max(366, { message: 'days must be between 1 and 366' })
  @IsInt({ message: 'days must be an integer between 1 and 366' })
  days?: number;
}

export class PutReportingSettingsDto {
  @ApiProperty({ example: 'EUR', description: 'ISO 4217 code: the currency mrrCents and the averages count' })
  @Matches(/^[A-Z]{3}$/, { message: 'currency must be an ISO 4217 code (three capital letters, e.g. USD)' })
  @IsString({ message: 'currency must be an ISO 4217 code (three capital letters, e.g. USD)' })
  currency: string;
}

export class ReportingSettingsView {
  @ApiProperty({ example: 'reporting_settings' }) object: string;
  @ApiProperty({ example: 'proj_…' }) projectId: string;
  @ApiProperty({ example: 'EUR' }) currency: string;
}

export class RailRevenueView {
  @ApiProperty({ type: Number, nullable: true }) mrrCents: number | null;
  @ApiProperty({ type: Number, nullable: true }) payingCustomers: number | null;
  @ApiProperty({
    type: Number,
    nullable: true,
    description: 'Subscriptions of this rail in a free trial that gives access now (never in MRR nor paying); null when not instrumented',
  })
  activeTrials: number | null;
}
/** Each rail's MRR as a number (the public CLI prints the rails whose value is a number). */
export class RevenueByRailView {
  @ApiProperty({ type: Number, nullable: true, description: 'MRR in cents of the reporting currency; null when not instrumented' }) ios_store: number | null;
  @ApiProperty({ type: Number, nullable: true }) card_payments: number | null;
  @ApiProperty({ type: Number, nullable: true }) android_store: number | null;
}
export class RevenueByRailDetailView {
  @ApiProperty({ type: RailRevenueView }) ios_store: RailRevenueView;
  @ApiProperty({ type: RailRevenueView }) card_payments: RailRevenueView;
  @ApiProperty({ type: RailRevenueView }) android_store: RailRevenueView;
}
export class CashByShapeView {
  @ApiProperty({ type: Number, nullable: true }) recurring: number | null;
  @ApiProperty({ type: Number, nullable: true }) oneOff: number | null;
}
export class OtherCurrencyView {
  @ApiProperty({ example: 'EUR' }) currency: string;
  @ApiProperty() mrrCents: number;
}
export class RevenueFiguresView {
  @ApiProperty({ example: 'USD', description: 'The reporting currency' }) currency: string;
  @ApiProperty({ type: Number, nullable: true, description: 'Minor units of the reporting currency; null when not instrumented' }) mrrCents: number | null;
  @ApiProperty({ type: Number, nullable: true }) payingCustomers: number | null;
  @ApiProperty({ type: RevenueByRailView, description: "Each rail's mrrCents" }) byRail: RevenueByRailView;
  @ApiProperty({ type: RevenueByRailDetailView, description: "Each rail's figures: mrrCents, payingCustomers, activeTrials" })
  byRailDetail: RevenueByRailDetailView;
  @ApiProperty({ type: Number, nullable: true }) recognisedCashThisMonthCents: number | null;
  @ApiProperty({ type: CashByShapeView }) recognisedCashThisMonthByShape: CashByShapeView;
  @ApiProperty({ type: Number, nullable: true, description: 'Refunds and chargebacks less reversed chargebacks, this calendar month, reporting currency' })
  refundsCents: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'recognisedCashThisMonthCents less refundsCents' }) netCashCents: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Subscriptions in a free trial (never in MRR nor paying)' }) activeTrials: number | null;
  @ApiProperty({ type: [OtherCurrencyView], description: 'MRR in other currencies (no exchange rates are applied)' }) otherCurrencies: OtherCurrencyView[];
}
export class RevenuePointView {
  @ApiProperty({ example: '2026-11-29' }) date: string;
  @ApiProperty({ type: Number, nullable: true }) mrrCents: number | null;
  @ApiProperty({ type: Number, nullable: true }) payingCustomers: number | null;
  @ApiPropertyOptional({ type: Number, nullable: true, description: 'Refunds and chargebacks less reversals of that day' }) refundsCents?: number | null;
}
export class RevenueData extends RevenueFiguresView {
  @ApiProperty({ type: RevenueFiguresView, description: 'The same figures again (the CLI reads them here)' }) current: RevenueFiguresView;
  @ApiPropertyOptional({ type: [RevenuePointView], description: 'granularity=day: one point per day, oldest first' }) series?: RevenuePointView[];
}
export class RevenueEnvelope {
  @ApiProperty({ example: 'revenue' }) object: string;
  @ApiProperty({ type: RevenueData }) data: RevenueData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}

export class RevenueAveragesData {
  @ApiProperty({ example: 'USD' }) currency: string;
  @ApiProperty({ type: Number, nullable: true, description: 'MRR per paying customer' }) arpuCents: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'combinedLifetimeValueCents per paying customer' }) averageLifetimeValueCents: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Annualised MRR (× 12) plus one-off cash to date' }) combinedLifetimeValueCents: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Cash actually recognised, recurring and one-off' }) recognisedCashToDateCents: number | null;
  @ApiProperty({ type: Number, nullable: true }) payingCustomers: number | null;
}
export class RevenueAveragesEnvelope {
  @ApiProperty({ example: 'revenue_averages' }) object: string;
  @ApiProperty({ type: RevenueAveragesData }) data: RevenueAveragesData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}
