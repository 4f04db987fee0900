import { Injectable } from '@nestjs/common';
import { type CrossTenant, DATABASE_NOW_MS, Sql } from '#platform';

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
   * Leases up to `perEndpoint` due attempts of every enabled endpoint not in `skip`. Whether an
   * attempt is due is business time (`nowMs`, the service clock, which a test clock moves);
   * leases are infrastructure time: set and compared on PostgreSQL's clock alone, so replicas
   * whose own clocks disagree never take over a lease still held (and send an attempt twice).
   */
  claim(
    _queue: CrossTenant,
    options: { nowMs: number; leaseMs: number; worker: string; perEndpoint: number; skip: string[]; limit: number },
  ): Promise<ClaimedDelivery[]> {
    return this.sql.rows<ClaimedDelivery>(
      `WITH db AS (SELECT ${DATABASE_NOW_MS} AS now_ms),
       picked AS (
         SELECT p.id FROM webhook_endpoints e
         CROSS JOIN LATERAL (
           SELECT d.id FROM webhook_deliveries d, db
            WHERE d.endpoint_id = e.id AND d.status IN ('pending', 'failed') AND d.next_attempt_at_ms <= $1
              AND (d.leased_until_ms IS NULL OR d.leased_until_ms <= db.now_ms)
            ORDER BY d.next_attempt_at_ms
            LIMIT $4
            FOR UPDATE OF d SKIP LOCKED) p
         WHERE e.status = 'enabled' AND e.id <> ALL($5::text[])
         LIMIT $6)
       UPDATE webhook_deliveries d SET leased_until_ms = db.now_ms + $2, leased_by = $3
         FROM picked, db, webhook_events ev, webhook_endpoints e
        WHERE d.id = picked.id AND ev.id = d.event_id AND e.id = d.endpoint_id
       RETURNING d.id, d.endpoint_id AS "endpointId", d.event_id AS "eventId", d.attempts, ev.body, ev.created_at_ms::float8 AS "eventCreatedAtMs",
                 ev.traceparent, ev.tracestate, e.url, e.secret_version AS "secretVersion", e.previous_secret_expires_ms::float8 AS "previousSecretExpiresMs"`,
      [options.nowMs, options.leaseMs, options.worker, options.perEndpoint, options.skip, options.limit],
    );
  }

  /** Gives leases back unused (more claimed than the endpoint's free slots). */
  async release(_queue: CrossTenant, ids: string[], worker: string): Promise<void> {
    if (ids.length === 0) return;
    await this.sql.rows(`UPDATE webhook_deliveries SET leased_until_ms = NULL, leased_by = NULL WHERE id = ANY($1::text[]) AND leased_by = $2`, [ids, worker]);
  }

  /**
   * Records finished attempts in one statement (only those this worker still leases), and
   * the endpoints' failure streaks: a success ends it; an endpoint failing since
   * `disableBeforeMs` or earlier is set to disabled_failing.
   */
  async finish(_queue: CrossTenant, results: readonly AttemptResult[], worker: string, nowMs: number, disableBeforeMs: number): Promise<void> {
    if (results.length === 0) return;
    await this.sql.rows(
      `WITH r AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[], $5::text[]) AS r(id, status, next_ms, code, err)),
       done AS (
         UPDATE webhook_deliveries d
            SET attempts = d.attempts + 1, status = r.status, next_attempt_at_ms = r.next_ms, last_status_code = r.code, last_error = r.err,
                succeeded_at_ms = CASE WHEN r.status = 'succeeded' THEN $7::bigint ELSE d.succeeded_at_ms END,
                leased_until_ms = NULL, leased_by = NULL
           FROM r WHERE d.id = r.id AND d.leased_by = $6
         RETURNING d.endpoint_id, r.status)
       UPDATE webhook_endpoints e
          SET failing_since_ms = CASE WHEN s.ok THEN NULL ELSE COALESCE(e.failing_since_ms, $7::bigint) END,
              status = CASE WHEN NOT s.ok AND e.status = 'enabled' AND COALESCE(e.failing_since_ms, $7::bigint) <= $8::bigint THEN 'disabled_failing' ELSE e.status END
         FROM (SELECT endpoint_id, bool_or(status = 'succeeded') AS ok FROM done GROUP BY endpoint_id) s
        WHERE e.id = s.endpoint_id`,
      [
        results.map((r) => r.id),
        results.map((r) => r.status),
        results.map((r) => r.nextAttemptAtMs),
        results.map((r) => r.statusCode),
        results.map((r) => (r.error === null ? null : r.error.slice(0, 500))),
        worker,
        nowMs,
        disableBeforeMs,
      ],
    );
  }
}
