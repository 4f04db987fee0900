import { Injectable } from '@nestjs/common';
import { type CrossTenant, type PreparedSql, Sql, type TenantScope, prepared, textArrayParam } from '#platform';
import type { DeliveryStatus } from '../domain/webhook-rules.js';

export interface OutboxEvent {
  id: string;
  type: string;
  /** The exact JSON body every delivery of the event sends. */
  body: string;
}

/**
 * An event of a batch: its customer, and whether its body carries the customer's next
 * `sequence` (written as SEQUENCE_SLOT); a sequenced event names the snapshot its body's
 * state was read in, and the customer's set before and after the change as announced sets
 * (announcedSetText).
 */
export type CustomerOutboxEvent = OutboxEvent &
  ({ customerId: string | null; sequenced: false } | { customerId: string; sequenced: true; stateSnapshot: string; heardSet: string; announcedSet: string });

/**
 * A customer of a change that writes rows without changing the announced set: it takes the
 * counter without a number, so a change numbered at the same moment sees that it missed it.
 */
export interface CounterTouch {
  customerId: string;
  /** The snapshot the change's state was read in. */
  stateSnapshot: string;
}

/**
 * A customer whose counter says the recorded change is not the whole story; usually none.
 * `numbered`: its event took number `sequence`; otherwise it only touched the counter.
 * `stale`: the transaction that took the counter before this one committed outside the
 * snapshot the change's state was read in, so that state may lack its change. `heard`: the set
 * the customer's last update announced (announcedSetText), where the counter vouches for it
 * (see the announced-sets migration; null otherwise); for a numbered event it is answered when
 * it differs from the set the change read before it, or when stale. The counter stays locked
 * until this transaction ends.
 */
export interface CounterFinding {
  customerId: string;
  sequence: number;
  numbered: boolean;
  stale: boolean;
  heard: string | null;
}

/**
 * What a sequenced body holds in place of its `sequence` until the recording statement puts
 * the customer's next number there. A real sequence is never 0, and in JSON text this key
 * with its colon can only be a key (inside a string the quotes are escaped); the envelope and
 * `data` write it before any nested object, so the first occurrence is the one replaced.
 */
export const SEQUENCE_SLOT = 0;
const SEQUENCE_SLOT_TEXT = `"sequence":${SEQUENCE_SLOT}`;

/** The trace context recorded with a batch of events. */
export interface OutboxTrace {
  traceparent: string | null;
  tracestate: string | null;
}

export interface DeliveryRecord {
  id: string;
  projectId: string;
  env: 'sandbox' | 'production';
  endpointId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAtMs: number | null;
  createdAtMs: number;
  succeededAtMs: number | null;
}

const DELIVERY_COLUMNS = `id, project_id AS "projectId", env, endpoint_id AS "endpointId", event_id AS "eventId", event_type AS "eventType",
  status, attempts, last_status_code AS "lastStatusCode", last_error AS "lastError", next_attempt_at_ms::float8 AS "nextAttemptAtMs",
  created_at_ms::float8 AS "createdAtMs", succeeded_at_ms::float8 AS "succeededAtMs"`;

/** Random delivery ids made by the database in the fan-out statement. */
const NEW_DELIVERY_ID = `'wd_' || replace(gen_random_uuid()::text, '-', '')`;

/**
 * Since when every change of the scope has been tracked: the earliest moment an endpoint that is
 * enabled now became enabled, plus a second (replicas trust a cached "no endpoint" for
 * ENDPOINT_PRESENCE_TTL_MS after the enabling commit). NULL when none is enabled.
 */
const LISTENING_SINCE = `((SELECT min(enabled_at) FROM webhook_endpoints WHERE project_id = $1 AND env = $2 AND status = 'enabled') + interval '1 second')`;

/**
 * The outbox write of every tracked change: one fixed text, prepared once per connection, so
 * PostgreSQL parses and plans its parts once rather than with every change.
 */
