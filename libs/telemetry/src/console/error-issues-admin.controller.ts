import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrors, Operator, TenantScopes, operatorEnv, queryInt } from '#platform';
import { ProjectDirectory } from '#keys';
import { ErrorIssueDetailService } from '../issues/error-issue-detail.service.js';
import { ErrorIssuesRepository } from '../issues/error-issues.repository.js';
import { AdminErrorIssueList, AdminErrorIssueView } from './error-issues-admin.views.js';
import { IssueUsersRepository } from './issue-users.repository.js';
import { EventRollupsRepository } from '../rollups/event-rollups.repository.js';

const FINGERPRINT = /^[0-9a-f]{8}$/;
const USERS_WINDOW = 5000;
const USERS_LIMIT = 50;
const STATUSES = ['open', 'all'];
const ENV_QUERY = { name: 'env', required: false, enum: ['sandbox', 'production'], description: 'Default production' } as const;
const seconds = (ms: number) => Math.floor(ms / 1000);

/** The console's error pages: the issues of a project and environment, and one issue with its symbolicated latest event. */
@ApiTags('operator')
@Operator()
@Controller('admin/v1/projects/:projectId/error-issues')
export class ErrorIssuesAdminController {
  constructor(
    private readonly projects: ProjectDirectory,
    private readonly issues: ErrorIssuesRepository,
    private readonly detail: ErrorIssueDetailService,
    private readonly users: IssueUsersRepository,
    private readonly rollups: EventRollupsRepository,
  ) {}

  @Get()
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'adminListErrorIssues',
    summary: 'Error issues by fingerprint with counts, affected users and first and last seen, most recent first',
  })
  @ApiQuery(ENV_QUERY)
  @ApiQuery({ name: 'limit', required: false, description: '1..100, default 25' })
  @ApiQuery({ name: 'status', required: false, enum: STATUSES, description: 'Issues have no resolution state yet: open and all list every issue' })
  @ApiOkResponse({ type: AdminErrorIssueList })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  async list(
    @Param('projectId') projectId: string,
    @Query('env') rawEnv?: string,
    @Query('limit') rawLimit?: string,
    @Query('status') status?: string,
  ): Promise<AdminErrorIssueList> {
    const env = operatorEnv(rawEnv);
    const limit = queryInt(rawLimit, 'limit', 1, 100, 25);
    if (status !== undefined && status !== '' && !STATUSES.includes(status)) throw ApiError.invalidParam(`status must be one of ${STATUSES.join(', ')}`);
    await this.projects.assertExists(projectId);
    const scope = TenantScopes.operator(projectId, env);
    const rows = await this.issues.listRecent(scope, limit);
    const affected = await this.rollups.affectedUserCounts(
      scope,
      rows.map((r) => r.fingerprint),
    );
    return {
      object: 'list',
      data: rows.map((r) => ({
        object: 'error_issue',
        fingerprint: r.fingerprint,
        count: r.eventCount,
        firstSeenAt: seconds(r.firstSeenMs),
        lastSeenAt: seconds(r.lastSeenMs),
        lastEventName: r.lastEventName,
        lastLevel: r.lastLevel,
        affectedUsers: affected.get(r.fingerprint) ?? 0,
      })),
      env,
    };
  }

  @Get(':fingerprint')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'adminGetErrorIssue',
    summary: 'One error issue: its latest event with symbolicated frames (original file, line, column, source line) and the users it hit',
  })
  @ApiParam({ name: 'fingerprint', description: '8 hex chars (case-insensitive)' })
  @ApiQuery(ENV_QUERY)
  @ApiOkResponse({ type: AdminErrorIssueView })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  async one(@Param('projectId') projectId: string, @Param('fingerprint') rawFingerprint: string, @Query('env') rawEnv?: string): Promise<AdminErrorIssueView> {
    const env = operatorEnv(rawEnv);
    const fingerprint = rawFingerprint.toLowerCase();
    if (!FINGERPRINT.test(fingerprint)) throw ApiError.invalidParam('fingerprint must be 8 hex characters');
    await this.projects.assertExists(projectId);
    const scope = TenantScopes.operator(projectId, env);
    if (!(await this.issues.findOne(scope, fingerprint))) throw ApiError.resourceMissing(`No error issue ${fingerprint} in this project and environment`);
    const [issue, users] = await Promise.all([this.detail.read(scope, fingerprint), this.users.recent(scope, fingerprint, USERS_WINDOW, USERS_LIMIT)]);
    return {
      ...issue,
      affectedUsers: users.map((u) => ({ serviceCustomerId: u.customerId, userId: u.userId, count: u.eventCount, lastHitAt: seconds(u.lastHitMs) })),
    };
  }
}
