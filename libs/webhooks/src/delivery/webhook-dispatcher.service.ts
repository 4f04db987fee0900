import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { APP_CONFIG, APP_LOGGER, type AppConfig, type AppLogger, Clock, PeriodicJobs, crossTenant, withRemoteParent } from '#platform';
import { FAILING_DISABLE_AFTER_MS, MAX_IN_FLIGHT_PER_ENDPOINT, nextAttemptAtMs } from '../domain/webhook-rules.js';
import { serviceSignatureHeader, standardSignatureHeader } from '../domain/webhook-signatures.js';
import { WebhookSecrets } from '../endpoints/webhook-secrets.service.js';
import { WebhookMetrics } from '../webhook-metrics.js';
import { type AttemptResult, type ClaimedDelivery, WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookSender } from './webhook-sender.js';

const QUEUE = crossTenant('webhook deliveries queue');
/** How often an idle replica looks for due attempts. */
export const DISPATCH_POLL_MS = 100;
/** A lease outlives the 10 s timeout; a replica that dies mid-attempt frees it then. */
const LEASE_MS = 30_000;
/**
 * Attempts one replica starts at most while they are young, over every endpoint. An attempt out
 * longer than SLOW_ATTEMPT_MS stops counting here (it holds its endpoint's slot only), so slow or
 * hung endpoints, however many, never stop the claim for the others.
 */
const MAX_IN_FLIGHT = 256;
/** When an attempt stops counting against MAX_IN_FLIGHT. */
const SLOW_ATTEMPT_MS = 1_000;
/** Requests one replica keeps open at most, slow ones included (sockets and their timers). */
const MAX_OPEN = 4_096;

