import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '#platform';
import { type AuthContext, CurrentKey } from '#keys';
import type { ReadEnvelope } from '../read-envelope.js';
import { ReportingRead, SCOPED_READ_ERRORS } from '../reporting-read.decorator.js';
import {
  AffectedUsersEnvelope,
  ErrorAffectedQueryDto,
  ErrorImpactEnvelope,
  ErrorQueryDto,
  type AffectedUsersData,
  type ErrorImpactData,
} from './errors.dto.js';
import { ErrorsReadsService } from './errors-reads.service.js';

@ApiTags('reporting')
@Controller()
export class ErrorsController {
  constructor(private readonly errors: ErrorsReadsService) {}

  @Get('v1/errors')
  @ReportingRead({ scopes: ['errors:read'] })
  @ApiOperation({
    operationId: 'getErrorImpact',
    summary: "An error's impact: occurrences, affected and paying users, first and last seen (scope errors:read)",
    description:
      'Read from the per-day error rollups, never the raw events. An unknown fingerprint is data: null. payingUsers is null while no rail is connected (revenue not_instrumented).',
  })
  @ApiOkResponse({ type: ErrorImpactEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  impact(@CurrentKey() auth: AuthContext, @Query() query: ErrorQueryDto): Promise<ReadEnvelope<ErrorImpactData | null>> {
    return this.errors.impact(auth, query.fingerprint);
  }

  @Get('v1/errors/affected')
  @ReportingRead({ scopes: ['reporting:identity'] })
  @ApiOperation({
    operationId: 'listErrorAffectedUsers',
    summary: 'Users an error hit with their monthly revenue, revenue at risk first (scope reporting:identity)',
    description: 'Rows name your own user ids and cdcust_ ids, never emails or names. Ties on revenue: the most recent hit first.',
  })
  @ApiOkResponse({ type: AffectedUsersEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  affected(@CurrentKey() auth: AuthContext, @Query() query: ErrorAffectedQueryDto): Promise<ReadEnvelope<AffectedUsersData>> {
    return this.errors.affected(auth, query.fingerprint, query.limit);
  }
}