const RECORD = prepared(`WITH seq AS (
         INSERT INTO webhook_customer_sequences (project_id, env, customer_id, last_sequence, last_xact, announced, announced_sequence, announced_at, previous_announced)
         SELECT $1, $2, c.customer_id, CASE WHEN c.numbered THEN 1 ELSE 0 END, pg_current_xact_id(),
                c.announced, CASE WHEN c.numbered THEN 1 END, CASE WHEN c.numbered THEN now() END, c.heard
           FROM unnest($8::text[], $14::boolean[], $16::text[], $15::text[]) AS c(customer_id, numbered, announced, heard)
         ON CONFLICT (project_id, env, customer_id) DO UPDATE
           SET last_sequence = webhook_customer_sequences.last_sequence + EXCLUDED.last_sequence,
               -- The last other transaction to take this counter (taking it twice in one transaction keeps it).
               previous_xact = CASE WHEN webhook_customer_sequences.last_xact = pg_current_xact_id()
                                    THEN webhook_customer_sequences.previous_xact ELSE webhook_customer_sequences.last_xact END,
               last_xact = pg_current_xact_id(),
               -- What receivers heard before this statement (EXCLUDED carries what the change read):
               -- '' when the same, NULL where the counter cannot vouch for it (see the announced-sets migration).
               previous_announced = CASE
                 WHEN webhook_customer_sequences.announced_sequence IS DISTINCT FROM webhook_customer_sequences.last_sequence THEN NULL
                 WHEN webhook_customer_sequences.announced = EXCLUDED.previous_announced THEN ''
                 WHEN webhook_customer_sequences.announced_at >= ${LISTENING_SINCE} THEN webhook_customer_sequences.announced END,
               announced = CASE WHEN EXCLUDED.last_sequence > 0 THEN EXCLUDED.announced ELSE webhook_customer_sequences.announced END,
               announced_sequence = CASE WHEN EXCLUDED.last_sequence > 0 THEN webhook_customer_sequences.last_sequence + 1
                                         ELSE webhook_customer_sequences.announced_sequence END,
               announced_at = CASE WHEN EXCLUDED.last_sequence > 0 THEN now() ELSE webhook_customer_sequences.announced_at END
         RETURNING customer_id, last_sequence, previous_xact, previous_announced),
       ev AS (
         INSERT INTO webhook_events (id, project_id, env, customer_id, type, body, created_at_ms, traceparent, tracestate)
         SELECT e.id, $1, $2, e.customer_id, e.type,
                CASE WHEN e.sequenced THEN overlay(e.body PLACING '"sequence":' || s.last_sequence
                                                   FROM strpos(e.body, $11::text) FOR char_length($11::text))
                     ELSE e.body END,
                $7, $9, $10
           FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $12::boolean[]) AS e(id, customer_id, type, body, sequenced)
           LEFT JOIN seq s ON s.customer_id = e.customer_id
         RETURNING id, type),
       fanout AS (
         INSERT INTO webhook_deliveries (id, project_id, env, endpoint_id, event_id, event_type, status, attempts, next_attempt_at_ms, created_at_ms)
         SELECT ${NEW_DELIVERY_ID}, $1, $2, w.id, ev.id, ev.type, 'pending', 0, $7, $7
           FROM ev JOIN webhook_endpoints w
             ON w.project_id = $1 AND w.env = $2 AND w.status = 'enabled' AND ('*' = ANY(w.event_types) OR ev.type = ANY(w.event_types)))
       SELECT s.customer_id AS "customerId", s.last_sequence::float8 AS sequence, c.numbered,
              COALESCE(NOT pg_visible_in_snapshot(s.previous_xact, c.snapshot::pg_snapshot), false) AS stale,
              CASE WHEN s.previous_announced = '' THEN c.heard ELSE s.previous_announced END AS heard
         FROM seq s JOIN unnest($8::text[], $13::text[], $14::boolean[], $15::text[]) AS c(customer_id, snapshot, numbered, heard)
           ON c.customer_id = s.customer_id
        -- (No earlier writer, or nothing vouched for: nothing to compare. A new counter holds what its change read.)
        WHERE NOT pg_visible_in_snapshot(s.previous_xact, c.snapshot::pg_snapshot)
           OR (c.numbered AND s.previous_announced <> '' AND s.previous_announced <> c.heard)`);

