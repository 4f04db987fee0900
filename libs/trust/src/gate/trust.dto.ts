import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsEmail, IsIn, IsObject, IsOptional, IsString, Length, MaxLength, ValidateNested } from 'class-validator';
import { BLOCK_KINDS, type BlockKind } from './trust-rules.js';

export class BlockRuleDto {
  @ApiProperty({ enum: BLOCK_KINDS }) @IsIn(BLOCK_KINDS) kind: BlockKind;
  @ApiProperty({ example: 'spam.example', description: 'user: a developer user id; email; domain (covers its subdomains); ip: an address, exact' })
  @IsString()
  @Length(1, 320)
  value: string;
  @ApiProperty({ example: 'chargeback fraud', description: 'Kept in the audit entries of the decisions, never returned to clients' })
  @IsString()
  @Length(1, 500)
  reason: string;
}

export class ReviewRulesDto {
  @ApiPropertyOptional({ type: [String], example: ['mailinator.com'], description: 'Email domains (and their subdomains) the gate answers with review' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(1000)
  @IsString({ each: true })
  @Length(1, 253, { each: true })
  emailDomains?: string[];
}

export class TrustSettingsDto {
  @ApiPropertyOptional({ example: 'support@example.com', description: 'Returned by the gate and resolve so a blocked user can write in' })
  @IsOptional()
  @IsEmail()
  @MaxLength(320)
  supportEmail?: string;

  @ApiProperty({ type: [BlockRuleDto] })
  @IsArray()
  @ArrayMaxSize(10_000)
  // ValidateNested alone accepts an array where an object belongs ({"blocks": [[]]}).
  @IsObject({ each: true, message: 'each entry must be an object { kind, value, reason }' })
  @ValidateNested({ each: true })
  @Type(() => BlockRuleDto)
  blocks: BlockRuleDto[];

  @ApiPropertyOptional({ type: ReviewRulesDto })
  @IsOptional()
  @IsObject({ message: 'must be an object { emailDomains }' })
  @ValidateNested()
  @Type(() => ReviewRulesDto)
  review?: ReviewRulesDto;
}

export class BlockRuleView {
  @ApiProperty({ enum: BLOCK_KINDS }) kind: BlockKind;
  @ApiProperty() value: string;
  @ApiProperty() reason: string;
}

export class ReviewRulesView {
  @ApiProperty({ type: [String] }) emailDomains: string[];
}

export class TrustSettingsView {
  @ApiProperty({ example: 'trust_settings' }) object: 'trust_settings';
  @ApiProperty() projectId: string;
  @ApiProperty({ type: String, nullable: true }) supportEmail: string | null;
  @ApiProperty({ type: [BlockRuleView] }) blocks: BlockRuleView[];
  @ApiProperty({ type: ReviewRulesView }) review: ReviewRulesView;
}

export class TrustStatusQueryDto {
  @ApiPropertyOptional({ description: 'Developer user id' }) @IsOptional() @IsString() @Length(1, 256) userId?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @Length(1, 320) email?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @Length(1, 253) domain?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @Length(1, 64) ip?: string;
}

export class TrustGateDto {
  @ApiPropertyOptional({ example: 'new.user@example.com' }) @IsOptional() @IsString() @Length(1, 320) email?: string;
  @ApiPropertyOptional({ description: 'The end user’s address (forwarded by the developer’s server)' })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  ip?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @Length(1, 253) domain?: string;
  @ApiPropertyOptional({ description: 'Device fingerprint; accepted, not matched by any list yet' })
  @IsOptional()
  @IsString()
  @Length(1, 256)
  fingerprint?: string;
}

export class TrustStatusView {
  @ApiProperty({ example: 'trust_status' }) object: 'trust_status';
  @ApiProperty() blocked: boolean;
  @ApiProperty({ type: String, nullable: true, example: 'blocklist:domain' }) blockReason: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'domain:spam.example' }) blockedKey: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'blk_k3j2h1g0f9e8d7c6b5a4z3y2',
    description: 'The audit entry of a block (GET /v1/server/audit/{eventId})',
  })
  blockEventId: string | null;
}

export class TrustGateView {
  @ApiProperty({ example: 'trust_gate' }) object: 'trust_gate';
  @ApiProperty({ enum: ['allow', 'review', 'block'] }) action: 'allow' | 'review' | 'block';
  @ApiProperty({ description: 'False only when action is block' }) allow: boolean;
  @ApiProperty({ enum: ['low', 'medium', 'high'] }) band: 'low' | 'medium' | 'high';
  @ApiProperty({ type: String, nullable: true, example: 'blocklist:email' }) blockReason: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'email:bad@example.com' }) blockedKey: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'k3j2-h1g0', description: 'Support code of a block or review decision' }) reference: string | null;
  @ApiProperty({ type: String, nullable: true }) supportEmail: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'blk_k3j2h1g0f9e8d7c6b5a4z3y2' }) blockEventId: string | null;
}
