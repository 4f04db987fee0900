import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, Length } from 'class-validator';
import { WORKSPACE_KEY_SCOPES } from '../auth/auth-context.js';

export class CreateWorkspaceDto {
  @ApiProperty({ minLength: 1, maxLength: 100, example: 'Acme' }) @IsString() @Length(1, 100) name: string;
}

export class CreateWorkspaceKeyDto {
  @ApiPropertyOptional({
    type: [String],
    enum: WORKSPACE_KEY_SCOPES,
    description:
      'Default: the aggregate set (reporting:aggregate, revenue:read, errors:read, buckets:read). workspace:write lets the key create projects and apps.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsIn(WORKSPACE_KEY_SCOPES, { each: true })
  scopes?: string[];

  @ApiPropertyOptional({ maxLength: 100, example: 'assistant connector' }) @IsOptional() @IsString() @Length(1, 100) name?: string;
}

export class WorkspaceView {
  @ApiProperty({ example: 'workspace' }) object: 'workspace';
  @ApiProperty({ example: 'ws_3JdQ…' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: [String], description: 'proj_ ids' }) projects: string[];
}

export class WorkspaceKeyView {
  @ApiProperty({ example: 'workspace_key' }) object: 'workspace_key';
  @ApiProperty({ example: 'key_3JdQ…' }) id: string;
  @ApiProperty() workspaceId: string;
  @ApiPropertyOptional({ type: String, nullable: true }) name: string | null;
  @ApiPropertyOptional({ description: 'Plaintext cd_wk_…, only in the response that created it' }) key?: string;
  @ApiProperty() last4: string;
  @ApiProperty({ type: [String] }) scopes: string[];
  @ApiProperty({ enum: ['active', 'revoked'] }) status: 'active' | 'revoked';
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
}
