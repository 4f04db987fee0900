import { Body, Controller, Header, Headers, HttpCode, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrors } from '../../../platform/src/index.js';
import { type AuthContext, CurrentKey, RequireApiKey } from '../../../keys/src/index.js';
import { EventsAcceptedView, EventsBatchDto } from './events-batch.dto.js';
import { IngestEventsService } from './ingest-events.service.js';

@ApiTags('telemetry')
@Controller('v1/events')
export class EventsController {
  constructor(private readonly ingest: IngestEventsService) {}

  @Post()
  @HttpCode(202)
  @Header('Cache-Control', 'no-store')
  @RequireApiKey({ kinds: ['publishable', 'secret'] })
  @ApiOperation({
    summary: 'Telemetry batch',
    description:
      'Ingests 1 to 100 events. Validation is all-or-nothing (the first invalid event names its index and field); malformed level, tags and ' +
      'categoryTags are dropped, never rejected. A retry with the same eventId overwrites itself. One event costs one token of the events ' +
      'bucket (100/s, burst 1,000): a batch larger than the tokens left lands what fits and reports `throttled`; one error event per ' +
      'fingerprint per minute still lands while throttled; nothing landable is 429.',
  })
  @ApiBody({ type: EventsBatchDto })
  @ApiHeader({ name: 'Service-Sdk-Version', required: false, description: '`<name>@<version>`; used for the version floor when the envelope has no `sdk`.' })
  @ApiAcceptedResponse({ type: EventsAcceptedView })
  @ApiErrors(400, 401, 403, 426, 429)
  accept(@CurrentKey() auth: AuthContext, @Body() body: unknown, @Headers('service-sdk-version') sdkHeader?: string): Promise<EventsAcceptedView> {
    return this.ingest.ingest(auth, body, sdkHeader);
  }
}
