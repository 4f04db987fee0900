import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsString, Length, Matches, MaxLength } from 'class-validator';
import { ENVIRONMENTS, type Env } from '#platform';
import { GRANT_DURATIONS, GRANT_KEY_MAX, GRANT_KEY_MIN, GRANT_KEY_PATTERN, type GrantDuration } from '../domain/entitlement-rules.js';

const SNAKE_CASE_MESSAGE = 'entitlementKey must be snake_case: a lowercase letter, then lowercase letters, digits or underscores';

/** The entitlement a grant or a revoke names. */
abstract class EntitlementKeyDto {
  @ApiProperty({
    description: 'snake_case, 2 to 40 chars',
    example: 'pro_access',
    minLength: GRANT_KEY_MIN,
    maxLength: GRANT_KEY_MAX,
    pattern: GRANT_KEY_PATTERN.source,
  })
  @IsString()
  @Length(GRANT_KEY_MIN, GRANT_KEY_MAX)
  @Matches(GRANT_KEY_PATTERN, { message: SNAKE_CASE_MESSAGE })
  entitlementKey: string;
}

export class GrantEntitlementDto extends EntitlementKeyDto {
  @ApiProperty({ enum: GRANT_DURATIONS, description: 'P1Y is one calendar year (UTC); lifetime has no end' })
  @IsIn(GRANT_DURATIONS)
  duration: GrantDuration;

  @ApiProperty({ description: 'Audit rationale, 20 to 500 chars', minLength: 20, maxLength: 500, example: 'Goodwill credit after the outage of 3 March' })
  @IsString()
  @Length(20, 500)
  reason: string;
}

export class RevokeEntitlementDto extends EntitlementKeyDto {
  @ApiProperty({ description: 'Audit rationale, 1 to 500 chars', maxLength: 500, example: 'Chargeback' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(500)
  reason: string;
}

/** Dashboard grant: the dashboard's current environment travels in the body. */
export class OperatorGrantEntitlementDto extends GrantEntitlementDto {
  @ApiProperty({ enum: ENVIRONMENTS })
  @IsIn(ENVIRONMENTS)
  env: Env;
}

/** Dashboard revoke: the dashboard's current environment travels in the body. */
export class OperatorRevokeEntitlementDto extends RevokeEntitlementDto {
  @ApiProperty({ enum: ENVIRONMENTS })
  @IsIn(ENVIRONMENTS)
  env: Env;
}
