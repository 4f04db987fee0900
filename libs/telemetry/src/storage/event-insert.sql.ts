/**
 * The one statement that writes a batch: a multi-row INSERT fed by one binary array
 * parameter per column (unnest), de-duplicated by ON CONFLICT on (project_id, env,
 * event_id, client_day), with the batch's hint sets (resolver queue) and, when the batch has
 * error events, their issues upserted in the same statement. Pure: shared by the repository
 * and the benchmark's bare baseline, so both run exactly the same SQL.
 */
import { ROLLUP_CTES, ROLLUP_RETURNING, feedsRollups } from './event-rollups.sql.js';
import { INT4_OID, INT8_OID, JSON_OID, TEXT_OID, concatArrayParams, int4ArrayParam, int8ArrayParam, textArrayParam } from '#platform';

export interface EventRow {
  eventId: string;
  /** Days since 1970-01-01 (UTC) of the client's own timestamp, else of the receive time. */
  clientDay: number;
  name: string;
  /** The client timestamp, clamped to the receive time when the skew is beyond +/-24 h. */
  timestampMs: number;
  /** What the client sent (null when absent). */
  clientTimestampMs: number | null;
  level: string | null;
  /** Error events only: properties.fingerprint, lower-cased, when it is 8 hex characters. */
  fingerprint: string | null;
  /** JSON text of an object, or null. */
  propertiesJson: string | null;
  tagsJson: string | null;
  categoryTagsJson: string | null;
  /** JSON text of the event's `context` (string values only, bounded), or null / absent. */
  contextJson?: string | null;
  developerUserId: string | null;
  anonymousId: string | null;
  serviceCustomerId: string | null;
  /** The receive time of the row's own batch, when one statement writes several (the events buffer's consumer); else the statement's. */
  receivedAtMs?: number;
}

export interface BatchMeta {
  projectId: string;
  env: string;
  appId: string;
  receivedAtMs: number;
  sdkName: string | null;
  sdkVersion: string | null;
}

/**
 * The event columns, each sent as one binary array parameter ($8 onwards, in this order):
 * PostgreSQL copies the values instead of parsing a JSON document (about 0.6 ms of its CPU
 * per 100-event batch, docs/performance.md), and properties, tags, categoryTags and context,
 * already serialised by the validator, travel as they are (the json cast still validates).
 */
type Column = { alias: string; sqlType: string; oid: number; param: (rows: readonly EventRow[]) => Buffer };

/** Columns of one SQL array type: its cast, its element type and its binary encoder. */
function columnsOf<V>(sqlType: string, oid: number, encode: (values: V[]) => Buffer) {
  return (alias: string, of: (r: EventRow) => V): Column => ({ alias, sqlType, oid, param: (rows) => encode(rows.map(of)) });
}
const text = columnsOf<string | null>('text[]', TEXT_OID, textArrayParam);
const json = columnsOf<string | null>('json[]', JSON_OID, (values) => textArrayParam(values, JSON_OID));
const int4 = columnsOf<number | null>('int[]', INT4_OID, int4ArrayParam);
const int8 = columnsOf<number | null>('bigint[]', INT8_OID, int8ArrayParam);

const EVENT_COLUMNS: readonly Column[] = [
  text('i', (r) => r.eventId),
  int4('d', (r) => r.clientDay),
  text('n', (r) => r.name),
  int8('t', (r) => r.timestampMs),
  int8('ct', (r) => r.clientTimestampMs),
  text('l', (r) => r.level),
  text('f', (r) => r.fingerprint),
  json('p', (r) => r.propertiesJson),
  json('g', (r) => r.tagsJson),
  json('c', (r) => r.categoryTagsJson),
  json('x', (r) => r.contextJson ?? null),
  text('u', (r) => r.developerUserId),
  text('a', (r) => r.anonymousId),
  text('s', (r) => r.serviceCustomerId),
  int8('rt', (r) => r.receivedAtMs ?? null),
];

/**
 * Parameters before the columns: $1 project, $2 env, $3 app, $4 received at (of the rows
 * without their own, and of the hint sets and issues), $5 SDK name, $6 SDK version, $7 hint sets.
 */
const LEADING_PARAMS = 7;

/** The SQL types of every parameter, in order (for PREPARE in the plan tests). */
export const INSERT_PARAM_TYPES: readonly string[] = ['text', 'text', 'text', 'bigint', 'text', 'text', 'json', ...EVENT_COLUMNS.map((c) => c.sqlType)];

