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
}
