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

  @ApiPropertyOptional({ description: 'Anonymous-only erasure needs no proof' })
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
  @ApiProperty({ type: String, nullable: true, description: 'null when no hint matched a known customer' }) serviceCustomerId: string | null;
  @ApiProperty({ description: 'Unix ms; the original time on a repeated call' }) queuedAt: number;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}
