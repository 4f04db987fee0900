import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { RevenueSummaryDataView } from '../charts/charts.dto.js';

export class OverviewQueryDto {
  @ApiPropertyOptional({ enum: ['production', 'sandbox'], default: 'production' })
  @IsOptional()
  @IsIn(['production', 'sandbox'], { message: 'env must be production or sandbox' })
  env?: 'production' | 'sandbox';
}

export class ActiveSubscriptionsByRailView {
  @ApiProperty({ type: Number, nullable: true }) ios_store: number | null;
  @ApiProperty({ type: Number, nullable: true }) card_payments: number | null;
  @ApiProperty({ type: Number, nullable: true }) android_store: number | null;
}
export class MrrPointView {
  @ApiProperty({ example: '2026-11-29' }) date: string;
  @ApiProperty({ type: Number, nullable: true }) mrrCents: number | null;
}
export class OverviewView {
  @ApiProperty({ example: 'overview' }) object: string;
  @ApiProperty({ example: 'USD' }) currency: string;
  @ApiProperty({ type: Number, nullable: true }) mrrCents: number | null;
  @ApiProperty({ type: Number, nullable: true }) payingCustomers: number | null;
  @ApiProperty({ type: ActiveSubscriptionsByRailView }) activeSubscriptionsByRail: ActiveSubscriptionsByRailView;
  @ApiProperty({ type: Number, nullable: true, description: 'Events whose client day is today (UTC); null is kept in the schema for compatibility' })
  eventsToday: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Error issues of the environment (issues have no resolved state yet); null before the first' })
  openErrorIssues: number | null;
  @ApiProperty({ description: 'Dead-lettered durable jobs of the project and environment' }) deadJobs: number;
  @ApiProperty({ type: [MrrPointView], description: '30 days, oldest first' }) mrrSeries: MrrPointView[];
  @ApiProperty({
    type: RevenueSummaryDataView,
    description: 'Revenue today, this month and last month, as `GET /admin/v1/projects/{projectId}/revenue-summary` answers it',
  })
  revenue: RevenueSummaryDataView;
}
