import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { ReadMetaView } from '../read-envelope.js';
import { DaysQuery, LimitQuery } from '../read-query.js';

class HostQueryDto {
  @ApiProperty({ description: "A host of one of the app's allowed origins", example: 'tenant.example.com' })
  @MaxLength(253, { message: 'host must be at most 253 characters' })
  @IsNotEmpty({ message: 'host is required' })
  @IsString({ message: 'host must be a string' })
  host: string;

  @DaysQuery()
  days?: number;
}

export class MetricsQueryDto extends HostQueryDto {
  @ApiPropertyOptional({ enum: ['total', 'day'], default: 'total' })
  @IsOptional()
  @IsIn(['total', 'day'], { message: 'granularity must be total or day' })
  granularity?: 'total' | 'day';
}

export class BreakdownQueryDto extends HostQueryDto {
  @ApiPropertyOptional({ enum: ['top_pages', 'top_referrers'], default: 'top_pages' })
  @IsOptional()
  @IsIn(['top_pages', 'top_referrers'], { message: 'dimension must be top_pages or top_referrers' })
  dimension?: 'top_pages' | 'top_referrers';

  @LimitQuery()
  limit?: number;
}

export class ViewsTotalsView {
  @ApiProperty({ type: Number, nullable: true }) uniqueVisitors: number | null;
  @ApiProperty({ type: Number, nullable: true }) views: number | null;
}
export class ViewsDayView {
  @ApiProperty({ example: '2026-06-19' }) date: string;
  @ApiProperty() uniqueVisitors: number;
  @ApiProperty() views: number;
}
export class MetricsData {
  @ApiProperty({ type: ViewsTotalsView }) totals: ViewsTotalsView;
  @ApiPropertyOptional({ type: [ViewsDayView], description: 'granularity=day: every day of the window, oldest first' }) series?: ViewsDayView[];
}
export class MetricsEnvelope {
  @ApiProperty({ example: 'web_metrics' }) object: string;
  @ApiProperty({ type: MetricsData }) data: MetricsData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}
export class BreakdownRowView {
  @ApiProperty({ description: 'A path (top_pages) or a referrer host (top_referrers)' }) key: string;
  @ApiProperty() views: number;
}
export class BreakdownData {
  @ApiProperty({ type: [BreakdownRowView], nullable: true }) rows: BreakdownRowView[] | null;
}
export class BreakdownEnvelope {
  @ApiProperty({ example: 'web_breakdown' }) object: string;
  @ApiProperty({ type: BreakdownData }) data: BreakdownData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}
