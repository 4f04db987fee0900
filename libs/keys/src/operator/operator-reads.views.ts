import { ApiProperty } from '@nestjs/swagger';
import { WorkspaceKeyView } from '../workspaces/workspaces.dto.js';
import { AppView, ProjectView } from './operator.dto.js';

/** Response shapes of the operator's list reads of the keys context. */
export class ProjectList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [ProjectView] }) data: ProjectView[];
  @ApiProperty({ description: 'More projects after the last one (pass its id as startingAfter)' }) hasMore: boolean;
}

export class AppList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [AppView], description: 'Each app as GET /admin/v1/apps/{appId} answers it' }) data: AppView[];
}

export class WorkspaceSummaryView {
  @ApiProperty({ example: 'workspace' }) object: 'workspace';
  @ApiProperty({ example: 'ws_3JdQ…' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: [String], description: 'proj_ ids' }) projects: string[];
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
}

export class WorkspaceList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [WorkspaceSummaryView] }) data: WorkspaceSummaryView[];
}

export class WorkspaceKeyList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [WorkspaceKeyView], description: 'Without plaintext (the service keeps only a hash)' }) data: WorkspaceKeyView[];
}
