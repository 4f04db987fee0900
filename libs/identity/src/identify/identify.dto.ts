import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsOptional, IsString, Length, Matches } from 'class-validator';
import { ANONYMOUS_ID_PATTERN, APP_ACCOUNT_TOKEN_PATTERN, USER_ID_PATTERN } from '../domain/identifier-rules.js';

export class IdentifyDto {
  // Required, but a missing id is invalid_param_value (spec), so the service checks presence.
  @ApiProperty({ example: 'user_42', description: '1 to 256 chars from letters, digits, `_ - . : @`' })
  @IsOptional()
  @IsString()
  @Matches(USER_ID_PATTERN, { message: 'userId must be 1 to 256 chars from letters, digits, _ - . : @' })
  userId: string;

  @ApiProperty({ example: 'anon_3f9a0c1d', description: '1 to 128 chars from letters, digits, `_ -`' })
  @IsOptional()
  @IsString()
  @Matches(ANONYMOUS_ID_PATTERN, { message: 'anonymousId must be 1 to 128 chars from letters, digits, _ -' })
  anonymousId: string;

  @ApiPropertyOptional({ description: "A verified idToken's email claim overrides it" })
  @IsOptional()
  @IsString()
  @Length(1, 320)
  email?: string;

  @ApiPropertyOptional({ description: 'Identity-provider JWT; its verified subject must equal userId' })
  @IsOptional()
  @IsString()
  idToken?: string;

  @ApiPropertyOptional({ example: '6f1c1b8e-2a4b-4c1e-9a8e-3b2f1d0c9e7a', description: 'Lowercase RFC 4122 UUID; binds the iOS rail' })
  @IsOptional()
  @IsString()
  @Matches(APP_ACCOUNT_TOKEN_PATTERN, { message: 'appAccountToken must be a lowercase RFC 4122 UUID' })
  appAccountToken?: string;

  @ApiPropertyOptional({
    type: 'object',
    // The value types the trait rules keep (domain/traits.ts); a generated client types them.
    // (OpenAPI 3.0 has no null type: each alternative is nullable.)
    additionalProperties: {
      anyOf: [
        { type: 'string', maxLength: 1024, nullable: true },
        { type: 'number', nullable: true },
        { type: 'boolean', nullable: true },
      ],
    },
    example: { plan: 'free', seats: 3, beta: true },
    description:
      'At most 32 keys; strings up to 1,024 chars, finite numbers, booleans or null. Anything else is dropped, never rejected, except text that cannot be stored (a NUL or an unpaired surrogate in a key or value): 400 invalid_param_value naming it (`traits.plan`).',
  })
  @Allow()
  traits?: unknown;
}
