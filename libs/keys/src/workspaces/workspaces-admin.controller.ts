import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, Operator } from '#platform';
import { CreateWorkspaceDto, CreateWorkspaceKeyDto, WorkspaceKeyView, WorkspaceView } from './workspaces.dto.js';
import { WorkspacesAdminService } from './workspaces-admin.service.js';

@ApiTags('operator')
@Operator()
@Controller('admin/v1')
export class WorkspacesAdminController {
  constructor(private readonly workspaces: WorkspacesAdminService) {}

  @Post('workspaces')
  @ApiOperation({ operationId: 'adminCreateWorkspace', summary: 'Create a workspace (a group of projects its workspace keys read)' })
  @ApiCreatedResponse({ type: WorkspaceView })
  @ApiErrors({ 400: ['invalid_param_value', 'missing_required_param'] })
  create(@Body() body: CreateWorkspaceDto): Promise<WorkspaceView> {
    return this.workspaces.createWorkspace(body.name);
  }

  @Post('workspaces/:workspaceId/projects/:projectId')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'adminAddWorkspaceProject',
    summary: 'Add a project to a workspace (idempotent); returns the workspace',
    description: 'An archived project is refused with 400 invalid_param_value: no key reaches an archived project.',
  })
  @ApiOkResponse({ type: WorkspaceView })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  addProject(@Param('workspaceId') workspaceId: string, @Param('projectId') projectId: string): Promise<WorkspaceView> {
    return this.workspaces.addProject(projectId, workspaceId);
  }

  @Post('workspaces/:workspaceId/keys')
  @ApiOperation({
    operationId: 'adminCreateWorkspaceKey',
    summary: 'Mint a workspace key (cd_wk_…): the plaintext is in this response only, the service keeps its SHA-256',
  })
  @ApiCreatedResponse({ type: WorkspaceKeyView })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  createKey(@Param('workspaceId') workspaceId: string, @Body() body: CreateWorkspaceKeyDto): Promise<WorkspaceKeyView> {
    return this.workspaces.createKey(workspaceId, body);
  }

  @Post('workspace-keys/:keyId/revoke')
  @HttpCode(200)
  @ApiOperation({ operationId: 'adminRevokeWorkspaceKey', summary: 'Revoke a workspace key at once (its next request: 401 key_revoked)' })
  @ApiOkResponse({ type: WorkspaceKeyView })
  @ApiErrors({ 404: ['resource_missing'] })
  revoke(@Param('keyId') keyId: string): Promise<WorkspaceKeyView> {
    return this.workspaces.revokeKey(keyId);
  }
}
