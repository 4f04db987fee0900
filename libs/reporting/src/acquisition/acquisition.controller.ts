import { Body, Controller, Get, Header, HttpCode, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors, RateLimit } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey } from '#keys';
import type { ReadEnvelope } from '../read-envelope.js';
import { ReportingRead, SCOPED_READ_ERRORS } from '../reporting-read.decorator.js';
import { LimitQueryDto } from '../read-query.js';
import { AcquisitionEnvelope, ArrivalAcceptedView, HubspotArrivalDto, type AcquisitionData } from './acquisition.dto.js';
import { AcquisitionService } from './acquisition.service.js';

@ApiTags('reporting')
@Controller()
export class AcquisitionController {
  constructor(private readonly acquisition: AcquisitionService) {}

  @Post('v1/integrations/hubspot/arrival')
  @HttpCode(202)
  @Header('Cache-Control', 'no-store')
  @RequireApiKey({ kinds: ['publishable'] })
  @RateLimit('events')
  @ApiOperation({
    operationId: 'recordHubspotArrival',
    summary: "A campaign arrival (`?cd_ref=`): the anonymous id's first-touch source (web publishable key)",
    description:
      'First touch wins: a later arrival never replaces an earlier one; an arrival replaces a first touch taken from a page view. Counted by GET /v1/acquisition once the anonymous id becomes a customer. Charges the events bucket.',
  })
  @ApiAcceptedResponse({ type: ArrivalAcceptedView })
  @ApiErrors({
    400: ['missing_required_param', 'invalid_param_value'],
    401: ['missing_api_key', 'invalid_api_key', 'key_revoked'],
    403: ['origin_not_allowed'],
    413: ['invalid_param_value'],
    429: ['rate_limited'],
  })
  arrival(@CurrentKey() auth: AuthContext, @Body() body: HubspotArrivalDto): Promise<ArrivalAcceptedView> {
    return this.acquisition.arrival(auth, body);
  }

  @Get('v1/acquisition')
  @ReportingRead({ scopes: ['reporting:aggregate'] })
  @ApiOperation({
    operationId: 'getAcquisitionSources',
    summary: 'Customers by first-touch source, most first (scope reporting:aggregate)',
    description:
      "Each customer counts once, when identify first links one of its anonymous ids: under that id's campaign arrival ref, else the utm_source or referrer host of its first anonymous page view, else direct.",
  })
  @ApiOkResponse({ type: AcquisitionEnvelope })
  @ApiErrors(SCOPED_READ_ERRORS)
  sources(@CurrentKey() auth: AuthContext, @Query() query: LimitQueryDto): Promise<ReadEnvelope<AcquisitionData>> {
    return this.acquisition.sources(auth, query.limit);
  }
}
