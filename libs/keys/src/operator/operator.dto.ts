import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateIf,
  ValidateNested,
  registerDecorator,
  type ValidationOptions,
} from 'class-validator';
import { KNOWN_SCOPES } from '../auth/auth-context.js';
import { ErrorNoiseDenyListView } from '../config/app-config.view.js';
import { isValidAllowlistEntry } from '../domain/origin-allowlist.js';

function IsAllowlistEntry(options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isAllowlistEntry',
      target: target.constructor,
      propertyName,
      options: { message: `${propertyName} entries must be origins like https://app.example.com, http://localhost:5173 or https://*.example.com`, ...options },
      validator: { validate: (value: unknown) => isValidAllowlistEntry(value) },
    });
}

const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

export class CreateProjectDto {
  @ApiProperty({ minLength: 1, maxLength: 100, example: 'Acme' })
  @IsString()
  @Length(1, 100)
  name: string;
}

export class CreateAppDto {
  @ApiProperty({ minLength: 1, maxLength: 100 })
  @IsString()
  @Length(1, 100)
  name: string;

  @ApiProperty({ enum: ['ios', 'android', 'web'] })
  @IsIn(['ios', 'android', 'web'])
  platform: 'ios' | 'android' | 'web';

  @ApiPropertyOptional({ description: 'iOS lock; required when platform is ios' })
  @ValidateIf((o: CreateAppDto) => o.platform === 'ios' || o.bundleId !== undefined)
  @IsString()
  @IsNotEmpty()
  @Length(1, 255)
  bundleId?: string;

  @ApiPropertyOptional({ description: 'Android lock; required when platform is android' })
  @ValidateIf((o: CreateAppDto) => o.platform === 'android' || o.packageName !== undefined)
  @IsString()
  @IsNotEmpty()
  @Length(1, 255)
  packageName?: string;

  @ApiPropertyOptional({ type: [String], example: ['https://app.example.com', 'https://*.example.com', 'http://localhost:5173'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsAllowlistEntry({ each: true })
  allowedOrigins?: string[];
}

export class VerifierConfigDto {
  @ApiPropertyOptional({ type: Boolean, nullable: true })
  @IsOptional()
  @IsBoolean()
  logVerifierResults?: boolean | null;

  @ApiPropertyOptional({ type: Boolean, nullable: true })
  @IsOptional()
  @IsBoolean()
  verifyContractsAtBoot?: boolean | null;
}

export class PatchAppDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 100 })
  @IsOptional()
  @IsString()
  @Length(1, 100)
  name?: string;

  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsAllowlistEntry({ each: true })
  allowedOrigins?: string[];

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Length(1, 255)
  bundleId?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @Length(1, 255)
  packageName?: string;

  @ApiPropertyOptional({ example: '1.2.0', nullable: true, description: "null resets it to the manifest floor of the app's surface" })
  @IsOptional()
  @IsString()
  @Matches(SEMVER, { message: 'sdkMinVersion must be a version like 1.2.0' })
  sdkMinVersion?: string;

  @ApiPropertyOptional({ type: [String], example: ['1.0.x', '0.9.x'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Length(1, 32, { each: true })
  sdkDeprecatedVersions?: string[];

  @ApiPropertyOptional({ type: VerifierConfigDto })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => VerifierConfigDto)
  verifierConfig?: VerifierConfigDto;

  @ApiPropertyOptional({ type: ErrorNoiseDenyListView, description: 'Versioned drop-at-source patterns' })
  @IsOptional()
  @IsObject()
  errorNoiseDenyList?: Record<string, unknown>;
}

export class RotateKeyDto {
  @ApiPropertyOptional({ type: [String], description: "Secret keys only; default: the old key's scopes", example: ['reporting:aggregate'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsIn(KNOWN_SCOPES, { each: true })
  scopes?: string[];
}

// ---- response views (documentation and typing) ----

export class ProjectView {
  @ApiProperty({ example: 'project' }) object: 'project';
  @ApiProperty({ example: 'proj_8fJ2kQ...' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() archived: boolean;
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
}

export class ApiKeyView {
  @ApiProperty({ example: 'api_key' }) object: 'api_key';
  @ApiProperty({ example: 'key_3JdQ...' }) id: string;
  @ApiProperty() appId: string;
  @ApiProperty({ enum: ['publishable', 'secret'] }) kind: 'publishable' | 'secret';
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: 'sandbox' | 'production';
  @ApiPropertyOptional({ description: 'Plaintext. Publishable keys always; secret keys only in the response that created them.' })
  key?: string;
  @ApiProperty() last4: string;
  @ApiPropertyOptional({ type: [String], description: 'Secret keys only' }) scopes?: string[];
  @ApiProperty({ enum: ['active', 'rotated_out', 'expired', 'revoked'] }) status: 'active' | 'rotated_out' | 'expired' | 'revoked';
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
  @ApiPropertyOptional({ description: 'Unix seconds; end of the grace window of a rotated-out key' }) expiresAt?: number;
}

export class AppView {
  @ApiProperty({ example: 'app' }) object: 'app';
  @ApiProperty() id: string;
  @ApiProperty() projectId: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['ios', 'android', 'web'] }) platform: 'ios' | 'android' | 'web';
  @ApiProperty({ nullable: true, type: String }) bundleId: string | null;
  @ApiProperty({ nullable: true, type: String }) packageName: string | null;
  @ApiProperty({ type: [String] }) allowedOrigins: string[];
  @ApiProperty({ nullable: true, type: String }) sdkMinVersion: string | null;
  @ApiProperty({ type: [String] }) sdkDeprecatedVersions: string[];
  @ApiProperty({ type: VerifierConfigDto }) verifierConfig: { logVerifierResults: boolean | null; verifyContractsAtBoot: boolean | null };
  @ApiProperty({ type: ErrorNoiseDenyListView }) errorNoiseDenyList: Record<string, unknown>;
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
  @ApiProperty({ type: [ApiKeyView] }) keys: ApiKeyView[];
}

export class RotatedOutView {
  @ApiProperty() id: string;
  @ApiProperty({ example: 'rotated_out' }) status: 'rotated_out';
  @ApiProperty({ description: 'Unix seconds' }) expiresAt: number;
}

export class KeyRotationView {
  @ApiProperty({ example: 'key_rotation' }) object: 'key_rotation';
  @ApiProperty({ type: ApiKeyView }) key: ApiKeyView;
  @ApiProperty({ type: RotatedOutView }) rotatedOut: RotatedOutView;
}

export class KeyActivityEntry {
  @ApiProperty() keyId: string;
  @ApiProperty({ enum: ['created', 'rotated', 'revoked'] }) action: string;
  @ApiProperty({ description: 'Unix seconds' }) at: number;
  @ApiProperty({ nullable: true, type: String }) requestId: string | null;
}

export class KeyActivityList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [KeyActivityEntry] }) data: KeyActivityEntry[];
}

export class BucketRuleView {
  @ApiProperty({ description: 'Tokens per second' }) sustained: number;
  @ApiProperty({ description: 'Bucket capacity' }) burst: number;
}
