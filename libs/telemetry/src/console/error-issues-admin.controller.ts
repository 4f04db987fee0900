import { Controller, Get, Header, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrors, type Env, Operator, TenantScopes, operatorEnv, queryInt, queryString } from '#platform';
import { ProjectDirectory } from '#keys';
import { ErrorIssueDetailService } from '../issues/error-issue-detail.service.js';
import { ErrorIssuesRepository } from '../issues/error-issues.repository.js';
import { AdminErrorIssueView, ConsoleErrorIssueList, ErrorIssueEventPage, ErrorIssueUserPage } from './error-issues-admin.views.js';
import { ErrorIssuesConsoleRepository, ISSUE_SORTS, type IssueSort } from './error-issues-console.repository.js';
import { decodeKeyset, encodeKeyset } from './keyset-cursor.js';
import { issueTitle } from './issue-title.js';
import { IssueUsersRepository } from './issue-users.repository.js';

const FINGERPRINT = /^[0-9a-f]{8}$/;
const USERS_WINDOW = 5000;
const USERS_LIMIT = 50;
const STATUSES = ['open', 'all'];
const ENV_QUERY = { name: 'env', required: false, enum: ['sandbox', 'production'], description: 'Default production' } as const;
const seconds = (ms: number) => Math.floor(ms / 1000);
const AFTER_QUERY = { name: 'after', required: false, description: 'nextCursor of the previous page' } as const;

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
    private readonly consoleReads: ErrorIssuesConsoleRepository,
  ) {}

  @Get()
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'adminListErrorIssues',
    summary: 'Error issues titled by exception type and message, with level, counts, affected users and first and last seen, in a chosen order',
    description:
      'sort (descending, ties by fingerprint, stable across pages): last_seen (default), count, users, revenue_at_risk (the monthly recurring revenue of the customers the issue hit), first_seen. ' +
      'The title is the exception type and message of the latest event (properties.errorType, else properties.type; properties.message), else the event name.',
  })
  @ApiQuery(ENV_QUERY)
  @ApiQuery({ name: 'limit', required: false, description: '1..100, default 25' })
  @ApiQuery({ name: 'status', required: false, enum: STATUSES, description: 'Issues have no resolution state yet: open and all list every issue' })
  @ApiQuery({ name: 'sort', required: false, enum: ISSUE_SORTS, description: 'Default last_seen' })
  @ApiQuery(AFTER_QUERY)
  @ApiOkResponse({ type: ConsoleErrorIssueList })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  async list(
    @Param('projectId') projectId: string,
    @Query('env') rawEnv?: string,
    @Query('limit') rawLimit?: string,
    @Query('status') status?: string,
    @Query('sort') rawSort?: string,
    @Query('after') rawAfter?: string,
  ): Promise<ConsoleErrorIssueList> {
    const env = operatorEnv(rawEnv);
    const limit = queryInt(rawLimit, 'limit', 1, 100, 25);
    if (status !== undefined && status !== '' && !STATUSES.includes(status)) throw ApiError.invalidParam(`status must be one of ${STATUSES.join(', ')}`);
    const sort = (rawSort === undefined || rawSort === '' ? 'last_seen' : rawSort) as IssueSort;
    if (!ISSUE_SORTS.includes(sort)) throw ApiError.invalidParam(`sort must be one of ${ISSUE_SORTS.join(', ')}`);
    const after = decodeKeyset(queryString(rawAfter, 'after', 700), 'after');
    await this.projects.assertExists(projectId);
    const rows = await this.consoleReads.list(TenantScopes.operator(projectId, env), sort, after, limit + 1);
    const shown = rows.slice(0, limit);
    const last = shown[shown.length - 1];
    return {
      object: 'list',
      data: shown.map((r) => ({
        object: 'error_issue',
        fingerprint: r.fingerprint,
        title: issueTitle(r.errorType, r.message, r.lastEventName),
        errorType: r.errorType,
        message: r.message,
        count: r.eventCount,
        firstSeenAt: seconds(r.firstSeenMs),
        lastSeenAt: seconds(r.lastSeenMs),
        lastEventName: r.lastEventName,
        lastLevel: r.lastLevel,
        affectedUsers: r.affectedUsers,
        revenueAtRisk: { amountMinor: r.revenueAtRiskMinor, currency: r.currency },
      })),
      sort,
      nextCursor: rows.length > limit && last ? encodeKeyset({ value: last.sortKey, id: last.fingerprint }) : null,
      env,
    };
  }

  @Get(':fingerprint/events')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'adminListErrorIssueEvents',
    summary: "An issue's events, newest first, a page at a time, each with its own stack symbolicated on read",
  })
  @ApiParam({ name: 'fingerprint', description: '8 hex chars (case-insensitive)' })
  @ApiQuery(ENV_QUERY)
  @ApiQuery({ name: 'limit', required: false, description: '1..50, default 10' })
  @ApiQuery(AFTER_QUERY)
  @ApiOkResponse({ type: ErrorIssueEventPage })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  async events(
    @Param('projectId') projectId: string,
    @Param('fingerprint') rawFingerprint: string,
    @Query('env') rawEnv?: string,
    @Query('limit') rawLimit?: string,
    @Query('after') rawAfter?: string,
  ): Promise<ErrorIssueEventPage> {
    const env = operatorEnv(rawEnv);
    const limit = queryInt(rawLimit, 'limit', 1, 50, 10);
    const after = decodeKeyset(queryString(rawAfter, 'after', 700), 'after');
    const { scope, fingerprint } = await this.issueScope(projectId, rawFingerprint, env);
    const rows = await this.consoleReads.events(scope, fingerprint, after, limit + 1);
    const shown = rows.slice(0, limit);
    const last = shown[shown.length - 1];
    return {
      object: 'list',
      fingerprint,
      data: await Promise.all(shown.map((row) => this.detail.eventView(scope, row))),
      nextCursor: rows.length > limit && last ? encodeKeyset({ value: last.timestampMs, id: last.eventId }) : null,
      env,
    };
  }

  @Get(':fingerprint/users')
  @Header('Cache-Control', 'private, no-store')
  @ApiOperation({
    operationId: 'adminListErrorIssueUsers',
    summary: 'The users an issue hit, most recent hit first, a page at a time, with their total',
  })
  @ApiParam({ name: 'fingerprint', description: '8 hex chars (case-insensitive)' })
  @ApiQuery(ENV_QUERY)
  @ApiQuery({ name: 'limit', required: false, description: '1..100, default 50' })
  @ApiQuery(AFTER_QUERY)
  @ApiOkResponse({ type: ErrorIssueUserPage })
  @ApiErrors({ 400: ['invalid_param_value'], 404: ['resource_missing'] })
  async issueUsers(
    @Param('projectId') projectId: string,
    @Param('fingerprint') rawFingerprint: string,
    @Query('env') rawEnv?: string,
    @Query('limit') rawLimit?: string,
    @Query('after') rawAfter?: string,
  ): Promise<ErrorIssueUserPage> {
    const env = operatorEnv(rawEnv);
    const limit = queryInt(rawLimit, 'limit', 1, 100, USERS_LIMIT);
    const after = decodeKeyset(queryString(rawAfter, 'after', 700), 'after');
    const { scope, fingerprint } = await this.issueScope(projectId, rawFingerprint, env);
    const [rows, total] = await Promise.all([this.consoleReads.users(scope, fingerprint, after, limit + 1), this.consoleReads.userTotal(scope, fingerprint)]);
    const shown = rows.slice(0, limit);
    const last = shown[shown.length - 1];
    return {
      object: 'list',
      fingerprint,
      data: shown.map((u) => ({ userId: u.userId, serviceCustomerId: u.customerId, count: u.hits, lastHitAt: seconds(u.lastHitMs) })),
      total,
      nextCursor: rows.length > limit && last ? encodeKeyset({ value: last.lastHitMs, id: last.userId }) : null,
      env,
    };
  }

  private async issueScope(projectId: string, rawFingerprint: string, env: Env) {
    const fingerprint = rawFingerprint.toLowerCase();
    if (!FINGERPRINT.test(fingerprint)) throw ApiError.invalidParam('fingerprint must be 8 hex characters');
    await this.projects.assertExists(projectId);
    const scope = TenantScopes.operator(projectId, env);
    if (!(await this.issues.findOne(scope, fingerprint))) throw ApiError.resourceMissing(`No error issue ${fingerprint} in this project and environment`);
    return { scope, fingerprint };
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
      title: issueTitle(issue.latestEvent?.errorType ?? null, issue.latestEvent?.message ?? null, issue.lastEventName),
      affectedUsers: users.map((u) => ({ serviceCustomerId: u.customerId, userId: u.userId, count: u.eventCount, lastHitAt: seconds(u.lastHitMs) })),
    };
  }
}