/** The rewrites of a change announced again under its counter's lock (reannounce): rare, prepared like the write they follow. */
const SET_ANNOUNCED = prepared(`UPDATE webhook_customer_sequences SET announced = $4 WHERE project_id = $1 AND env = $2 AND customer_id = $3`);
const DROP_EVENT = prepared(`DELETE FROM webhook_events WHERE project_id = $1 AND env = $2 AND id = $3`);
const REWRITE_BODY = prepared(`UPDATE webhook_events SET body = $4 WHERE project_id = $1 AND env = $2 AND id = $3`);

const HAS_ENABLED_ENDPOINT = prepared(`SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE project_id = $1 AND env = $2 AND status = 'enabled') AS found`);

/** The transactional outbox: events, their fan-out to endpoints, the per-customer sequence, erasure purge. */
@Injectable()
export class WebhookOutboxRepository {
  constructor(private readonly sql: Sql) {}

  /** Whether the scope has an enabled endpoint (EndpointPresence caches the answer). */
  async hasEnabledEndpoint(scope: TenantScope): Promise<boolean> {
    const row = await this.sql.one<{ found: boolean }>(HAS_ENABLED_ENDPOINT, [scope.projectId, scope.env]);
    return row?.found ?? false;
  }

  /**
   * One statement for a whole change: bumps the sequence of every customer with a sequenced
   * event and writes it into that event's body, takes the counter of every touched customer
   * without a number (each counter locked until the transaction ends), inserts the events with
   * the trace context, and one pending delivery per enabled endpoint of the scope that wants
   * each. Answers the customers whose state may lack a change committed by another transaction,
   * or whose last announced set is not the set the change read before it (see CounterFinding);
   * usually none.
   */
  async record(
    scope: TenantScope,
    events: readonly CustomerOutboxEvent[],
    trace: OutboxTrace,
    nowMs: number,
    touched: readonly CounterTouch[] = [],
  ): Promise<CounterFinding[]> {
    if (events.length === 0 && touched.length === 0) return [];
    const counters = new Map<string, { snapshot: string; numbered: boolean; heard: string | null; announced: string | null }>();
    for (const e of events) {
      if (e.sequenced) counters.set(e.customerId, { snapshot: e.stateSnapshot, numbered: true, heard: e.heardSet, announced: e.announcedSet });
    }
    for (const t of touched) {
      if (!counters.has(t.customerId)) counters.set(t.customerId, { snapshot: t.stateSnapshot, numbered: false, heard: null, announced: null });
    }
    // Sorted: concurrent changes lock the counters in one order.
    const customers = [...counters.keys()].sort();
    return this.sql.rows<CounterFinding>(RECORD, [
      scope.projectId,
      scope.env,
      // Binary text arrays: the bodies cross as their bytes, with no array-literal quoting of their JSON on either side.
      textArrayParam(events.map((e) => e.id)),
      textArrayParam(events.map((e) => e.customerId)),
      textArrayParam(events.map((e) => e.type)),
      textArrayParam(events.map((e) => e.body)),
      nowMs,
      textArrayParam(customers),
      trace.traceparent,
      trace.tracestate,
      SEQUENCE_SLOT_TEXT,
      events.map((e) => e.sequenced),
      textArrayParam(customers.map((id) => counters.get(id)!.snapshot)),
      customers.map((id) => counters.get(id)!.numbered),
      textArrayParam(customers.map((id) => counters.get(id)!.heard)),
      textArrayParam(customers.map((id) => counters.get(id)!.announced)),
    ]);
  }

  /** Sets the set the customer's last update announced (its event rewritten under the counter's lock): in the recording transaction. */
  setAnnounced(scope: TenantScope, customerId: string, announcedSet: string): Promise<void> {
    return this.changeOne(SET_ANNOUNCED, [scope.projectId, scope.env, customerId, announcedSet], `sequence counter of ${customerId}`);
  }

  /** Drops a recorded event, and with it its deliveries (its change turned out to announce nothing): in the recording transaction. */
  dropEvent(scope: TenantScope, eventId: string): Promise<void> {
    return this.changeOne(DROP_EVENT, [scope.projectId, scope.env, eventId], `webhook event ${eventId} to drop`);
  }

  /** Puts a recorded event's body right (its state read again), before any delivery of it is sent: in the recording transaction. */
  rewriteBody(scope: TenantScope, eventId: string, body: string): Promise<void> {
    return this.changeOne(REWRITE_BODY, [scope.projectId, scope.env, eventId, body], `webhook event ${eventId} to rewrite`);
  }

