import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, Matches } from 'class-validator';
import { ANONYMOUS_ID_PATTERN, USER_ID_PATTERN } from '../domain/identifier-rules.js';

export class ForgetDto {
  @ApiPropertyOptional({ example: 'cdcust_3kTq9Vx2LmN8pR4sW7yZ1aBc', description: 'Identified erasure: secret key, or a verified idToken for userId' })
  @IsOptional()
  @IsString()
  @Length(1, 128)
  customerId?: string;

  @ApiPropertyOptional({ description: 'Identified erasure: secret key, or a verified idToken whose subject equals userId' })
  @IsOptional()
  @IsString()
  @Matches(USER_ID_PATTERN, { message: 'userId must be 1 to 256 chars from letters, digits, _ - . : @' })
  userId?: string;

  @ApiPropertyOptional({
    description:
      'Anonymous-only erasure needs no proof. With a secret key the customer the device resolves to is erased; with a publishable key ' +
      'a customer who has a developer user id keeps everything but this device',
  })
  @IsOptional()
  @IsString()
  @Matches(ANONYMOUS_ID_PATTERN, { message: 'anonymousId must be 1 to 128 chars from letters, digits, _ -' })
  anonymousId?: string;

  @ApiPropertyOptional({ description: 'Identity-provider JWT proving userId (publishable keys)' })
  @IsOptional()
  @IsString()
  idToken?: string;
}

export class ForgotView {
  @ApiProperty({ example: 'forgot' }) object: 'forgot';
  @ApiProperty({ type: String, nullable: true, description: 'The customer the hint matched (also when only the device was forgotten); null when none matched' })
  serviceCustomerId: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The same value as serviceCustomerId (the public clients read this name)' })
  crossdeckCustomerId: string | null;
  @ApiProperty({ description: 'Unix ms; the original time on a repeated call; the time the device was forgotten for scope "device"' })
  queuedAt: number;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
  @ApiProperty({
    enum: ['customer', 'device'],
    description:
      '"customer": the customer was queued for erasure (or would be, when none matched). "device": only the device was forgotten ' +
      '(anonymousId alone with a publishable key, for a customer with a developer user id), or a device id alone matched no customer.',
  })
  scope: ForgetScope;
}

export type ForgetScope = 'customer' | 'device';
