import { Body, Controller, Get, Header, HttpCode, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey, WORKSPACE_WRITE_SCOPE } from '#keys';
import type { ReadEnvelope } from '../read-envelope.js';
import { ReportingRead } from '../reporting-read.decorator.js';
import {
  CreateWorkspaceAppDto,
  CreateWorkspaceProjectDto,
  CreatedAppEnvelope,
  CreatedProjectEnvelope,
  WorkspaceAppsEnvelope,
  WorkspaceCoverageEnvelope,
  WorkspaceProjectsEnvelope,
  type CreatedAppData,
  type CreatedProjectData,
  type WorkspaceAppsData,
  type WorkspaceCoverageData,
  type WorkspaceProjectsData,
} from './workspace.dto.js';
import { WorkspaceReadsService } from './workspace-reads.service.js';

const READ_ERRORS = {
  400: ['invalid_param_value'],
  401: ['missing_api_key', 'invalid_api_key', 'key_revoked'],
  403: ['project_not_allowed'],
  429: ['rate_limited'],
} as const;

@ApiTags('reporting')
@Controller()
export class WorkspaceController {
  constructor(private readonly workspace: WorkspaceReadsService) {}

  @Get('v1/workspace/projects')
  @ReportingRead({ workspace: 'workspace' })
  @ApiOperation({
    operationId: 'listWorkspaceProjects',
    summary: 'Projects the key reads (scope: any)',
    description: 'A workspace key: every project of its workspace (or the one named by project=); a secret key: its own. reads bucket.',
  })
  @ApiOkResponse({ type: WorkspaceProjectsEnvelope })
  @ApiErrors(READ_ERRORS)
  projects(@CurrentKey() auth: AuthContext): Promise<ReadEnvelope<WorkspaceProjectsData>> {
    return this.workspace.projects(auth);
  }

  @Get('v1/workspace/coverage')
  @ReportingRead({ workspace: 'workspace' })
  @ApiOperation({
    operationId: 'getWorkspaceCoverage',
    summary: 'Coverage of each project the key reads (scope: any)',
    description:
      'Per project: revenue, errors, analytics, readCost, userCensus as measured (since, ms) or not_instrumented (figures null). env= picks the environment of a workspace key.',
  })
  @ApiOkResponse({ type: WorkspaceCoverageEnvelope })
  @ApiErrors(READ_ERRORS)
  coverage(@CurrentKey() auth: AuthContext): Promise<ReadEnvelope<WorkspaceCoverageData>> {
    return this.workspace.coverageOf(auth);
  }

  @Get('v1/workspace/apps')
  @ReportingRead({ workspace: 'workspace' })
  @ApiOperation({
    operationId: 'listWorkspaceApps',
    summary: 'Apps and their publishable keys (scope: any)',
    description: 'Every app of the projects the key reads (project= narrows it), with its live and test publishable keys.',
  })
  @ApiOkResponse({ type: WorkspaceAppsEnvelope })
  @ApiErrors(READ_ERRORS)
  apps(@CurrentKey() auth: AuthContext): Promise<ReadEnvelope<WorkspaceAppsData>> {
    return this.workspace.apps(auth);
  }

  @Post('v1/projects')
  @HttpCode(201)
  @RequireApiKey({ kinds: [], scopes: [WORKSPACE_WRITE_SCOPE], workspace: 'workspace' })
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'createWorkspaceProject',
    summary: 'Create a project in the key’s workspace (workspace key, scope: workspace:write)',
  })
  @ApiCreatedResponse({ type: CreatedProjectEnvelope })
  @ApiErrors({ ...READ_ERRORS, 400: ['invalid_param_value', 'missing_required_param'], 403: ['insufficient_scope'] })
  createProject(@CurrentKey() auth: AuthContext, @Body() body: CreateWorkspaceProjectDto): Promise<ReadEnvelope<CreatedProjectData>> {
    return this.workspace.createProject(auth, body);
  }

  @Post('v1/apps')
  @HttpCode(201)
  @RequireApiKey({ kinds: [], scopes: [WORKSPACE_WRITE_SCOPE], workspace: 'workspace' })
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'createWorkspaceApp',
    summary: 'Create an app (and its keys) in a project of the key’s workspace (workspace key, scope: workspace:write)',
  })
  @ApiCreatedResponse({ type: CreatedAppEnvelope })
  @ApiErrors({ ...READ_ERRORS, 400: ['invalid_param_value', 'missing_required_param'], 403: ['insufficient_scope', 'project_not_allowed'] })
  createApp(@CurrentKey() auth: AuthContext, @Body() body: CreateWorkspaceAppDto): Promise<ReadEnvelope<CreatedAppData>> {
    return this.workspace.createApp(auth, body);
  }
}