const RECORD = `unnest(${EVENT_COLUMNS.map((c, i) => `$${LEADING_PARAMS + 1 + i}::${c.sqlType}`).join(', ')}) AS r(${EVENT_COLUMNS.map((c) => c.alias).join(', ')})`;

const SAME_HINTS = `(e.developer_user_id, e.anonymous_id, e.service_customer_id) IS NOT DISTINCT FROM (EXCLUDED.developer_user_id, EXCLUDED.anonymous_id, EXCLUDED.service_customer_id)`;

/**
 * The batch's distinct hint sets ($7) join the resolver's queue: new sets are inserted
 * pending; a set that was resolved becomes pending again (its new events need their
 * customer); otherwise the row is only locked (last_seen_ms moves at most once a minute).
 * It runs to completion before any event row is written (the events insert below waits
 * on it), so ingestion and the resolver always lock a hint set before its events.
 */
const HINTS_CTE = `hints AS (
  INSERT INTO event_identity_hints AS h (project_id, env, developer_user_id, anonymous_id, service_customer_id, first_seen_ms, last_seen_ms)
  SELECT $1, $2, x.u, x.a, x.s, $4, $4 FROM json_to_recordset($7::json) AS x(u text, a text, s text)
  ON CONFLICT (project_id, env, developer_user_id, anonymous_id, service_customer_id) DO UPDATE
     SET pending = true, last_seen_ms = EXCLUDED.last_seen_ms
   WHERE NOT h.pending OR h.last_seen_ms < EXCLUDED.last_seen_ms - 60000
  RETURNING 1
)`;

const INSERT_ROWS = `
INSERT INTO events AS e (project_id, env, event_id, client_day, app_id, name, timestamp_ms, client_timestamp_ms, received_at_ms,
                         level, fingerprint, properties, tags, category_tags, developer_user_id, anonymous_id, service_customer_id,
                         sdk_name, sdk_version, context)
SELECT $1, $2, r.i, DATE '1970-01-01' + r.d, $3, r.n, r.t, r.ct, COALESCE(r.rt, $4), r.l, r.f, COALESCE(r.p, '{}'::json), r.g, r.c, r.u, r.a, r.s, $5, $6, r.x
  FROM ${RECORD}
 WHERE (SELECT count(*) FROM hints) >= 0`;

/** The columns a later delivery of an event overwrites. */
const DELIVERED_COLUMNS = [
  'app_id',
  'name',
  'timestamp_ms',
  'client_timestamp_ms',
  'received_at_ms',
  'level',
  'fingerprint',
  'properties',
  'tags',
  'category_tags',
  'developer_user_id',
  'anonymous_id',
  'service_customer_id',
  'sdk_name',
  'sdk_version',
  'context',
];

/**
 * The delivery being written was received no earlier than the stored one. A retry can be
 * written before the original it repeats (both waiting on the same stall, in two statements
 * or on two replicas); the receive time, not the order of the writes, says which came last.
 */
const LATER_DELIVERY = `EXCLUDED.received_at_ms >= e.received_at_ms`;

/**
 * A retry overwrites its event (and counts one more delivery); an earlier delivery written
 * after it only counts. A resolved customer is kept while the hints are the same.
 */
const UPSERT = `
ON CONFLICT (project_id, env, event_id, client_day) DO UPDATE SET
  ${DELIVERED_COLUMNS.map((c) => `${c} = CASE WHEN ${LATER_DELIVERY} THEN EXCLUDED.${c} ELSE e.${c} END`).join(',\n  ')},
  customer_id = CASE WHEN NOT (${LATER_DELIVERY}) OR ${SAME_HINTS} THEN e.customer_id ELSE NULL END,
  deliveries = LEAST(e.deliveries + 1, 32767)`;

/**
 * Events, hint sets, error issues and the per-day rollups (event-rollups.sql.ts), still one
 * statement: the upserted rows feed the issue and rollup upserts. Only first deliveries (deliveries = 1) count; issues are locked in
 * fingerprint order so concurrent batches cannot deadlock.
 */
