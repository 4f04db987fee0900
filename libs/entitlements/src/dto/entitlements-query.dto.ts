import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength, maxLength } from 'class-validator';
import { ApiError, isStorableText } from '#platform';

const HINT_MAX_LENGTH = 256;

/** Exactly one hint is required (checked by the use case: missing_customer / invalid_param_value). */
export class EntitlementsQueryDto {
  @ApiPropertyOptional({ description: 'Service customer id (cdcust_…), as identify returned it; either key kind', example: 'cdcust_3f9a0c1d2e4b' })
  @IsOptional()
  // class-validator runs these bottom-up: the type check first, so `?userId[]=a` is named as not a string.
  @MaxLength(HINT_MAX_LENGTH)
  @IsString()
  customerId?: string;

  @ApiPropertyOptional({ description: 'The same as customerId, under the name the responses carry', example: 'cdcust_3f9a0c1d2e4b' })
  @IsOptional()
  @MaxLength(HINT_MAX_LENGTH)
  @IsString()
  serviceCustomerId?: string;

  @ApiPropertyOptional({ description: "The same as customerId, under the public clients' name", example: 'cdcust_3f9a0c1d2e4b' })
  @IsOptional()
  @MaxLength(HINT_MAX_LENGTH)
  @IsString()
  crossdeckCustomerId?: string;

  @ApiPropertyOptional({ description: 'Developer user id' })
  @IsOptional()
  @MaxLength(HINT_MAX_LENGTH)
  @IsString()
  userId?: string;

  @ApiPropertyOptional({ description: 'Anonymous device id' })
  @IsOptional()
  @MaxLength(HINT_MAX_LENGTH)
  @IsString()
  anonymousId?: string;
}

/** The DTO's properties in declaration order: the order class-validator reports them in. */
const HINTS = ['customerId', 'serviceCustomerId', 'crossdeckCustomerId', 'userId', 'anonymousId'] as const;

/**
 * The query as the global validation pipe would hand it to the handler, without its
 * per-request cost (the fast path of GET /v1/entitlements): the same rules as the decorators
 * above (class-validator's own `maxLength`), the same first failure and message, the same
 * unstorable-text refusal, unknown parameters dropped. A unit test holds it to the pipe's answers.
 */
export function entitlementsQueryOf(query: Readonly<Record<string, unknown>>): EntitlementsQueryDto {
  for (const name of HINTS) {
    const value = query[name];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw ApiError.invalidParam(`${name} must be a string`);
    if (!maxLength(value, HINT_MAX_LENGTH)) throw ApiError.invalidParam(`${name} must be shorter than or equal to ${HINT_MAX_LENGTH} characters`);
  }
  for (const name of HINTS) {
    const value = query[name] as string | undefined;
    if (value !== undefined && !isStorableText(value)) throw ApiError.invalidParam(`${name}: must not contain NUL characters or unpaired surrogates`);
  }
  return {
    customerId: query.customerId as string | undefined,
    serviceCustomerId: query.serviceCustomerId as string | undefined,
    crossdeckCustomerId: query.crossdeckCustomerId as string | undefined,
    userId: query.userId as string | undefined,
    anonymousId: query.anonymousId as string | undefined,
  };
}
