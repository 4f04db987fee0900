/**
 * The wire form of one acknowledged batch in the events buffer: the tenant scope, the
 * batch's write metadata and its normalised rows, exactly what EventsRepository.writeBatch
 * takes, so the consumer writes what the direct path would have written. Rows are
 * positional arrays (a 100-event batch is about as large as its request body).
 */
import { type TenantScope, TenantScopes, isEnv } from '../../../platform/src/index.js';
import type { BatchWriteMeta } from '../storage/events.repository.js';
import type { EventRow } from '../storage/event-insert.sql.js';

export interface BufferedBatch {
  scope: TenantScope;
  meta: BatchWriteMeta;
  rows: EventRow[];
}

const VERSION = 1;

type Field = keyof EventRow;
const STRINGS: readonly Field[] = ['eventId', 'name'];
const NUMBERS: readonly Field[] = ['clientDay', 'timestampMs'];
const NULLABLE_NUMBERS: readonly Field[] = ['clientTimestampMs'];
const NULLABLE_STRINGS: readonly Field[] = [
  'level',
  'fingerprint',
  'propertiesJson',
  'tagsJson',
  'categoryTagsJson',
  'contextJson',
  'developerUserId',
  'anonymousId',
  'serviceCustomerId',
];
const ORDER: readonly Field[] = [...STRINGS, ...NUMBERS, ...NULLABLE_NUMBERS, ...NULLABLE_STRINGS];

export function encodeBufferedBatch(batch: BufferedBatch): Buffer {
  const { scope, meta } = batch;
  return Buffer.from(
    JSON.stringify({
      v: VERSION,
      p: scope.projectId,
      e: scope.env,
      a: meta.appId,
      t: meta.receivedAtMs,
      sn: meta.sdkName,
      sv: meta.sdkVersion,
      r: batch.rows.map((row) => ORDER.map((f) => row[f] ?? null)),
    }),
  );
}

export class MalformedBufferedBatch extends Error {}

function fail(what: string): never {
  throw new MalformedBufferedBatch(`buffered batch: ${what}`);
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isNullableString = (v: unknown): v is string | null => v === null || typeof v === 'string';
const isInteger = (v: unknown): v is number => Number.isSafeInteger(v);

/** Reads a message back; anything that is not a batch this code wrote throws MalformedBufferedBatch. */
export function decodeBufferedBatch(data: Uint8Array): BufferedBatch {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8')) as Record<string, unknown>;
  } catch {
    fail('not JSON');
  }
  if (typeof doc !== 'object' || doc === null || doc.v !== VERSION) fail('unknown version');
  const { p, e, a, t, sn, sv, r } = doc;
  if (!isString(p) || !isEnv(e) || !isString(a) || !isInteger(t) || !isNullableString(sn) || !isNullableString(sv) || !Array.isArray(r) || r.length === 0) {
    fail('bad envelope');
  }
  const rows = r.map((values: unknown, index) => {
    if (!Array.isArray(values) || values.length !== ORDER.length) fail(`row ${index} has the wrong shape`);
    const row: Record<string, unknown> = {};
    ORDER.forEach((field, i) => (row[field] = values[i]));
    if (!STRINGS.every((f) => isString(row[f])) || !NUMBERS.every((f) => isInteger(row[f]))) fail(`row ${index} lacks a required value`);
    if (!NULLABLE_NUMBERS.every((f) => row[f] === null || isInteger(row[f])) || !NULLABLE_STRINGS.every((f) => isNullableString(row[f]))) {
      fail(`row ${index} has a value of the wrong type`);
    }
    return row as unknown as EventRow;
  });
  return { scope: TenantScopes.ofAcknowledgedBatch(p, e), meta: { appId: a, receivedAtMs: t, sdkName: sn, sdkVersion: sv }, rows };
}

/** Batches one statement writes: same tenant, app and SDK; each row keeps its own batch's receive time. */
export interface MergedBatches {
  scope: TenantScope;
  /** receivedAtMs: the latest of the batches (the hint sets' and issues' "seen" time). */
  meta: BatchWriteMeta;
  rows: EventRow[];
  /** Indexes of the merged batches in the input. */
  members: number[];
}

/**
 * Groups batches the consumer took together into as few statements as the tenant, app and
 * SDK allow, at most `maxRows` rows each (one large statement costs PostgreSQL far less per
 * row than many small ones: docs/performance.md). Input order is kept inside a group, so a
 * later copy of an event still overwrites an earlier one. Sets each row's receivedAtMs.
 */
export function mergeBatches(batches: readonly BufferedBatch[], maxRows: number): MergedBatches[] {
  const open = new Map<string, MergedBatches>();
  const merged: MergedBatches[] = [];
  batches.forEach((batch, index) => {
    const { scope, meta } = batch;
    const key = JSON.stringify([scope.projectId, scope.env, meta.appId, meta.sdkName, meta.sdkVersion]);
    let group = open.get(key);
    if (!group || group.rows.length + batch.rows.length > maxRows) {
      group = { scope, meta: { ...meta }, rows: [], members: [] };
      open.set(key, group);
      merged.push(group);
    }
    for (const row of batch.rows) {
      row.receivedAtMs = meta.receivedAtMs;
      group.rows.push(row);
    }
    group.members.push(index);
    group.meta.receivedAtMs = Math.max(group.meta.receivedAtMs, meta.receivedAtMs);
  });
  return merged;
}
