import { Body, Controller, Get, Header, HttpCode, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, BodyLimit, Idempotent, RateLimit } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey } from '#keys';
import type { ReadEnvelope } from '../read-envelope.js';
import { ReportingRead, SCOPED_READ_ERRORS } from '../reporting-read.decorator.js';
import { DaysQueryDto } from '../read-query.js';
import { BucketReportAcceptedView, BucketReportBodyDoc, ReadCostEnvelope, type ReadCostData } from './buckets.dto.js';
import { BucketsService } from './buckets.service.js';

/** A full report (every map at its bound) fits; past this the body is 413 before it is read. */
const BUCKET_REPORT_BODY_LIMIT_BYTES = 2 * 1024 * 1024;
const BUCKET_REPORT_JSON_BOUNDS = { maxDepth: 8, maxKeys: 100_000 };

@ApiTags('reporting')
@Controller()
export class BucketsController {
  constructor(private readonly buckets: BucketsService) {}

  @Post('v1/buckets/report')
  @HttpCode(202)
  @Header('Cache-Control', 'no-store')
  @RequireApiKey({ kinds: ['publishable', 'secret'] })
  @BodyLimit(BUCKET_REPORT_BODY_LIMIT_BYTES, { jsonBounds: BUCKET_REPORT_JSON_BOUNDS })
  @RateLimit('events')
  @Idempotent()
  @ApiOperation({
    operationId: 'reportBuckets',
    summary: "A bucket reporter's daily read-cost report (secret key, or a web app's publishable key)",
    description:
      "Each report carries one flush window's counts, added to the day's totals of its key and UTC date (the reporter clears its buffer after each flush). " +
      'A report retried with the same Idempotency-Key (and body) within 24 h is added once and answered as the first; without the header every report is added. ' +
      'Bounds: 1,000 labels, 24 hours, 288 slots, 5,000 actors, 10,000 actor labels (past them 413 naming the field). Charges the events bucket.',
  })
  @ApiBody({ type: BucketReportBodyDoc })
  @ApiAcceptedResponse({ type: BucketReportAcceptedView })
  @ApiErrors({
    400: ['missing_required_param', 'invalid_param_value'],
    401: ['missing_api_key', 'invalid_api_key', 'key_revoked'],
    403: ['origin_not_allowed'],
    413: ['invalid_param_value'],
    429: ['rate_limited'],
  })
  report(@CurrentKey() auth: AuthContext, @Body() body: unknown): Promise<BucketReportAcceptedView> {
    return this.buckets.report(auth, body);
  }

  @Get('v1/buckets')
  @ReportingRead({ scopes: ['buckets:read'] })
  @ApiOperation({
    operationId: 'getReadCost',
    summary: 'Database read cost over the last days (scope buckets:read)',
    description:
      'Sums the bucket reports dated in the window: reads, writes, deletes, reads attributed to identified actors (perUserReads) and the rest (overheadReads), ' +
      'the distinct actors, and reads per label (byOperation, most first). No report ever: readCost not_instrumented and null figures.',
  })
  @ApiOkResponse({ type: ReadCostEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  read(@CurrentKey() auth: AuthContext, @Query() query: DaysQueryDto): Promise<ReadEnvelope<ReadCostData>> {
    return this.buckets.read(auth, query.days);
  }
}