/**
 * Sends due deliveries after their transaction committed. Each poll leases due attempts
 * (at most 8 in flight per endpoint on this replica, each endpoint's free slots only) and starts
 * them without waiting: a slow endpoint holds only its own slots, never another endpoint's, the
 * claim, a database connection nor an API request (young attempts share a replica-wide cap,
 * slow ones count against their endpoint's only). Finished attempts are recorded in one
 * statement per poll: success, or the next retry on the service clock's schedule, or dead.
 * Signature times are the wall clock's (receivers compare them with their own clocks). Polls
 * every 100 ms, not under NODE_ENV=test (tests call drain()).
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly inFlight = new Map<string, number>();
  /** Attempts in flight started less than SLOW_ATTEMPT_MS ago. */
  private young = 0;
  private readonly running = new Set<Promise<void>>();
  private results: AttemptResult[] = [];
  private readonly sender: WebhookSender;
  private readonly userAgent: string;
  private stopped = false;
  /** Polling on its own (where PeriodicJobs runs): a finished attempt frees its slot for the next poll at once. */
  private autoPoll = false;
  private polling: Promise<number> | null = null;
  private kickScheduled = false;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    private readonly clock: Clock,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly secrets: WebhookSecrets,
    private readonly periodic: PeriodicJobs,
    private readonly metrics: WebhookMetrics,
  ) {
    this.sender = new WebhookSender(config.webhooksAllowPrivate);
    this.userAgent = `${config.serviceName}-webhooks/1`;
  }

  onApplicationBootstrap(): void {
    this.autoPoll = this.periodic.runs;
    this.periodic.every('webhook dispatcher', DISPATCH_POLL_MS, async () => {
      await this.poll();
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.running]);
    await this.flush().catch(() => undefined);
    this.sender.close();
  }

  /** One poll: records finished attempts, then leases and starts due ones. Returns how many it started. Polls never overlap. */
  async poll(): Promise<number> {
    if (this.polling) return this.polling;
    this.polling = this.pollOnce().finally(() => (this.polling = null));
    return this.polling;
  }

  /** After an attempt finished: poll again soon (slots are free, results wait to be recorded). */
  private kick(): void {
    if (!this.autoPoll || this.stopped || this.kickScheduled) return;
    this.kickScheduled = true;
    setTimeout(() => {
      this.kickScheduled = false;
      this.poll().catch((err: Error) => this.logger.error({ err: { name: err.name, message: err.message } }, 'webhook dispatch failed'));
    }, 5).unref();
  }

  private async pollOnce(): Promise<number> {
    await this.flush();
    if (this.stopped) return 0;
    const open = this.running.size;
    const limit = Math.min(MAX_IN_FLIGHT - this.young, MAX_OPEN - open);
    if (limit <= 0) return 0;
    const claimed = await this.deliveries.claim(QUEUE, {
      nowMs: this.clock.nowMs(),
      leaseMs: LEASE_MS,
      worker: this.workerId,
      perEndpoint: MAX_IN_FLIGHT_PER_ENDPOINT,
      busy: this.inFlight,
      limit,
    });
    let started = 0;
    // Every endpoint's delivery of an event sends the same bytes: encoded once per poll.
    const bodies = new Map<string, Buffer>();
    for (const delivery of claimed) {
      const busy = this.inFlight.get(delivery.endpointId) ?? 0;
      this.inFlight.set(delivery.endpointId, busy + 1);
      started++;
      this.young++;
      let aged = false;
      const age = () => {
        if (aged) return;
        aged = true;
        this.young--;
      };
      // Past SLOW_ATTEMPT_MS the attempt holds its endpoint's slot only: the others may use the room.
      const slow = setTimeout(() => (age(), this.kick()), SLOW_ATTEMPT_MS);
      slow.unref();
      let body: Buffer | null = null;
      if (delivery.body !== null) {
        body = bodies.get(delivery.eventId) ?? Buffer.from(delivery.body, 'utf8');
        bodies.set(delivery.eventId, body);
      }
      // An attempt that throws (a bug, never the receiver's doing) is a failed attempt retried on
      // schedule, never an unhandled rejection that would end the process.
      const attempt = this.attempt(delivery, body).catch((err: Error) => {
        this.logger.error({ err: { name: err.name, message: err.message }, deliveryId: delivery.id }, 'webhook attempt failed');
        this.record(delivery, delivery.attempts + 1, { ok: false, statusCode: null, error: 'internal error' }, false);
      });
      const run: Promise<void> = attempt.finally(() => {
        clearTimeout(slow);
        age();
        this.running.delete(run);
        const left = (this.inFlight.get(delivery.endpointId) ?? 1) - 1;
        if (left <= 0) this.inFlight.delete(delivery.endpointId);
        else this.inFlight.set(delivery.endpointId, left);
        this.kick();
      });
      this.running.add(run);
    }
    return started;
  }

  /** Tests and the operator's "run now": polls and waits for every attempt until nothing is due. */
  async drain(): Promise<void> {
    for (;;) {
      const started = await this.poll();
      await Promise.all([...this.running]);
      await this.flush();
      if (started === 0) return;
    }
  }

  /** `body`: the event's bytes (null when erasure purged them). */
  private async attempt(delivery: ClaimedDelivery, body: Buffer | null): Promise<void> {
    const nowMs = this.clock.nowMs();
    const attempts = delivery.attempts + 1;
    if (body === null) {
      this.record(delivery, attempts, { ok: false, statusCode: null, error: 'payload erased with the customer' }, true);
      return;
    }
    // Wall clock on purpose: receivers check the signature time against their own clocks.
    const t = Math.floor(this.clock.wallNowMs() / 1000);
    const keys = this.secrets.signingKeys(
      { id: delivery.endpointId, secretVersion: delivery.secretVersion, previousSecretExpiresMs: delivery.previousSecretExpiresMs },
      nowMs,
    );
    const signature = serviceSignatureHeader(keys.secrets, t, body);
    const headers: Record<string, string> = {
      'Content-Type': 'application/json',
      'User-Agent': this.userAgent,
      'Service-Signature': signature,
      'Crossdeck-Signature': signature,
      'webhook-id': delivery.eventId,
      'webhook-timestamp': String(t),
      'webhook-signature': standardSignatureHeader(keys.secrets, delivery.eventId, t, body, keys.standardKeys),
    };
    // The change's trace context goes along: as stored when this process does not trace; when
    // it does, the attempt runs in a span whose parent is the change's, and the HTTP client's
    // span (same trace) replaces these headers with its own position in that trace.
    if (delivery.traceparent) headers.traceparent = delivery.traceparent;
    if (delivery.traceparent && delivery.tracestate) headers.tracestate = delivery.tracestate;
    const outcome = await withRemoteParent(
      'webhook delivery',
      { traceparent: delivery.traceparent, tracestate: delivery.tracestate },
      { 'webhook.delivery_id': delivery.id, 'webhook.event_id': delivery.eventId, 'webhook.endpoint_id': delivery.endpointId },
      () => this.sender.send(delivery.url, headers, body),
    );
    if (outcome.ok) this.metrics.commitToDelivery.observe(Math.max(0, this.clock.nowMs() - delivery.eventCreatedAtMs) / 1000);
    this.record(delivery, attempts, outcome, false);
  }

  private record(delivery: ClaimedDelivery, attempts: number, outcome: { ok: boolean; statusCode: number | null; error: string | null }, dead: boolean): void {
    const next = outcome.ok || dead ? null : nextAttemptAtMs(attempts, this.clock.nowMs());
    const status = outcome.ok ? 'succeeded' : next === null ? 'dead' : 'failed';
    this.metrics.deliveries.inc({ outcome: status });
    if (!outcome.ok) this.logger.debug({ deliveryId: delivery.id, attempts, error: outcome.error }, 'webhook attempt failed');
    this.results.push({
      id: delivery.id,
      endpointId: delivery.endpointId,
      status,
      nextAttemptAtMs: next,
      statusCode: outcome.statusCode,
      error: outcome.error,
    });
  }

  private async flush(): Promise<void> {
    if (this.results.length === 0) return;
    const batch = this.results;
    this.results = [];
    const nowMs = this.clock.nowMs();
    try {
      await this.deliveries.finish(QUEUE, batch, this.workerId, nowMs, nowMs - FAILING_DISABLE_AFTER_MS);
    } catch (err) {
      // Not recorded: the leases run out and the attempts are made again (at least once).
      this.logger.error({ err: { name: (err as Error).name, message: (err as Error).message } }, 'webhook attempts not recorded');
    }
  }
}
