import { TenantScopes } from '../../libs/platform/src/index.js';
import {
  type BufferedBatch,
  MalformedBufferedBatch,
  decodeBufferedBatch,
  encodeBufferedBatch,
  mergeBatches,
} from '../../libs/telemetry/src/buffer/buffered-batch.codec.js';
import type { EventRow } from '../../libs/telemetry/src/storage/event-insert.sql.js';

const row = (overrides: Partial<EventRow> = {}): EventRow => ({
  eventId: 'e1',
  clientDay: 20_000,
  name: 'page.viewed',
  timestampMs: 1,
  clientTimestampMs: null,
  level: null,
  fingerprint: null,
  propertiesJson: '{"path":"/\\"quoted\\""}',
  tagsJson: null,
  categoryTagsJson: '["web"]',
  contextJson: null,
  developerUserId: null,
  anonymousId: 'anon_1',
  serviceCustomerId: null,
  ...overrides,
});

const batch = (
  overrides: { projectId?: string; appId?: string; sdkVersion?: string | null; receivedAtMs?: number; rows?: EventRow[] } = {},
): BufferedBatch => ({
  scope: TenantScopes.ofAcknowledgedBatch(overrides.projectId ?? 'prj_1', 'sandbox'),
  meta: { appId: overrides.appId ?? 'app_1', receivedAtMs: overrides.receivedAtMs ?? 100, sdkName: 'web', sdkVersion: overrides.sdkVersion ?? '1.0.0' },
  rows: overrides.rows ?? [row()],
});

describe('telemetry: the events buffer codec', () => {
  it('a batch reads back exactly as written, every column and the tenant scope', () => {
    const original = batch({
      rows: [
        row(),
        row({
          eventId: 'e2',
          clientTimestampMs: 5,
          level: 'error',
          fingerprint: 'abcdef01',
          contextJson: '{"appVersion":"1.0"}',
          developerUserId: 'u',
          serviceCustomerId: 's',
        }),
      ],
    });
    const decoded = decodeBufferedBatch(encodeBufferedBatch(original));
    expect(decoded.scope).toEqual({ projectId: 'prj_1', env: 'sandbox' });
    expect(decoded.meta).toEqual(original.meta);
    expect(decoded.rows).toEqual(original.rows.map((r) => ({ ...r, contextJson: r.contextJson ?? null })));
  });

  it('fields the validator adds (clientEventId, isError) do not travel', () => {
    const normalized = { ...row(), clientEventId: true, isError: false };
    const [decoded] = decodeBufferedBatch(encodeBufferedBatch(batch({ rows: [normalized] }))).rows;
    expect(decoded).not.toHaveProperty('clientEventId');
    expect(decoded).not.toHaveProperty('isError');
  });

  it.each([
    ['not JSON', Buffer.from('{')],
    ['another version', Buffer.from(JSON.stringify({ v: 2 }))],
    ['an unknown environment', Buffer.from(JSON.stringify({ v: 1, p: 'prj', e: 'staging', a: 'app', t: 1, sn: null, sv: null, r: [[]] }))],
    ['no rows', Buffer.from(JSON.stringify({ v: 1, p: 'prj', e: 'sandbox', a: 'app', t: 1, sn: null, sv: null, r: [] }))],
    ['a short row', Buffer.from(JSON.stringify({ v: 1, p: 'prj', e: 'sandbox', a: 'app', t: 1, sn: null, sv: null, r: [['e1']] }))],
    [
      'a row with a number where text belongs',
      Buffer.from(
        JSON.stringify({
          v: 1,
          p: 'prj',
          e: 'sandbox',
          a: 'app',
          t: 1,
          sn: null,
          sv: null,
          r: [[1, 'n', 1, 1, null, null, null, null, null, null, null, null, null, null]],
        }),
      ),
    ],
  ])('refuses %s', (_what, data) => {
    expect(() => decodeBufferedBatch(data)).toThrow(MalformedBufferedBatch);
  });

  it('merges batches of one tenant, app and SDK into one statement, in order, each row with its own receive time', () => {
    const batches = [
      batch({ receivedAtMs: 100, rows: [row({ eventId: 'a' })] }),
      batch({ projectId: 'prj_2', receivedAtMs: 101, rows: [row({ eventId: 'b' })] }),
      batch({ receivedAtMs: 103, rows: [row({ eventId: 'c' }), row({ eventId: 'a', name: 'retried' })] }),
      batch({ appId: 'app_2', receivedAtMs: 104, rows: [row({ eventId: 'd' })] }),
      batch({ sdkVersion: '2.0.0', receivedAtMs: 105, rows: [row({ eventId: 'e' })] }),
    ];
    const merged = mergeBatches(batches, 2000);
    expect(merged.map((g) => g.members)).toEqual([[0, 2], [1], [3], [4]]);
    const [first] = merged;
    expect(first.scope).toEqual({ projectId: 'prj_1', env: 'sandbox' });
    expect(first.meta).toEqual({ appId: 'app_1', receivedAtMs: 103, sdkName: 'web', sdkVersion: '1.0.0' });
    expect(first.rows.map((r) => [r.eventId, r.name, r.receivedAtMs])).toEqual([
      ['a', 'page.viewed', 100],
      ['c', 'page.viewed', 103],
      ['a', 'retried', 103],
    ]);
  });

  it('starts a new statement when the rows would exceed the bound', () => {
    const rows = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => row({ eventId: `${prefix}${i}` }));
    const merged = mergeBatches([batch({ rows: rows(60, 'a') }), batch({ rows: rows(60, 'b') }), batch({ rows: rows(30, 'c') })], 100);
    expect(merged.map((g) => [g.members, g.rows.length])).toEqual([
      [[0], 60],
      [[1, 2], 90],
    ]);
  });
});
