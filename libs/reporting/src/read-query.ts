import { applyDecorators } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { ApiPropertyOptional } from '@nestjs/swagger';

/** The read API's defaults (docs/api.md, "Read API"). */
export const DEFAULT_DAYS = 30;
export const DEFAULT_LIMIT = 25;
/** The largest `limit` a read accepts. */
export const MAX_LIMIT = 100;

/** An optional integer query parameter within bounds, documented with its default; the message names it. */
function BoundedIntQuery(name: string, max: number, defaultValue: number) {
  const message = `${name} must be an integer from 1 to ${max}`;
  return applyDecorators(
    ApiPropertyOptional({ minimum: 1, maximum: max, default: defaultValue }),
    IsOptional(),
    Type(() => Number),
    IsInt({ message }),
    Min(1, { message }),
    Max(max, { message }),
  );
}

/** `days=1..90` (default 30): UTC dates back from today, today included. */
export const DaysQuery = () => BoundedIntQuery('days', 90, DEFAULT_DAYS);

/** `limit=1..100` (default 25). */
export const LimitQuery = () => BoundedIntQuery('limit', MAX_LIMIT, DEFAULT_LIMIT);

export class DaysQueryDto {
  @DaysQuery()
  days?: number;
}

export class LimitQueryDto {
  @LimitQuery()
  limit?: number;
}
