import { performance } from 'node:perf_hooks';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { DataSource } from 'typeorm';

/** What the pg pool behind TypeORM's postgres driver exposes (node-postgres Pool). */
interface PgPoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** Route label of requests no route handled (unknown paths, middleware rejections, preflights). */
export const UNMATCHED_ROUTE = '(unmatched)';

/**
 * The process's Prometheus metrics, in a registry of their own (docs/operations.md lists
 * each one and the alerts to set). Served only on the METRICS_PORT listener
 * (metrics-server.ts), never through the API port. Other contexts count through the small
 * counters below; the label values they pass must come from a closed set (bucket names,
 * rails, decisions, job types), never from request data.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency from the first middleware to the last byte, by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  /** decision: allowed (everything fit), partial (part of a batch fit), limited (nothing fit), fail_open (storage down, let through). */
  readonly rateLimitDecisions = new Counter({
    name: 'rate_limit_decisions_total',
    help: 'Token-bucket decisions by bucket and decision (allowed, partial, limited, fail_open)',
    labelNames: ['bucket', 'decision'] as const,
    registers: [this.registry],
  });
  readonly rateLimitFailOpen = new Counter({
    name: 'rate_limit_fail_open_total',
    help: 'Decisions let through because the bucket storage (Redis) failed or timed out',
    labelNames: ['bucket'] as const,
    registers: [this.registry],
  });

  readonly eventsReceived = new Counter({
    name: 'events_received_total',
    help: 'Telemetry events in valid POST /v1/events batches (before throttling)',
    registers: [this.registry],
  });
  readonly eventsDeduplicated = new Counter({
    name: 'events_deduplicated_total',
    help: 'Events collapsed because the same eventId appeared twice in one batch',
    registers: [this.registry],
  });
  readonly eventsThrottled = new Counter({
    name: 'events_throttled_total',
    help: 'Events not stored because the events bucket was empty (partial batches and 429s)',
    registers: [this.registry],
  });
  readonly eventsDropped = new Counter({
    name: 'events_dropped_total',
    help: 'Event values dropped instead of rejected, by reason (malformed_value: level, tags, categoryTags)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  /** Observed by the events' group commit for every statement it runs (merged or alone). */
  readonly eventsBatchesPerStatement = new Histogram({
    name: 'events_batches_per_statement',
    help: 'Event batches written by one statement (group commit: batches waiting for a write slot share the next statement)',
    buckets: [1, 2, 4, 8, 16, 32, 50],
    registers: [this.registry],
  });

  /** Counted by the events buffer (EVENTS_BUFFER_URL) on the ack path and by its consumer. */
  readonly eventsBuffered = new Counter({
    name: 'events_buffer_batches_total',
    help: 'Event batches through the JetStream buffer, by outcome (appended: acknowledged after the append; direct: buffer unavailable, written to PostgreSQL instead; written: stored by the consumer; retried: a write failed and the batch is redelivered)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** Counted where the notification's answer is produced (libs/rails NotificationProcessor). */
  readonly railNotifications = new Counter({
    name: 'rail_notifications_total',
    help: 'Authentic store notifications answered, by rail (card_payments, ios_store, android_store) and decision (applied, no_op, rejected, duplicate, failed)',
    labelNames: ['rail', 'decision'] as const,
    registers: [this.registry],
  });

  /** Counted by the rails' RailReader, once per read of a rail id (reconciliation, refresh, migration gate). */
  readonly railReads = new Counter({
    name: 'rail_reads_total',
    help: "Reads of a rail's API, by rail (card_payments, ios_store, android_store) and outcome (live, ended, none: what the rail holds; unavailable: not readable; throttled: held back by the project's read rate or a store's back-off; voided_list: a page of Play's voided-purchases list)",
    labelNames: ['rail', 'outcome'] as const,
    registers: [this.registry],
  });

  /** Counted by the JobWorker; the gauges are refreshed from the jobs table on its tick (every second). */
  readonly jobsProcessed = new Counter({
    name: 'jobs_processed_total',
    help: 'Background job attempts, by type and outcome (succeeded; failed: every failed attempt; dead_lettered: failed attempts that were the last)',
    labelNames: ['type', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly jobQueueDepth = new Gauge({
    name: 'job_queue_depth',
    help: 'Background job items queued (due or scheduled later; a recurring job keeps one), by type; the same on every replica',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly jobLag = new Gauge({
    name: 'job_lag_seconds',
    help: 'How long the oldest due background job item has waited past its run time, by type; the same on every replica',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly jobDeadLetters = new Gauge({
    name: 'job_dead_letters',
    help: 'Background job items dead-lettered and not yet retried by an operator, by type; the same on every replica',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });

  /** Counted by the rails' sweep of reads at expiry (libs/rails ExpiryReadsJob). */
  readonly railExpiryReads = new Counter({
    name: 'rail_expiry_reads_total',
    help: 'Rail subscriptions read after their end passed, by rail and outcome (applied, no_change, no_subscription, unavailable, rate_limited, superseded)',
    labelNames: ['rail', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly railExpiryReadsDue = new Gauge({
    name: 'rail_expiry_reads_due',
    help: 'Rail subscriptions whose end passed and whose read is due, by rail, as of the last sweep; the same on every replica',
    labelNames: ['rail'] as const,
    registers: [this.registry],
  });

  constructor(@Optional() @Inject(DataSource) dataSource?: DataSource | null) {
    collectDefaultMetrics({ register: this.registry });
    const pool = () => (dataSource?.isInitialized ? ((dataSource.driver as unknown as { master?: PgPoolCounts }).master ?? undefined) : undefined);
    new Gauge({
      name: 'db_pool_connections',
      help: 'PostgreSQL connections of the request pool, by state (in_use, idle)',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const p = pool();
        this.set({ state: 'in_use' }, p ? p.totalCount - p.idleCount : 0);
        this.set({ state: 'idle' }, p ? p.idleCount : 0);
      },
    });
    new Gauge({
      name: 'db_pool_waiting',
      help: 'Queries waiting for a PostgreSQL connection of the request pool',
      registers: [this.registry],
      collect() {
        this.set(pool()?.waitingCount ?? 0);
      },
    });
  }

  /**
   * Counts and times one answered request, labelled with the route template the router
   * matched (e.g. `/v1/server/customers/:customerId/entitlements`), never the raw path.
   * Called by the edge's response hook with the timer it started when the request arrived.
   */
  observeHttp(startedAtMs: number, route: string | undefined, method: string, status: number): void {
    const labels = this.httpLabels(route ?? UNMATCHED_ROUTE, method, status);
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, (performance.now() - startedAtMs) / 1000);
  }

  /** When a request arrived, for observeHttp (a number on the reply rather than a timer closure per request). */
  startHttpTimer(): number {
    return performance.now();
  }

  /**
   * One label object per route, method and status, built once: bounded, as the series are
   * (route templates, the methods Node's parser accepts, status codes).
   */
  private httpLabels(route: string, method: string, status: number): Record<'route' | 'method' | 'status', string> {
    const key = `${status} ${method} ${route}`;
    let labels = this.httpLabelSets.get(key);
    if (!labels) this.httpLabelSets.set(key, (labels = { route, method, status: String(status) }));
    return labels;
  }

  private readonly httpLabelSets = new Map<string, Record<'route' | 'method' | 'status', string>>();
}
