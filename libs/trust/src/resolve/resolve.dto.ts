import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, Length } from 'class-validator';

export class ResolveDto {
  @ApiPropertyOptional({
    description: 'Required unless a verified userId + idToken pair is supplied, or userId with a secret key (server-to-server calls may omit it)',
  })
  @IsOptional()
  @IsString()
  @Length(1, 128)
  anonymousId?: string;

  @ApiPropertyOptional({
    description: 'With idToken: the user the token must prove. With a secret key and no anonymousId: server-asserted recognition (tier 1 when known)',
  })
  @IsOptional()
  @IsString()
  @Length(1, 256)
  userId?: string;

  @ApiPropertyOptional({ description: 'Verified-identity proof; an invalid or expired token never errors and never elevates' })
  @IsOptional()
  @IsString()
  idToken?: string;

  @ApiPropertyOptional({ description: "The end user's IP address (forwarded by the developer's server), matched against the ip block list" })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  ip?: string;

  @ApiPropertyOptional({ description: 'The device has a registered passkey' })
  @IsOptional()
  @IsBoolean()
  passkeyAvailable?: boolean;
}

export class ResolvedUser {
  @ApiProperty({ description: 'The developer user id' }) id: string;
  @ApiPropertyOptional() email?: string;
  @ApiPropertyOptional({ description: 'Tier 3 only' }) firstName?: string;
}

export class ResolveResultView {
  @ApiProperty({ example: 'resolve_result' }) object: 'resolve_result';
  @ApiProperty({ enum: ['authenticated', 'recognized', 'anonymous'] }) status: 'authenticated' | 'recognized' | 'anonymous';
  @ApiProperty({ enum: [0, 1, 2, 3] }) trustTier: 0 | 1 | 2 | 3;
  @ApiProperty({ type: ResolvedUser, nullable: true }) user: ResolvedUser | null;
  @ApiProperty({ type: [String], nullable: true, description: 'Keys of the active entitlements at tier 3 (e.g. ["pro_access"]); null below' })
  entitlements: string[] | null;
  @ApiProperty({ enum: ['enter', 'silent_refresh', 'one_tap', 'welcome_back', 'onboard'] }) recommendedAction: string;
  @ApiProperty({ description: 'The device id of the request (empty string when none was sent)' }) anonymousId: string;
  @ApiProperty({ description: "A block rule of the project matches the user's ids, email or ip; a blocked user is never authenticated" })
  blocked: boolean;
  @ApiProperty({ type: String, nullable: true, example: 'blocklist:email' }) blockReason: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'email:bad@example.com' }) blockedKey: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'k3j2-h1g0', description: 'Support code of a block' }) reference: string | null;
  @ApiProperty({ type: String, nullable: true, description: "The project's support address" }) supportEmail: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'blk_k3j2h1g0f9e8d7c6b5a4z3y2', description: 'The audit entry of a block' })
  blockEventId: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The customer the request resolved to (cdcust_…); null when none' })
  serviceCustomerId: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'The same value as serviceCustomerId (the public clients read this name)' })
  crossdeckCustomerId: string | null;
}
