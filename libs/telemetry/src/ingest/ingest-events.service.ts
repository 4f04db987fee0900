import { Inject, Injectable, Optional } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  APP_LOGGER,
  ApiError,
  type AppLogger,
  Clock,
  type Env,
  type RateLimitDecision,
  Metrics,
  type SdkIdentity,
  SdkVersionPolicy,
  parseSdkHeader,
} from '#platform';
import { type AuthContext, assertDeclaredEnv } from '#keys';
import { EventBuffer } from '../buffer/event-buffer.service.js';
import { type EncodedRows, encodeBatch } from '../storage/event-insert.sql.js';
import { type BatchWriteMeta, EventsRepository } from '../storage/events.repository.js';
import { ErrorAllowanceService } from '../throttle/error-allowance.service.js';
import { type ThrottledSummary, allowanceCandidates, landedIndexes, throttledSummary } from '../throttle/throttle-plan.js';
import { type NormalizedEvent, readEnvelope, validateEvents } from './event-batch.validator.js';

export interface IngestResult {
  object: 'list';
  received: number;
  env: Env;
  throttled?: ThrottledSummary;
}

/** The client-version header (Service-Sdk-Version or Crossdeck-Sdk-Version), when it is a plausible `<name>@<version>`. */
function saneSdk(sdk: SdkIdentity | undefined): SdkIdentity | undefined {
  return sdk && sdk.name.length <= 128 && sdk.version.length <= 64 ? sdk : undefined;
}

function serverEventId(): string {
  return `srv_${randomUUID()}`;
}

/**
 * POST /v1/events: envelope environment (403), client version floor (426), all-or-nothing
 * validation (400), the events bucket (partial; 429 when nothing lands), one write (or one
 * append to the events buffer, when configured).
 * Identity is not resolved here: hints are stored and resolved out of band.
 */
@Injectable()
export class IngestEventsService {
  constructor(
    private readonly clock: Clock,
    private readonly sdkPolicy: SdkVersionPolicy,
    private readonly allowance: ErrorAllowanceService,
    private readonly events: EventsRepository,
    private readonly buffer: EventBuffer,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    @Optional() @Inject(Metrics) private readonly metrics?: Metrics | null,
  ) {}

  /** `decision`: the events bucket, charged by the route's @RateLimit (one token per event, partial). */
  async ingest(auth: AuthContext, body: unknown, decision: RateLimitDecision, sdkHeader: string | undefined): Promise<IngestResult> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw ApiError.invalidParam('Request body must be a JSON object');
    const batch = body as Record<string, unknown>;

    assertDeclaredEnv(auth, batch.environment);
    const envelope = readEnvelope(batch);
    const sdk = envelope.sdk ?? saneSdk(parseSdkHeader(sdkHeader));
    this.sdkPolicy.assertSupported(sdk);

    const receivedAtMs = this.clock.nowMs();
    const { events, softDropped } = validateEvents(batch, receivedAtMs, serverEventId);
    if (softDropped > 0) this.logger.debug({ requestId: auth.requestId, softDropped }, 'events: malformed level/tags/categoryTags/context dropped');
    this.metrics?.eventsReceived.inc(events.length);
    if (softDropped > 0) this.metrics?.eventsDropped.inc({ reason: 'malformed_value' }, softDropped);

    let landing: readonly NormalizedEvent[] = events;
    let throttled: ThrottledSummary | undefined;
    if (decision.granted < events.length) {
      const candidates = allowanceCandidates(events, decision.granted);
      const claimed =
        candidates.length > 0
          ? await this.allowance.claim(
              auth,
              candidates.map((c) => c.fingerprint),
            )
          : new Set<string>();
      const landed = landedIndexes(events.length, decision.granted, candidates, claimed);
      this.metrics?.eventsThrottled.inc(events.length - landed.length);
      if (landed.length === 0) throw ApiError.rateLimited(decision.retryAfterMs, decision.sampleRate);
      landing = landed.map((i) => events[i]);
      throttled = throttledSummary(events.length, landed.length, decision);
    }

    const meta: BatchWriteMeta = { appId: auth.appId, receivedAtMs, sdkName: sdk?.name ?? null, sdkVersion: sdk?.version ?? null };
    const rows = encodeBatch(landing, receivedAtMs);
    const result: IngestResult = { object: 'list', received: landing.length, env: auth.env };
    if (throttled) result.throttled = throttled;
    // Under load a batch waits tens of milliseconds for its commit. It waits holding only its
    // encoded rows: whatever stays referenced meanwhile survives the young generation's
    // collections, which copy and promote it (docs/performance.md, "What the measurements showed"). So
    // the parsed events leave the request body, and this frame ends before the wait.
    batch.events = undefined;
    return this.store(auth, meta, rows, result);
  }

  /**
   * With the events buffer the batch is acknowledged once appended (its consumer writes it);
   * else, or when the append fails, here. Repeated event ids count once stored either way.
   */
  private async store(scope: AuthContext, meta: BatchWriteMeta, rows: EncodedRows, result: IngestResult): Promise<IngestResult> {
    if (!(this.buffer.enabled && (await this.buffer.append(scope, meta, rows)))) await this.events.writeEncoded(scope, meta, rows);
    if (rows.rowCount < result.received) this.metrics?.eventsDeduplicated.inc(result.received - rows.rowCount);
    return result;
  }
}
