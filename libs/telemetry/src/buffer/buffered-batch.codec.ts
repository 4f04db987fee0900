/**
 * The wire form of one acknowledged batch in the events buffer: a JSON header line (tenant
 * scope, write metadata, row count, hint sets, column sizes) followed by the batch's rows in
 * the insert statement's own parameter encoding, one binary array per column. The group
 * commit merges batches by concatenating those arrays: no row is decoded or re-encoded after the
 * request that brought it (docs/performance.md).
 */
import { type TenantScope, TenantScopes, arrayParamShape, isEnv } from '#platform';
import type { BatchWriteMeta } from '../storage/events.repository.js';
import { EVENT_COLUMN_OIDS, type EncodedRows } from '../storage/event-insert.sql.js';

export interface BufferedBatch {
  scope: TenantScope;
  meta: BatchWriteMeta;
  rows: EncodedRows;
}

const VERSION = 2;
const NEWLINE = 0x0a;

/** The message of a batch encoded as the direct path writes it (encodeBatch). */
export function encodeBufferedBatch(scope: TenantScope, meta: BatchWriteMeta, encoded: EncodedRows): Buffer {
  const header = JSON.stringify({
    v: VERSION,
    p: scope.projectId,
    e: scope.env,
    a: meta.appId,
    t: meta.receivedAtMs,
    sn: meta.sdkName,
    sv: meta.sdkVersion,
    n: encoded.rowCount,
    h: encoded.hintSets,
    i: encoded.withIssues,
    c: encoded.columns.map((c) => c.byteLength),
  });
  return Buffer.concat([Buffer.from(`${header}\n`), ...encoded.columns]);
}

export class MalformedBufferedBatch extends Error {}

function fail(what: string): never {
  throw new MalformedBufferedBatch(`buffered batch: ${what}`);
}

const isString = (v: unknown): v is string => typeof v === 'string';
const isNullableString = (v: unknown): v is string | null => v === null || typeof v === 'string';
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** Reads a message back (the columns are views of `data`); anything this code did not write throws MalformedBufferedBatch. */
export function decodeBufferedBatch(data: Uint8Array): BufferedBatch {
  const end = data.indexOf(NEWLINE);
  if (end < 0) fail('no header');
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(data.buffer, data.byteOffset, end).toString('utf8')) as Record<string, unknown>;
  } catch {
    fail('header is not JSON');
  }
  if (typeof header !== 'object' || header === null || header.v !== VERSION) fail('unknown version');
  const { p, e, a, t, sn, sv, n, h, i, c } = header;
  if (!isString(p) || !isEnv(e) || !isString(a) || !isCount(t) || !isNullableString(sn) || !isNullableString(sv)) fail('bad envelope');
  if (!isCount(n) || n === 0 || !Array.isArray(h) || !h.every(isString) || typeof i !== 'boolean') fail('bad row summary');
  if (!Array.isArray(c) || c.length !== EVENT_COLUMN_OIDS.length || !c.every(isCount)) fail('bad column sizes');
  if (c.reduce((sum: number, size: number) => sum + size, end + 1) !== data.byteLength) fail('column sizes do not add up');
  let offset = end + 1;
  const columns = c.map((size: number, index) => {
    const column = data.subarray(offset, offset + size);
    offset += size;
    const shape = arrayParamShape(column);
    if (!shape || shape.elementOid !== EVENT_COLUMN_OIDS[index] || shape.count !== n) fail(`column ${index} is not an array of ${n} rows of its type`);
    return column;
  });
  return {
    scope: TenantScopes.ofAcknowledgedBatch(p, e),
    meta: { appId: a, receivedAtMs: t, sdkName: sn, sdkVersion: sv },
    rows: { rowCount: n, hintSets: h, withIssues: i, columns },
  };
}
