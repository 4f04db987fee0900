import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';

/** Exactly one hint is required (checked by the use case: missing_customer / invalid_param_value). */
export class EntitlementsQueryDto {
  @ApiPropertyOptional({ description: 'Service customer id (cdcust_…); secret keys only', example: 'cdcust_3f9a0c1d2e4b' })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  customerId?: string;

  @ApiPropertyOptional({ description: 'Developer user id' })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  userId?: string;

  @ApiPropertyOptional({ description: 'Anonymous device id' })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  anonymousId?: string;
}
