import { ApiError } from '#platform';
import {
  BUCKET_REPORT_BOUNDS,
  addCountMaps,
  isCalendarDate,
  parseBucketReport,
  totalsOf,
  utcDay,
} from '../../libs/reporting/src/buckets/bucket-report.rules.js';
import { hostAllowed } from '../../libs/reporting/src/analytics/allowed-hosts.js';
import { URL_HOST_REGEX, URL_PATH_REGEX, feedsRollups } from '../../libs/telemetry/src/storage/event-rollups.sql.js';

function rejection(fn: () => unknown): { status: number; code: string; message: string } {
  try {
    fn();
  } catch (err) {
    const e = err as ApiError;
    return { status: e.status, code: e.code, message: e.message };
  }
  throw new Error('expected a rejection');
}

describe('bucket report rules', () => {
  it('parses the reporter body: counts per unit, other units and fields ignored, absent maps null', () => {
    const report = parseBucketReport({
      date: '2026-06-19',
      byLabel: { 'home-feed': { read: 4120, write: 2 }, 'col:posts': { read: 217, 'openai.tokens': 5 } },
      byActor: { user_1: { read: 7 } },
      extra: true,
    });
    expect(report.byLabel.get('home-feed')).toEqual({ read: 4120, write: 2, delete: 0 });
    expect(report.byLabel.get('col:posts')).toEqual({ read: 217, write: 0, delete: 0 });
    expect(report.byActor.get('user_1')).toEqual({ read: 7, write: 0, delete: 0 });
    expect(report.byHour).toBeNull();
    expect(totalsOf(report)).toEqual({ read: 4337, write: 2, delete: 0 });
  });

  it('names the field: missing, malformed and negative values are 400, maps past their bound 413', () => {
    expect(rejection(() => parseBucketReport({ byLabel: {} }))).toMatchObject({
      status: 400,
      code: 'missing_required_param',
      message: expect.stringContaining('date'),
    });
    expect(rejection(() => parseBucketReport({ date: '2026-13-01', byLabel: {} }))).toMatchObject({ status: 400, message: expect.stringContaining('date') });
    expect(rejection(() => parseBucketReport({ date: '2026-06-19', byLabel: { a: { read: 1.5 } } }))).toMatchObject({
      message: 'byLabel.a.read must be a non-negative integer',
    });
    expect(rejection(() => parseBucketReport({ date: '2026-06-19', byLabel: {}, byMinute: { '0860': {} } }))).toMatchObject({
      message: expect.stringContaining('byMinute'),
    });
    const actors = Object.fromEntries(Array.from({ length: BUCKET_REPORT_BOUNDS.byActor + 1 }, (_, i) => [`u${i}`, { read: 1 }]));
    expect(rejection(() => parseBucketReport({ date: '2026-06-19', byLabel: {}, byActor: actors }))).toMatchObject({
      status: 413,
      message: expect.stringContaining('byActor'),
    });
  });

  it("adds two windows' maps: shared keys add every unit, other keys are kept, null is nothing", () => {
    const a = { '07': { read: 10, write: 1, delete: 0 }, '08': { read: 2, write: 0, delete: 0 } };
    const b = { '08': { read: 3, write: 4, delete: 5 }, '09': { read: 1, write: 0, delete: 0 } };
    expect(addCountMaps(a, b)).toEqual({
      '07': { read: 10, write: 1, delete: 0 },
      '08': { read: 5, write: 4, delete: 5 },
      '09': { read: 1, write: 0, delete: 0 },
    });
    expect(addCountMaps(null, b)).toBe(b);
    expect(addCountMaps(a, null)).toBe(a);
    expect(addCountMaps(null, null)).toBeNull();
    const proto = addCountMaps(JSON.parse('{"__proto__":{"read":1,"write":0,"delete":0}}'), JSON.parse('{"__proto__":{"read":2,"write":0,"delete":0}}'));
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    expect(Object.entries(proto ?? {})).toEqual([['__proto__', { read: 3, write: 0, delete: 0 }]]);
  });

  it('calendar dates and UTC days', () => {
    expect(isCalendarDate('2024-02-29')).toBe(true);
    expect(isCalendarDate('2023-02-29')).toBe(false);
    expect(utcDay(Date.UTC(2026, 0, 1, 0, 30))).toBe('2026-01-01');
    expect(utcDay(Date.UTC(2026, 0, 1, 0, 30), 1)).toBe('2025-12-31');
  });
});

describe('analytics host rules', () => {
  it('a host is allowed by an exact origin (any scheme or port) or below a wildcard, case-insensitively', () => {
    const origins = ['https://app.example.com', 'http://localhost:3000', 'https://*.tenants.example.com'];
    expect(hostAllowed('APP.example.com', origins)).toBe(true);
    expect(hostAllowed('localhost', origins)).toBe(true);
    expect(hostAllowed('acme.tenants.example.com', origins)).toBe(true);
    expect(hostAllowed('tenants.example.com', origins)).toBe(false);
    expect(hostAllowed('example.com', origins)).toBe(false);
    expect(hostAllowed('evil-app.example.com', origins)).toBe(false);
    expect(hostAllowed('', origins)).toBe(false);
  });

  it('the rollup statement takes the host and path of page URLs as these patterns read them', () => {
    const host = (url: string) => new RegExp(URL_HOST_REGEX).exec(url)?.[1]?.toLowerCase() ?? null;
    const path = (url: string) => new RegExp(URL_PATH_REGEX).exec(url)?.[1] ?? null;
    expect(host('https://App.Example.com:8443/pricing?x=1#y')).toBe('app.example.com');
    expect(host('https://user:pw@example.com/')).toBe('example.com');
    expect(host('/relative/path')).toBeNull();
    expect(path('https://example.com/docs/a?x=1#h')).toBe('/docs/a');
    expect(path('https://example.com')).toBe('');
    expect(feedsRollups({ name: 'page.viewed', fingerprint: null })).toBe(true);
    expect(feedsRollups({ name: 'app.opened', fingerprint: 'abcdef01' })).toBe(true);
    expect(feedsRollups({ name: 'app.opened', fingerprint: null })).toBe(false);
  });
});
