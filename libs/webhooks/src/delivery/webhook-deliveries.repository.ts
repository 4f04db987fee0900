import { Injectable } from '@nestjs/common';
import { type CrossTenant, DATABASE_NOW_MS, Sql, prepared, textArrayParam } from '#platform';

/**
 * The claim of one poll: per enabled endpoint, its due attempts not leased, oldest first, up to
 * its free slots ($4 less its count in $5/$6). Prepared once per connection (it runs with every poll).
 */
const CLAIM = prepared(`WITH db AS (SELECT ${DATABASE_NOW_MS} AS now_ms),
       free AS (
         SELECT e.id, greatest($4::int - COALESCE(b.n, 0), 0) AS slots FROM webhook_endpoints e
           LEFT JOIN unnest($5::text[], $6::int[]) AS b(id, n) ON b.id = e.id
          WHERE e.status = 'enabled'),
       picked AS (
         SELECT p.id FROM free f
         CROSS JOIN LATERAL (
           SELECT d.id FROM webhook_deliveries d, db
            WHERE d.endpoint_id = f.id AND d.status IN ('pending', 'failed') AND d.next_attempt_at_ms <= $1
              AND (d.leased_until_ms IS NULL OR d.leased_until_ms <= db.now_ms)
            ORDER BY d.next_attempt_at_ms
            LIMIT f.slots
            FOR UPDATE OF d SKIP LOCKED) p
         WHERE f.slots > 0
         LIMIT $7)
       UPDATE webhook_deliveries d SET leased_until_ms = db.now_ms + $2, leased_by = $3
         FROM picked, db, webhook_events ev, webhook_endpoints e
        WHERE d.id = picked.id AND ev.id = d.event_id AND e.id = d.endpoint_id
       RETURNING d.id, d.endpoint_id AS "endpointId", d.event_id AS "eventId", d.attempts, ev.body, ev.created_at_ms::float8 AS "eventCreatedAtMs",
                 ev.traceparent, ev.tracestate, e.url, e.secret_version AS "secretVersion", e.previous_secret_expires_ms::float8 AS "previousSecretExpiresMs"`);

/**
 * Finished attempts in one statement, and the failure streaks of their endpoints: an endpoint
 * row is written only where its streak or status changes (a success while no streak runs, the
 * usual case, writes nothing), so busy endpoints do not churn the rows every change reads.
 */
const FINISH = prepared(`WITH r AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[], $5::text[]) AS r(id, status, next_ms, code, err)),
       done AS (
         UPDATE webhook_deliveries d
            SET attempts = d.attempts + 1, status = r.status, next_attempt_at_ms = r.next_ms, last_status_code = r.code, last_error = r.err,
                succeeded_at_ms = CASE WHEN r.status = 'succeeded' THEN $7::bigint ELSE d.succeeded_at_ms END,
                leased_until_ms = NULL, leased_by = NULL
           FROM r WHERE d.id = r.id AND d.leased_by = $6
         RETURNING d.endpoint_id, r.status),
       s AS (SELECT endpoint_id, bool_or(status = 'succeeded') AS ok FROM done GROUP BY endpoint_id)
       UPDATE webhook_endpoints e
          SET failing_since_ms = CASE WHEN s.ok THEN NULL ELSE COALESCE(e.failing_since_ms, $7::bigint) END,
              status = CASE WHEN NOT s.ok AND e.status = 'enabled' AND COALESCE(e.failing_since_ms, $7::bigint) <= $8::bigint THEN 'disabled_failing' ELSE e.status END
         FROM s
        WHERE e.id = s.endpoint_id
          -- Only where the streak starts or ends, or the endpoint is disabled for it.
          AND CASE WHEN s.ok THEN e.failing_since_ms IS NOT NULL
                   ELSE e.failing_since_ms IS NULL OR (e.status = 'enabled' AND e.failing_since_ms <= $8::bigint) END`);

/** A leased attempt with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  /** Attempts made before this one. */
  attempts: number;
  /** Null when erasure purged it. */
  body: string | null;
  eventCreatedAtMs: number;
  /** The W3C trace context of the change that produced the event (null without tracing). */
  traceparent: string | null;
  tracestate: string | null;
  url: string;
  secretVersion: number;
  previousSecretExpiresMs: number | null;
}

export interface AttemptResult {
  id: string;
  endpointId: string;
  status: 'succeeded' | 'failed' | 'dead';
  nextAttemptAtMs: number | null;
  statusCode: number | null;
  error: string | null;
}

/**
 * The dispatcher's queue operations over webhook_deliveries: cross-tenant like the durable
 * jobs queue (due attempts are drained across tenants, FOR UPDATE SKIP LOCKED and a lease,
 * so replicas never send one attempt at once and a dead replica's lease runs out).
 */
@Injectable()
export class WebhookDeliveriesRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Leases due attempts of every enabled endpoint up to its free slots on this replica:
   * `perEndpoint` less what `busy` says it has in flight (an endpoint at its cap is not read at
   * all, so a hung endpoint's backlog costs the claim nothing, and nothing is leased only to be
   * given back). Whether an attempt is due is business time (`nowMs`, the service clock, which
   * a test clock moves); leases are infrastructure time: set and compared on PostgreSQL's clock
   * alone, so replicas whose own clocks disagree never take over a lease still held (and send
   * an attempt twice).
   */
  claim(
    _queue: CrossTenant,
    options: { nowMs: number; leaseMs: number; worker: string; perEndpoint: number; busy: ReadonlyMap<string, number>; limit: number },
  ): Promise<ClaimedDelivery[]> {
    const busy = [...options.busy];
    return this.sql.rows<ClaimedDelivery>(CLAIM, [
      options.nowMs,
      options.leaseMs,
      options.worker,
      options.perEndpoint,
      textArrayParam(busy.map(([id]) => id)),
      busy.map(([, n]) => n),
      options.limit,
    ]);
  }

  /**
   * Records finished attempts in one statement (only those this worker still leases), and
   * the endpoints' failure streaks: a success ends it; an endpoint failing since
   * `disableBeforeMs` or earlier is set to disabled_failing.
   */
  async finish(_queue: CrossTenant, results: readonly AttemptResult[], worker: string, nowMs: number, disableBeforeMs: number): Promise<void> {
    if (results.length === 0) return;
    await this.sql.rows(FINISH, [
      results.map((r) => r.id),
      results.map((r) => r.status),
      results.map((r) => r.nextAttemptAtMs),
      results.map((r) => r.statusCode),
      results.map((r) => (r.error === null ? null : r.error.slice(0, 500))),
      worker,
      nowMs,
      disableBeforeMs,
    ]);
  }
}