function withIssues(insert: string, rollups = true): string {
  return `
WITH ${HINTS_CTE}, ins AS (${insert}
  RETURNING e.fingerprint, e.timestamp_ms, e.name, e.level, e.deliveries, ${ROLLUP_RETURNING}
), issues AS (
  INSERT INTO error_issues AS i (project_id, env, fingerprint, event_count, first_seen_ms, last_seen_ms, last_event_name, last_level, created_at_ms, updated_at_ms)
  SELECT $1, $2, fingerprint, count(*) FILTER (WHERE deliveries = 1), min(timestamp_ms), max(timestamp_ms),
         (array_agg(name ORDER BY timestamp_ms DESC))[1], (array_agg(level ORDER BY timestamp_ms DESC))[1], $4, $4
    FROM ins WHERE fingerprint IS NOT NULL
   GROUP BY fingerprint
   ORDER BY fingerprint
  ON CONFLICT (project_id, env, fingerprint) DO UPDATE SET
    event_count = i.event_count + EXCLUDED.event_count,
    first_seen_ms = LEAST(i.first_seen_ms, EXCLUDED.first_seen_ms),
    last_seen_ms = GREATEST(i.last_seen_ms, EXCLUDED.last_seen_ms),
    last_event_name = CASE WHEN EXCLUDED.last_seen_ms >= i.last_seen_ms THEN EXCLUDED.last_event_name ELSE i.last_event_name END,
    last_level = CASE WHEN EXCLUDED.last_seen_ms >= i.last_seen_ms THEN EXCLUDED.last_level ELSE i.last_level END,
    updated_at_ms = EXCLUDED.updated_at_ms
  RETURNING 1
)${rollups ? `, ${ROLLUP_CTES}` : ''}
SELECT (SELECT count(*) FROM ins)::int AS written, (SELECT count(*) FROM issues)::int AS issues`;
}

/** Events (and their hint sets), upserted by event id. */
export const INSERT_EVENTS_SQL = `WITH ${HINTS_CTE}${INSERT_ROWS}${UPSERT}`;
/** Events, hint sets and error issues, upserted by event id. */
export const INSERT_EVENTS_WITH_ISSUES_SQL = withIssues(`${INSERT_ROWS}${UPSERT}`);

/**
 * The same statements for rows none of which is stored yet (a plain INSERT: a duplicate
 * fails it with unique_violation, and the caller runs the upsert instead). Nearly every
 * batch is a first delivery; ON CONFLICT searches the primary key for every row before
 * inserting it, and a plain insert searches it once, which saves PostgreSQL about a quarter
 * of its CPU per batch (docs/performance.md).
 */
export const FIRST_DELIVERY_EVENTS_SQL = `WITH ${HINTS_CTE}${INSERT_ROWS}`;
export const FIRST_DELIVERY_EVENTS_WITH_ISSUES_SQL = withIssues(INSERT_ROWS);

/**
 * The statements with the error issues but without the per-day rollups, for EVENT_ROLLUPS=false
 * (a measurement switch: the ingestion cost of the rollups is the difference).
 */
export const INSERT_EVENTS_WITHOUT_ROLLUPS_SQL = withIssues(`${INSERT_ROWS}${UPSERT}`, false);
export const FIRST_DELIVERY_EVENTS_WITHOUT_ROLLUPS_SQL = withIssues(INSERT_ROWS, false);

// Characters JSON.stringify would escape (quote, backslash, controls, lone surrogates).
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

function str(value: string | null): string {
  if (value === null) return 'null';
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}

/**
 * Rows in a stable order (so concurrent overlapping batches lock rows in the same order),
 * one per (eventId, clientDay): a later duplicate in the same batch overwrites the earlier,
 * as a retry would (ON CONFLICT cannot touch one row twice in a statement).
 */
export function dedupeAndSort<T extends EventRow>(rows: readonly T[]): T[] {
  const byKey = new Map<string, T>();
  for (const row of rows) byKey.set(`${row.clientDay}|${row.eventId}`, row);
  const unique = byKey.size === rows.length ? [...rows] : [...byKey.values()];
  return unique.sort((a, b) => (a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : a.clientDay - b.clientDay));
}

export interface InsertStatement {
  sql: string;
  params: unknown[];
  withIssues: boolean;
}

/**
 * Rows already in the statement's own parameter encoding: one binary array per column (in
 * EVENT_COLUMNS order) and their distinct hint sets. The events buffer carries batches in
 * this form, so its consumer merges them by concatenating arrays instead of re-encoding rows.
 */