  /** A write of a row this transaction recorded: anything but exactly one row is a bug. */
  private async changeOne(statement: PreparedSql, params: unknown[], row: string): Promise<void> {
    const changed = await this.sql.affected(statement, params);
    if (changed !== 1) throw new Error(`${row} not found in its scope`);
  }

  /** The `test` event, delivered to one endpoint only. */
  async recordTest(scope: TenantScope, endpointId: string, event: OutboxEvent, nowMs: number): Promise<DeliveryRecord> {
    await this.sql.rows(`INSERT INTO webhook_events (id, project_id, env, customer_id, type, body, created_at_ms) VALUES ($1, $2, $3, NULL, $4, $5, $6)`, [
      event.id,
      scope.projectId,
      scope.env,
      event.type,
      event.body,
      nowMs,
    ]);
    const row = await this.sql.one<DeliveryRecord>(
      `INSERT INTO webhook_deliveries (id, project_id, env, endpoint_id, event_id, event_type, status, attempts, next_attempt_at_ms, created_at_ms)
       VALUES (${NEW_DELIVERY_ID}, $1, $2, $3, $4, $5, 'pending', 0, $6, $6) RETURNING ${DELIVERY_COLUMNS}`,
      [scope.projectId, scope.env, endpointId, event.id, event.type, nowMs],
    );
    return row!;
  }

  /** Erasure: drops the bodies of the customer's events and the sets its counter keeps; their undelivered deliveries end dead. */
  async purgeCustomer(scope: TenantScope, customerId: string, nowMs: number): Promise<void> {
    await this.sql.rows(
      `UPDATE webhook_deliveries d SET status = 'dead', next_attempt_at_ms = NULL, last_error = 'payload erased with the customer', leased_until_ms = NULL
         FROM webhook_events e
        WHERE e.project_id = $1 AND e.env = $2 AND e.customer_id = $3 AND d.event_id = e.id AND d.status IN ('pending', 'failed')`,
      [scope.projectId, scope.env, customerId],
    );
    await this.sql.rows(`UPDATE webhook_events SET body = NULL WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND body IS NOT NULL`, [
      scope.projectId,
      scope.env,
      customerId,
    ]);
    // Locks the counter row: an erasure waits for a change of the customer that is recording.
    await this.sql.rows(
      `UPDATE webhook_customer_sequences SET announced = NULL, previous_announced = NULL
        WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND (announced IS NOT NULL OR previous_announced IS NOT NULL)`,
      [scope.projectId, scope.env, customerId],
    );
    void nowMs;
  }

  async listForEndpoint(
    scope: TenantScope,
    endpointId: string,
    filter: { status?: DeliveryStatus; limit: number; startingAfter?: { createdAtMs: number; id: string } },
  ): Promise<DeliveryRecord[]> {
    return this.sql.rows<DeliveryRecord>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
        WHERE project_id = $1 AND env = $2 AND endpoint_id = $3 AND ($4::text IS NULL OR status = $4)
          AND ($5::bigint IS NULL OR (created_at_ms, id) < ($5::bigint, $6::text))
        ORDER BY created_at_ms DESC, id DESC LIMIT $7`,
      [
        scope.projectId,
        scope.env,
        endpointId,
        filter.status ?? null,
        filter.startingAfter?.createdAtMs ?? null,
        filter.startingAfter?.id ?? null,
        filter.limit,
      ],
    );
  }

  find(_lookup: CrossTenant, id: string): Promise<DeliveryRecord | null> {
    return this.sql.one<DeliveryRecord>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1`, [id]);
  }

  /** Queues a delivery that is not pending again now; null when it is pending (or gone). */
  retry(scope: TenantScope, id: string, nowMs: number): Promise<DeliveryRecord | null> {
    return this.sql.one<DeliveryRecord>(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at_ms = $4
        WHERE project_id = $1 AND env = $2 AND id = $3 AND status <> 'pending' RETURNING ${DELIVERY_COLUMNS}`,
      [scope.projectId, scope.env, id, nowMs],
    );
  }
}
