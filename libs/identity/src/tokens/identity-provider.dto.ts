import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, IsUrl, Length } from 'class-validator';

export class PutIdentityProviderDto {
  @ApiProperty({ example: 'https://auth.example.com/', description: 'Expected `iss` claim' })
  @IsString()
  @Length(1, 512)
  issuer: string;

  @ApiProperty({ example: 'my-app', description: 'Expected `aud` claim' })
  @IsString()
  @Length(1, 512)
  audience: string;

  @ApiPropertyOptional({ description: 'Inline public JWKS `{ keys: [...] }` (exactly one of jwks and jwksUri)', type: Object })
  @IsOptional()
  @IsObject()
  jwks?: { keys?: unknown };

  @ApiPropertyOptional({ example: 'https://auth.example.com/.well-known/jwks.json', description: 'JWKS URI, fetched and cached' })
  @IsOptional()
  @IsString()
  @IsUrl({ protocols: ['https', 'http'], require_protocol: true, require_tld: false })
  jwksUri?: string;
}

export class IdentityProviderView {
  @ApiProperty({ example: 'identity_provider' }) object: 'identity_provider';
  @ApiProperty() projectId: string;
  @ApiProperty() issuer: string;
  @ApiProperty() audience: string;
  @ApiProperty({ type: Object, nullable: true }) jwks: { keys: Record<string, unknown>[] } | null;
  @ApiProperty({ type: String, nullable: true }) jwksUri: string | null;
  @ApiProperty({ description: 'Unix seconds' }) updatedAt: number;
}