export interface EncodedRows {
  rowCount: number;
  /** Distinct hint sets as JSON objects, sorted (the lock order of the hint-set upsert). */
  hintSets: string[];
  /** Some row is an error event or a page view: the statement with the issue and rollup upserts. */
  withIssues: boolean;
  columns: Uint8Array[];
}

/** The element type of each column's array, in order (for checking encoded rows read back). */
export const EVENT_COLUMN_OIDS: readonly number[] = EVENT_COLUMNS.map((c) => c.oid);

/** The distinct hint sets of rows, in a stable order (lock order). */
function hintSets(rows: readonly EventRow[]): string[] {
  const sets = new Set<string>();
  let previous: EventRow | undefined;
  for (const r of rows) {
    // Events of one batch mostly share their hints: skip the repeats cheaply.
    if (
      previous &&
      previous.anonymousId === r.anonymousId &&
      previous.developerUserId === r.developerUserId &&
      previous.serviceCustomerId === r.serviceCustomerId
    )
      continue;
    previous = r;
    sets.add(`{"u":${str(r.developerUserId)},"a":${str(r.anonymousId)},"s":${str(r.serviceCustomerId)}}`);
  }
  return [...sets].sort();
}

/** The distinct hint sets of a batch as the JSON parameter, in a stable order (lock order). */
export function hintSetsJson(rows: readonly EventRow[]): string {
  return `[${hintSets(rows).join(',')}]`;
}

/**
 * One batch as it is written and buffered: one row per event id (the last copy wins), in lock
 * order, each row carrying the batch's receive time (kept when batches are merged).
 */
export function encodeBatch(events: readonly EventRow[], receivedAtMs: number): EncodedRows {
  const rows = dedupeAndSort(events);
  for (const row of rows) row.receivedAtMs = receivedAtMs;
  return encodeRows(rows);
}

export function encodeRows(rows: readonly EventRow[]): EncodedRows {
  return {
    rowCount: rows.length,
    hintSets: hintSets(rows),
    withIssues: rows.some(feedsRollups),
    columns: EVENT_COLUMNS.map((c) => c.param(rows)),
  };
}

/**
 * Several encoded batches as one: their rows in order, their hint sets united. Rows are not
 * de-duplicated across the parts: an event in two of them makes the statement fail (ON
 * CONFLICT cannot touch a row twice), and the caller writes the parts one by one instead.
 */
export function concatEncodedRows(parts: readonly EncodedRows[]): EncodedRows {
  if (parts.length === 1) return parts[0];
  return {
    rowCount: parts.reduce((n, p) => n + p.rowCount, 0),
    hintSets: [...new Set(parts.flatMap((p) => p.hintSets))].sort(),
    withIssues: parts.some((p) => p.withIssues),
    columns: EVENT_COLUMNS.map((_c, i) => concatArrayParams(parts.map((p) => p.columns[i]))),
  };
}

/**
 * `firstDelivery`: the plain INSERT, which fails with unique_violation (23505) when an event is
 * already stored. `rollups: false` leaves the per-day rollups out (EVENT_ROLLUPS=false).
 */
export function insertStatementOf(meta: BatchMeta, encoded: EncodedRows, { firstDelivery = false, rollups = true } = {}): InsertStatement {
  const sql = !encoded.withIssues
    ? firstDelivery
      ? FIRST_DELIVERY_EVENTS_SQL
      : INSERT_EVENTS_SQL
    : rollups
      ? firstDelivery
        ? FIRST_DELIVERY_EVENTS_WITH_ISSUES_SQL
        : INSERT_EVENTS_WITH_ISSUES_SQL
      : firstDelivery
        ? FIRST_DELIVERY_EVENTS_WITHOUT_ROLLUPS_SQL
        : INSERT_EVENTS_WITHOUT_ROLLUPS_SQL;
  return {
    sql,
    params: [meta.projectId, meta.env, meta.appId, meta.receivedAtMs, meta.sdkName, meta.sdkVersion, `[${encoded.hintSets.join(',')}]`, ...encoded.columns],
    withIssues: encoded.withIssues,
  };
}

export function buildInsertStatement(meta: BatchMeta, rows: readonly EventRow[], options?: { firstDelivery?: boolean; rollups?: boolean }): InsertStatement {
  return insertStatementOf(meta, encodeRows(rows), options);
}
