import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  ApiErrors,
  ApiSdkVersionHeaders,
  BodyLimit,
  EVENTS_BODY_LIMIT_BYTES,
  RateLimit,
  RateLimitDecisionParam,
  type RateLimitDecision,
  SdkVersionHeader,
  type HttpRequest,
} from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey } from '#keys';
import { EventsAcceptedView, EventsBatchDto } from './events-batch.dto.js';
import { IngestEventsService } from './ingest-events.service.js';
import { MAX_EVENTS_PER_BATCH } from './event-batch.validator.js';

/** One token per event; never more than a valid batch holds, so an oversized (rejected) batch cannot drain the bucket. */
function batchCost(req: HttpRequest): number {
  const events = (req.body as { events?: unknown } | undefined)?.events;
  return Array.isArray(events) ? Math.min(events.length, MAX_EVENTS_PER_BATCH) : 0;
}

@ApiTags('telemetry')
@Controller('v1/events')
export class EventsController {
  constructor(private readonly ingest: IngestEventsService) {}

  @Post()
  @HttpCode(202)
  @Header('Cache-Control', 'no-store')
  @RequireApiKey({ kinds: ['publishable', 'secret'] })
  // POST /v1/events bounds nesting by its own rule (properties: 8 KB serialised), not the generic shape bounds.
  @BodyLimit(EVENTS_BODY_LIMIT_BYTES, { jsonBounds: null })
  @RateLimit('events', { partial: true, cost: batchCost })
  @ApiOperation({
    operationId: 'sendEvents',
    summary: 'Telemetry batch',
    description:
      'Ingests 1 to 100 events. Validation is all-or-nothing (the first invalid event names its index and field); malformed level, tags and ' +
      'categoryTags are dropped, never rejected. A retry with the same eventId overwrites itself. One event costs one token of the events ' +
      'bucket (100/s, burst 1,000): a batch larger than the tokens left lands what fits and reports `throttled`; one error event per ' +
      'fingerprint per minute still lands while throttled; nothing landable is 429.',
  })
  @ApiBody({ type: EventsBatchDto })
  @ApiSdkVersionHeaders('`<name>@<version>`; used for the version floor when the envelope has no `sdk`.')
  @ApiAcceptedResponse({ type: EventsAcceptedView })
  @ApiErrors({ 400: ['missing_required_param', 'invalid_param_value'], 403: ['env_mismatch'], 426: ['sdk_version_unsupported'], 429: ['rate_limited'] })
  accept(
    @CurrentKey() auth: AuthContext,
    @Body() body: unknown,
    @RateLimitDecisionParam() decision: RateLimitDecision,
    @SdkVersionHeader() sdkHeader?: string,
  ): Promise<EventsAcceptedView> {
    return this.ingest.ingest(auth, body, decision, sdkHeader);
  }
}
