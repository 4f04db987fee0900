import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiErrors, Operator, queryInt, queryString } from '#platform';
import { KeysOperatorReads } from './operator-reads.service.js';
import { AppList, ProjectList, WorkspaceKeyList, WorkspaceList } from './operator-reads.views.js';

/** The console's reads of projects, apps and workspaces. */
@ApiTags('operator')
@Operator()
@Controller('admin/v1')
export class KeysOperatorReadsController {
  constructor(private readonly reads: KeysOperatorReads) {}

  @Get('projects')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({ operationId: 'adminListProjects', summary: 'Projects, newest first, paginated with startingAfter' })
  @ApiQuery({ name: 'limit', required: false, description: '1..100, default 25' })
  @ApiQuery({ name: 'startingAfter', required: false, description: 'The id of the last project of the previous page' })
  @ApiOkResponse({ type: ProjectList })
  @ApiErrors({ 400: ['invalid_param_value'] })
  projects(@Query('limit') limit?: string, @Query('startingAfter') startingAfter?: string): Promise<ProjectList> {
    return this.reads.listProjects(queryInt(limit, 'limit', 1, 100, 25), queryString(startingAfter, 'startingAfter', 64));
  }

  @Get('projects/:projectId/apps')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({ operationId: 'adminListApps', summary: "A project's apps, each with every key and its status (secret keys without plaintext)" })
  @ApiOkResponse({ type: AppList })
  @ApiErrors({ 404: ['resource_missing'] })
  apps(@Param('projectId') projectId: string): Promise<AppList> {
    return this.reads.listApps(projectId);
  }

  @Get('workspaces')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({ operationId: 'adminListWorkspaces', summary: 'Workspaces with their projects, newest first' })
  @ApiOkResponse({ type: WorkspaceList })
  workspaces(): Promise<WorkspaceList> {
    return this.reads.listWorkspaces();
  }

  @Get('workspaces/:workspaceId/keys')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({ operationId: 'adminListWorkspaceKeys', summary: "A workspace's keys with their status, newest first (never the plaintext)" })
  @ApiOkResponse({ type: WorkspaceKeyList })
  @ApiErrors({ 404: ['resource_missing'] })
  workspaceKeys(@Param('workspaceId') workspaceId: string): Promise<WorkspaceKeyList> {
    return this.reads.listWorkspaceKeys(workspaceId);
  }
}
