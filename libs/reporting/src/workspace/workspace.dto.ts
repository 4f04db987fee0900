import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsNotEmpty, IsOptional, IsString, Length, ValidateIf } from 'class-validator';
import { CoverageView, ReadMetaView } from '../read-envelope.js';

export class WorkspaceProjectItem {
  @ApiProperty({ example: 'proj_8fJ2kQ…' }) project: string;
  @ApiProperty({ example: 'proj_8fJ2kQ…', description: 'The same proj_ id' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: [String], enum: ['ios', 'android', 'web'] }) platforms: string[];
}
export class WorkspaceProjectsData {
  @ApiProperty({ type: [WorkspaceProjectItem] }) projects: WorkspaceProjectItem[];
}
export class WorkspaceProjectsEnvelope {
  @ApiProperty({ example: 'workspace_projects' }) object: string;
  @ApiProperty({ type: WorkspaceProjectsData }) data: WorkspaceProjectsData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}

export class ProjectCoverageItem {
  @ApiProperty() project: string;
  @ApiProperty({ type: CoverageView, description: 'revenue, readCost, analytics, userCensus (and errors): { state: measured | not_instrumented, since }' })
  coverage: Record<string, unknown>;
}
export class WorkspaceCoverageData {
  @ApiProperty({ type: [ProjectCoverageItem] }) projects: ProjectCoverageItem[];
}
export class WorkspaceCoverageEnvelope {
  @ApiProperty({ example: 'workspace_coverage' }) object: string;
  @ApiProperty({ type: WorkspaceCoverageData }) data: WorkspaceCoverageData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}

export class WorkspaceAppItem {
  @ApiProperty({ example: 'app_…' }) appId: string;
  @ApiProperty({ example: 'proj_…' }) project: string;
  @ApiProperty({ enum: ['ios', 'android', 'web'] }) platform: string;
  @ApiProperty({ type: String, nullable: true, example: 'cd_pub_live_…' }) publishableKeyLive: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'cd_pub_test_…' }) publishableKeyTest: string | null;
  @ApiProperty({ type: [String] }) allowedOrigins: string[];
}
export class WorkspaceAppsData {
  @ApiProperty({ type: [WorkspaceAppItem] }) apps: WorkspaceAppItem[];
}
export class WorkspaceAppsEnvelope {
  @ApiProperty({ example: 'workspace_apps' }) object: string;
  @ApiProperty({ type: WorkspaceAppsData }) data: WorkspaceAppsData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}

export class CreateWorkspaceProjectDto {
  @ApiProperty({ minLength: 1, maxLength: 100 }) @IsString() @Length(1, 100) name: string;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'Echoed back; not stored yet' })
  @IsOptional()
  @IsString()
  @Length(1, 64)
  businessModel?: string;
}
export class CreatedProjectItem {
  @ApiProperty() project: string;
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) businessModel: string | null;
}
export class CreatedProjectData {
  @ApiProperty({ type: CreatedProjectItem }) project: CreatedProjectItem;
}
export class CreatedProjectEnvelope {
  @ApiProperty({ example: 'project' }) object: string;
  @ApiProperty({ type: CreatedProjectData }) data: CreatedProjectData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}

export class CreateWorkspaceAppDto {
  @ApiProperty({ example: 'proj_…' }) @IsString() @Length(1, 64) projectId: string;
  @ApiProperty({ enum: ['ios', 'android', 'web'] }) @IsIn(['ios', 'android', 'web']) platform: 'ios' | 'android' | 'web';
  @ApiPropertyOptional({ description: 'Web: the app name and, as https://<domain>, its first allowed origin' })
  @IsOptional()
  @IsString()
  @Length(1, 253)
  domain?: string;
  @ApiPropertyOptional()
  @ValidateIf((o: CreateWorkspaceAppDto) => o.platform === 'ios' || o.bundleId !== undefined)
  @IsString()
  @IsNotEmpty()
  @Length(1, 255)
  bundleId?: string;
  @ApiPropertyOptional()
  @ValidateIf((o: CreateWorkspaceAppDto) => o.platform === 'android' || o.packageName !== undefined)
  @IsString()
  @IsNotEmpty()
  @Length(1, 255)
  packageName?: string;
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @ArrayMaxSize(100) @IsString({ each: true }) allowedOrigins?: string[];
}
export class CreatedAppData {
  @ApiProperty({ type: WorkspaceAppItem }) app: WorkspaceAppItem;
}
export class CreatedAppEnvelope {
  @ApiProperty({ example: 'app' }) object: string;
  @ApiProperty({ type: CreatedAppData }) data: CreatedAppData;
  @ApiProperty({ type: ReadMetaView }) meta: ReadMetaView;
}
