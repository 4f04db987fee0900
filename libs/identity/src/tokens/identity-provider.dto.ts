import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, IsUrl, Length } from 'class-validator';

/** A public JSON Web Key (RFC 7517); private or symmetric members are refused. */
export class JsonWebKeyView {
  @ApiProperty({ example: 'RSA', description: 'Key type: RSA, EC or OKP' }) kty: string;
  @ApiPropertyOptional({ example: 'key-2026-01' }) kid?: string;
  @ApiPropertyOptional({ example: 'sig' }) use?: string;
  @ApiPropertyOptional({ example: 'RS256' }) alg?: string;
  @ApiPropertyOptional({ description: 'RSA modulus (base64url)' }) n?: string;
  @ApiPropertyOptional({ example: 'AQAB', description: 'RSA exponent (base64url)' }) e?: string;
  @ApiPropertyOptional({ example: 'P-256', description: 'EC or OKP curve' }) crv?: string;
  @ApiPropertyOptional({ description: 'EC or OKP x coordinate (base64url)' }) x?: string;
  @ApiPropertyOptional({ description: 'EC y coordinate (base64url)' }) y?: string;
}

/** A JSON Web Key Set: `{ keys: [ … ] }`. */
export class JsonWebKeySetView {
  @ApiProperty({ type: [JsonWebKeyView], minItems: 1 }) keys: JsonWebKeyView[];
}

export class PutIdentityProviderDto {
  @ApiProperty({ example: 'https://auth.example.com/', description: 'Expected `iss` claim' })
  @IsString()
  @Length(1, 512)
  issuer: string;

  @ApiProperty({ example: 'my-app', description: 'Expected `aud` claim' })
  @IsString()
  @Length(1, 512)
  audience: string;

  @ApiPropertyOptional({ description: 'Inline public JWKS `{ keys: [...] }` (exactly one of jwks and jwksUri)', type: JsonWebKeySetView })
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
  @ApiProperty({ type: JsonWebKeySetView, nullable: true }) jwks: { keys: Record<string, unknown>[] } | null;
  @ApiProperty({ type: String, nullable: true }) jwksUri: string | null;
  @ApiProperty({ description: 'Unix seconds' }) updatedAt: number;
}
