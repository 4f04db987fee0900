import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { APP_LOGGER, ApiError, type AppLogger, Clock, type Env, type SdkIdentity, SdkVersionPolicy, parseSdkHeader } from '../../../platform/src/index.js';
import { type AuthContext, ProjectRateLimits, assertDeclaredEnv } from '../../../keys/src/index.js';
import { EventsRepository } from '../storage/events.repository.js';
import { ErrorAllowanceService } from '../throttle/error-allowance.service.js';
import { type ThrottledSummary, allowanceCandidates, landedIndexes, throttledSummary } from '../throttle/throttle-plan.js';
import { type NormalizedEvent, readEnvelope, validateEvents } from './event-batch.validator.js';

export interface IngestResult {
  object: 'list';
  received: number;
  env: Env;
  throttled?: ThrottledSummary;
}

/** The Service-Sdk-Version header, when it is a plausible `<name>@<version>`. */
function saneSdk(sdk: SdkIdentity | undefined): SdkIdentity | undefined {
  return sdk && sdk.name.length <= 128 && sdk.version.length <= 64 ? sdk : undefined;
}

function serverEventId(): string {
  return `srv_${randomUUID()}`;
}

/**
 * POST /v1/events: envelope environment (403), client version floor (426), all-or-nothing
 * validation (400), the events bucket (partial; 429 when nothing lands), one write.
 * Identity is not resolved here: hints are stored and resolved out of band.
 */
@Injectable()
export class IngestEventsService {
  constructor(
    private readonly clock: Clock,
    private readonly sdkPolicy: SdkVersionPolicy,
    private readonly rateLimits: ProjectRateLimits,
    private readonly allowance: ErrorAllowanceService,
    private readonly events: EventsRepository,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  async ingest(auth: AuthContext, body: unknown, sdkHeader: string | undefined): Promise<IngestResult> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw ApiError.invalidParam('Request body must be a JSON object');
    const batch = body as Record<string, unknown>;

    assertDeclaredEnv(auth, batch.environment);
    const envelope = readEnvelope(batch);
    const sdk = envelope.sdk ?? saneSdk(parseSdkHeader(sdkHeader));
    this.sdkPolicy.assertSupported(sdk);

    const receivedAtMs = this.clock.nowMs();
    const { events, softDropped } = validateEvents(batch, receivedAtMs, serverEventId);
    if (softDropped > 0) this.logger.debug({ requestId: auth.requestId, softDropped }, 'events: malformed level/tags/categoryTags dropped');

    const decision = await this.rateLimits.take(auth, 'events', events.length, { partial: true });
    let landing: readonly NormalizedEvent[] = events;
    let throttled: ThrottledSummary | undefined;
    if (decision.granted < events.length) {
      const candidates = allowanceCandidates(events, decision.granted);
      const claimed = candidates.length > 0 ? await this.allowance.claim(auth, candidates.map((c) => c.fingerprint)) : new Set<string>();
      const landed = landedIndexes(events.length, decision.granted, candidates, claimed);
      if (landed.length === 0) throw ApiError.rateLimited(decision.retryAfterMs, decision.sampleRate);
      landing = landed.map((i) => events[i]);
      throttled = throttledSummary(events.length, landed.length, decision);
    }

    await this.events.writeBatch(auth, { appId: auth.appId, receivedAtMs, sdkName: sdk?.name ?? null, sdkVersion: sdk?.version ?? null }, landing);

    const result: IngestResult = { object: 'list', received: landing.length, env: auth.env };
    if (throttled) result.throttled = throttled;
    return result;
  }
}
