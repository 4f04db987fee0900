import { Body, Controller, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ApiErrors, RequestId, Operator } from '#platform';
import type { RateLimitTable } from '../rate-limits/project-rate-limits.service.js';
import { KeyLifecycleService } from './key-lifecycle.service.js';
import { ProjectsAdminService } from './projects-admin.service.js';
import { RateLimitsAdminService } from './rate-limits-admin.service.js';
import {
  ApiKeyView,
  AppView,
  BucketRuleView,
  CreateAppDto,
  CreateProjectDto,
  KeyActivityList,
  KeyRotationView,
  PatchAppDto,
  ProjectView,
  RotateKeyDto,
} from './operator.dto.js';

const RATE_LIMIT_SCHEMA = {
  type: 'object',
  description: 'Bucket name (events, purchases, entitlements, heartbeat, forget, alias) to { sustained, burst }',
  additionalProperties: { $ref: getSchemaPath(BucketRuleView) },
  example: { events: { sustained: 100, burst: 1000 } },
};

@ApiTags('operator')
@Operator()
@ApiExtraModels(BucketRuleView)
@Controller('admin/v1')
export class KeysAdminController {
  constructor(
    private readonly admin: ProjectsAdminService,
    private readonly keyLifecycle: KeyLifecycleService,
    private readonly rateLimits: RateLimitsAdminService,
  ) {}

  @Post('projects')
  @ApiOperation({ operationId: 'adminCreateProject', summary: 'Create a project' })
  @ApiCreatedResponse({ type: ProjectView })
  @ApiErrors({ 400: ['missing_required_param'] })
  createProject(@Body() body: CreateProjectDto): Promise<ProjectView> {
    return this.admin.createProject(body.name);
  }

  @Get('projects/:projectId')
  @ApiOperation({ operationId: 'adminGetProject', summary: 'Read a project' })
  @ApiOkResponse({ type: ProjectView })
  getProject(@Param('projectId') projectId: string): Promise<ProjectView> {
    return this.admin.getProject(projectId);
  }

  @Post('projects/:projectId/archive')
  @HttpCode(200)
  @ApiOperation({ operationId: 'adminArchiveProject', summary: 'Archive a project: every key of it fails closed with 401 invalid_api_key' })
  @ApiOkResponse({ type: ProjectView })
  archiveProject(@Param('projectId') projectId: string): Promise<ProjectView> {
    return this.admin.archiveProject(projectId);
  }

  @Post('projects/:projectId/apps')
  @ApiOperation({ operationId: 'adminCreateApp', summary: 'Create an app and mint its four keys (secret plaintext shown only here)' })
  @ApiCreatedResponse({ type: AppView })
  @ApiErrors({ 400: ['missing_required_param'] })
  createApp(@Param('projectId') projectId: string, @Body() body: CreateAppDto, @RequestId() requestId: string): Promise<AppView> {
    return this.admin.createApp(projectId, body, requestId);
  }

  @Get('apps/:appId')
  @ApiOperation({ operationId: 'adminGetApp', summary: 'Read an app with every key and its status (secret keys without plaintext)' })
  @ApiOkResponse({ type: AppView })
  getApp(@Param('appId') appId: string): Promise<AppView> {
    return this.admin.getApp(appId);
  }

  @Patch('apps/:appId')
  @ApiOperation({ operationId: 'adminUpdateApp', summary: 'Change app settings (what GET /v1/config returns)' })
  @ApiOkResponse({ type: AppView })
  patchApp(@Param('appId') appId: string, @Body() body: PatchAppDto): Promise<AppView> {
    return this.admin.patchApp(appId, body);
  }

  @Post('keys/:keyId/rotate')
  @ApiOperation({ operationId: 'adminRotateKey', summary: 'Rotate a key: new key shown once, old key valid for a 7-day grace window' })
  @ApiCreatedResponse({ type: KeyRotationView })
  rotateKey(@Param('keyId') keyId: string, @Body() body: RotateKeyDto, @RequestId() requestId: string): Promise<KeyRotationView> {
    return this.keyLifecycle.rotateKey(keyId, body.scopes, requestId);
  }

  @Post('keys/:keyId/revoke')
  @HttpCode(200)
  @ApiOperation({ operationId: 'adminRevokeKey', summary: 'Revoke a key, immediately and irreversibly' })
  @ApiOkResponse({ type: ApiKeyView })
  revokeKey(@Param('keyId') keyId: string, @RequestId() requestId: string): Promise<ApiKeyView> {
    return this.keyLifecycle.revokeKey(keyId, requestId);
  }

  @Get('projects/:projectId/key-activity')
  @ApiOperation({ operationId: 'adminGetKeyActivity', summary: 'Key-activity log, newest first' })
  @ApiOkResponse({ type: KeyActivityList })
  keyActivity(@Param('projectId') projectId: string): Promise<KeyActivityList> {
    return this.keyLifecycle.keyActivity(projectId);
  }

  @Put('projects/:projectId/rate-limits')
  @ApiOperation({ operationId: 'adminPutRateLimits', summary: "Replace the project's rate-limit overrides; returns the effective table" })
  @ApiBody({ schema: RATE_LIMIT_SCHEMA })
  @ApiOkResponse({ schema: RATE_LIMIT_SCHEMA })
  @ApiErrors({ 400: ['missing_required_param'] })
  replaceRateLimits(@Param('projectId') projectId: string, @Body() body: Record<string, unknown>): Promise<RateLimitTable> {
    return this.rateLimits.replaceRateLimits(projectId, body);
  }
}
