import { Controller, Get, Header, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ApiError, ApiErrors } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey } from '#keys';
import { ErrorIssueDetailService } from './error-issue-detail.service.js';
import { ErrorIssuesRepository } from './error-issues.repository.js';
import { AffectedCustomerList, ErrorIssueDetailView, ErrorIssueList } from './error-issues.views.js';

const LIST_LIMIT = 100;
const FINGERPRINT = /^[0-9a-f]{8}$/;
const seconds = (ms: number) => Math.floor(ms / 1000);

/**
 * Error reads for server keys. The issue list is aggregate data (`errors:read`); who an
 * issue hit is row-level data and needs the identity scope (`reporting:identity`).
 */
@ApiTags('errors')
@Controller('v1/server/errors/issues')
export class ErrorIssuesController {
  constructor(
    private readonly issues: ErrorIssuesRepository,
    private readonly detail: ErrorIssueDetailService,
  ) {}

  @Get()
  @Header('Cache-Control', 'private, no-store')
  @RequireApiKey({ kinds: ['secret'], scopes: ['errors:read'] })
  @ApiOperation({ operationId: 'listErrorIssues', summary: 'Error issues by fingerprint, most recent first (counts only; scope errors:read)' })
  @ApiOkResponse({ type: ErrorIssueList })
  async list(@CurrentKey() auth: AuthContext): Promise<ErrorIssueList> {
    const rows = await this.issues.listRecent(auth, LIST_LIMIT);
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
      })),
      env: auth.env,
    };
  }

  @Get(':fingerprint')
  @Header('Cache-Control', 'private, no-store')
  @RequireApiKey({ kinds: ['secret'], scopes: ['errors:read'] })
  @ApiOperation({
    operationId: 'getErrorIssue',
    summary: 'One error issue with its latest event, frames symbolicated on read (scope errors:read)',
    description:
      "Frames of the latest event carry `original` (source, line, column, name) when a source map uploaded for the event's release " +
      '(properties.release, else context.appVersion) resolves them; other frames are returned as sent. An unknown fingerprint is 400.',
  })
  @ApiParam({ name: 'fingerprint', description: '8 hex chars (case-insensitive)' })
  @ApiOkResponse({ type: ErrorIssueDetailView })
  @ApiErrors({ 400: ['invalid_param_value'] })
  async one(@CurrentKey() auth: AuthContext, @Param('fingerprint') fingerprint: string): Promise<ErrorIssueDetailView> {
    fingerprint = fingerprint.toLowerCase();
    if (!FINGERPRINT.test(fingerprint)) throw ApiError.invalidParam('fingerprint must be 8 hex characters');
    return this.detail.read(auth, fingerprint);
  }

  @Get(':fingerprint/customers')
  @Header('Cache-Control', 'private, no-store')
  @RequireApiKey({ kinds: ['secret'], scopes: ['reporting:identity'] })
  @ApiOperation({ operationId: 'listErrorIssueCustomers', summary: 'Customers an error issue hit, most recent first (row-level; scope reporting:identity)' })
  @ApiParam({ name: 'fingerprint', description: '8 hex chars (case-insensitive)' })
  @ApiOkResponse({ type: AffectedCustomerList })
  @ApiErrors({ 400: ['invalid_param_value'] })
  async customers(@CurrentKey() auth: AuthContext, @Param('fingerprint') fingerprint: string): Promise<AffectedCustomerList> {
    // Ingestion stores fingerprints lowercased; read them the same way.
    fingerprint = fingerprint.toLowerCase();
    if (!FINGERPRINT.test(fingerprint)) throw ApiError.invalidParam('fingerprint must be 8 hex characters');
    const rows = await this.issues.affectedCustomers(auth, fingerprint, LIST_LIMIT);
    return {
      object: 'list',
      fingerprint,
      data: rows.map((r) => ({ serviceCustomerId: r.customerId, crossdeckCustomerId: r.customerId, count: r.eventCount, lastSeenAt: seconds(r.lastSeenMs) })),
      env: auth.env,
    };
  }
}
