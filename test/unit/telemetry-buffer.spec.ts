import { TenantScopes } from '#platform';
import { MalformedBufferedBatch, decodeBufferedBatch, encodeBufferedBatch } from '../../libs/telemetry/src/buffer/buffered-batch.codec.js';
import { type EventRow, encodeBatch, encodeRows } from '../../libs/telemetry/src/storage/event-insert.sql.js';
import { eventRow as row } from '../support/event-row.js';

const scope = (projectId = 'prj_1') => TenantScopes.ofAcknowledgedBatch(projectId, 'sandbox');
const meta = (overrides: { appId?: string; sdkVersion?: string; receivedAtMs?: number } = {}) => ({
  appId: overrides.appId ?? 'app_1',
  receivedAtMs: overrides.receivedAtMs ?? 100,
  sdkName: 'web',
  sdkVersion: overrides.sdkVersion ?? '1.0.0',
});
const bytes = (columns: Uint8Array[]) => columns.map((c) => Buffer.from(c));
/** A batch as the ingestion service appends it: encoded once (encodeBatch), then framed. */
const encodeBuffered = (m: ReturnType<typeof meta>, events: EventRow[]) => {
  const encoded = encodeBatch(events, m.receivedAtMs);
  return { data: encodeBufferedBatch(scope(), m, encoded), rowCount: encoded.rowCount };
};

describe('telemetry: the events buffer codec', () => {
  it('a batch reads back as the rows the direct path would write, each carrying the batch receive time', () => {
    const rows = [
      row({ eventId: 'e2', clientTimestampMs: 5, level: 'error', fingerprint: 'abcdef01', contextJson: '{"appVersion":"1.0"}', developerUserId: 'u' }),
      row(),
    ];
    const { data, rowCount } = encodeBuffered(meta({ receivedAtMs: 123 }), rows);
    expect(rowCount).toBe(2);
    const decoded = decodeBufferedBatch(data);
    expect(decoded.scope).toEqual({ projectId: 'prj_1', env: 'sandbox' });
    expect(decoded.meta).toEqual(meta({ receivedAtMs: 123 }));
    const expected = encodeRows([row({ receivedAtMs: 123 }), { ...rows[0], receivedAtMs: 123 }]);
    expect(decoded.rows.rowCount).toBe(2);
    expect(decoded.rows.hintSets).toEqual(expected.hintSets);
    expect(decoded.rows.withIssues).toBe(true);
    expect(bytes(decoded.rows.columns)).toEqual(bytes(expected.columns));
  });

  it('one row per event id, the later copy winning, as on the direct path', () => {
    const { data, rowCount } = encodeBuffered(meta(), [row({ name: 'first' }), row({ name: 'second' })]);
    expect(rowCount).toBe(1);
    expect(bytes(decodeBufferedBatch(data).rows.columns)).toEqual(bytes(encodeRows([row({ name: 'second', receivedAtMs: 100 })]).columns));
  });

  const valid = encodeBuffered(meta(), [row(), row({ eventId: 'e2' })]).data;
  const newline = valid.indexOf(0x0a);
  const header = JSON.parse(valid.subarray(0, newline).toString()) as Record<string, unknown>;
  const withHeader = (changes: Record<string, unknown>) =>
    Buffer.concat([Buffer.from(`${JSON.stringify({ ...header, ...changes })}\n`), valid.subarray(newline + 1)]);
  const columns = (header.c as number[]).map((size, i, all) => {
    const start = newline + 1 + all.slice(0, i).reduce((a, b) => a + b, 0);
    return valid.subarray(start, start + size);
  });
  it.each([
    ['no header line', Buffer.from('{"v":2}')],
    ['a header that is not JSON', Buffer.from('{\n')],
    ['another version', withHeader({ v: 1 })],
    ['an unknown environment', withHeader({ e: 'staging' })],
    ['no rows', withHeader({ n: 0 })],
    ['a row count the columns do not have', withHeader({ n: 3 })],
    ['column sizes that do not add up', Buffer.concat([valid, Buffer.from([0])])],
    ['a column of the wrong type', withHeader({ c: [(header.c as number[])[1], (header.c as number[])[0], ...(header.c as number[]).slice(2)] })],
    [
      'columns in the wrong order',
      Buffer.concat([
        Buffer.from(`${JSON.stringify({ ...header, c: [columns[1].byteLength, columns[0].byteLength, ...(header.c as number[]).slice(2)] })}\n`),
        columns[1],
        columns[0],
        ...columns.slice(2),
      ]),
    ],
  ])('refuses %s', (_what, data) => {
    expect(() => decodeBufferedBatch(data)).toThrow(MalformedBufferedBatch);
  });
});
