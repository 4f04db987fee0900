import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';

/** The read API's defaults (read-api.md). */
export const DEFAULT_DAYS = 30;
export const DEFAULT_LIMIT = 25;

/** `days=1..90` (default 30): UTC dates back from today, today included. */
export class DaysQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 90, default: DEFAULT_DAYS })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'days must be an integer from 1 to 90' })
  @Min(1, { message: 'days must be an integer from 1 to 90' })
  @Max(90, { message: 'days must be an integer from 1 to 90' })
  days?: number;
}

/** `limit=1..100` (default 25). */
export class LimitQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: DEFAULT_LIMIT })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'limit must be an integer from 1 to 100' })
  @Min(1, { message: 'limit must be an integer from 1 to 100' })
  @Max(100, { message: 'limit must be an integer from 1 to 100' })
  limit?: number;
}
