import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';

/** Exactly one hint is required (checked by the use case: missing_customer / invalid_param_value). */
export class EntitlementsQueryDto {
  @ApiPropertyOptional({ description: 'Service customer id (cdcust_…), as identify returned it; either key kind', example: 'cdcust_3f9a0c1d2e4b' })
  @IsOptional()
  // class-validator runs these bottom-up: the type check first, so `?userId[]=a` is named as not a string.
  @MaxLength(256)
  @IsString()
  customerId?: string;

  @ApiPropertyOptional({ description: 'The same as customerId, under the name the responses carry', example: 'cdcust_3f9a0c1d2e4b' })
  @IsOptional()
  @MaxLength(256)
  @IsString()
  serviceCustomerId?: string;

  @ApiPropertyOptional({ description: "The same as customerId, under the public clients' name", example: 'cdcust_3f9a0c1d2e4b' })
  @IsOptional()
  @MaxLength(256)
  @IsString()
  crossdeckCustomerId?: string;

  @ApiPropertyOptional({ description: 'Developer user id' })
  @IsOptional()
  @MaxLength(256)
  @IsString()
  userId?: string;

  @ApiPropertyOptional({ description: 'Anonymous device id' })
  @IsOptional()
  @MaxLength(256)
  @IsString()
  anonymousId?: string;
}
