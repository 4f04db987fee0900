import { randomUUID } from 'node:crypto';
import { EventPartitionMaintenance } from '#telemetry';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { bearer, expectNamedError, secretKeyWithScopes } from '../support/read-api.js';

/** Per-host web analytics from the page.viewed rollups the event write keeps. */
describe('GET /v1/reporting/metrics and /v1/reporting/breakdown', () => {
  let t: TestApp;
  let p: ProjectFixture;
  const DAY = 86_400_000;

  const view = (anonymousId: string, url: string, at: number, extra: Record<string, unknown> = {}) => ({
    name: 'page.viewed',
    eventId: `pv_${randomUUID()}`,
    timestamp: at,
    anonymousId,
    properties: { url, path: new URL(url).pathname, ...extra },
  });
  const send = async (events: unknown[]) => {
    const res = await t.http.post('/v1/events').set(keyHeaders(p, p.keys.pubTest)).send({ events });
    expect(res.status).toBe(202);
    return { events };
  };
  const metrics = (query: string, key = p.keys.skTest) => t.http.get(`/v1/reporting/metrics?${query}`).set(bearer(key));
  const breakdown = (query: string) => t.http.get(`/v1/reporting/breakdown?${query}`).set(bearer(p.keys.skTest));

  beforeAll(async () => {
    t = await createTestApp({}, { ownDatabase: true });
    p = await createProjectWithApp(t, { allowedOrigins: ['https://app.example.com', 'https://*.tenants.example.com'] });
    await setRateLimits(t, p.projectId, { events: { sustained: 10_000, burst: 10_000 } });
  });
  afterAll(async () => t.close());

  it('before any page view the figures are null and analytics not_instrumented', async () => {
    const res = await metrics('host=app.example.com');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'web_metrics',
      data: { totals: { uniqueVisitors: null, views: null } },
      meta: expect.objectContaining({ coverage: { analytics: { state: 'not_instrumented', since: null } } }),
    });
    expect((await breakdown('host=app.example.com')).body.data).toEqual({ rows: null });
  });

  it('views, distinct visitors per day and over the window, top pages and referrers; a retried batch counts once', async () => {
    const now = t.clock.nowMs();
    const batch = await send([
      view('anon_a', 'https://app.example.com/pricing?x=1', now - DAY, { referrer: 'https://news.ycombinator.com/item?id=1' }),
      view('anon_a', 'https://app.example.com/', now - DAY + 1000, { referrer: 'https://app.example.com/pricing' }),
      view('anon_b', 'https://APP.example.com:443/pricing', now - DAY + 2000, { referrer: 'https://www.google.com/' }),
      view('anon_a', 'https://app.example.com/pricing', now),
      view('anon_c', 'https://app.example.com/docs', now, { referrer: 'https://www.google.com/search' }),
      view('anon_c', 'https://acme.tenants.example.com/', now),
    ]);
    await t.http.post('/v1/events').set(keyHeaders(p, p.keys.pubTest)).send(batch);

    const total = await metrics('host=app.example.com&days=7');
    expect(total.status).toBe(200);
    expect(total.body.data).toEqual({ totals: { uniqueVisitors: 3, views: 5 } });
    expect(total.body.meta.coverage.analytics.state).toBe('measured');

    const daily = await metrics('host=App.Example.com&granularity=day&days=3');
    const today = new Date(now).toISOString().slice(0, 10);
    const yesterday = new Date(now - DAY).toISOString().slice(0, 10);
    expect(daily.body.data.series).toEqual([
      { date: new Date(now - 2 * DAY).toISOString().slice(0, 10), uniqueVisitors: 0, views: 0 },
      { date: yesterday, uniqueVisitors: 2, views: 3 },
      { date: today, uniqueVisitors: 2, views: 2 },
    ]);
    expect(daily.body.data.totals).toEqual({ uniqueVisitors: 3, views: 5 });

    expect((await metrics('host=acme.tenants.example.com')).body.data.totals).toEqual({ uniqueVisitors: 1, views: 1 });

    const pages = await breakdown('host=app.example.com&dimension=top_pages&limit=2');
    expect(pages.body.data.rows).toEqual([
      { key: '/pricing', views: 3 },
      { key: '/', views: 1 },
    ]);
    const referrers = await breakdown('host=app.example.com&dimension=top_referrers');
    expect(referrers.body.data.rows).toEqual([
      { key: 'www.google.com', views: 2 },
      { key: 'news.ycombinator.com', views: 1 },
    ]);
  });

  it('a host outside the allowed origins is 403 origin_not_allowed; scope and parameters are checked', async () => {
    expectError(await metrics('host=evil.example.net'), 403, 'origin_not_allowed');
    expectError(await metrics('host=tenants.example.com'), 403, 'origin_not_allowed');
    expectNamedError(await metrics(''), 400, 'missing_required_param', /host/);
    expectNamedError(await metrics('host=app.example.com&granularity=week'), 400, 'invalid_param_value', /granularity/);
    expectNamedError(await breakdown('host=app.example.com&dimension=top_users'), 400, 'invalid_param_value', /dimension/);
    const errorsOnly = await secretKeyWithScopes(t, p.keyIds.skLive, ['errors:read']);
    expectNamedError(await metrics('host=app.example.com', errorsOnly), 403, 'insufficient_scope', /reporting:aggregate/);
    expectError(await t.http.get('/v1/reporting/metrics?host=app.example.com').set(keyHeaders(p, p.keys.pubTest)), 401, 'invalid_api_key');
  });

  it('the partition maintenance purges visitor days past the retention; the views counters stay', async () => {
    const old = new Date(t.clock.nowMs() - 200 * DAY).toISOString().slice(0, 10);
    await t.dataSource.query(
      `INSERT INTO analytics_daily_visitors (project_id, env, host, day, visitor) VALUES ($1, 'sandbox', 'app.example.com', $2, 'anon_old')`,
      [p.projectId, old],
    );
    const summary = await t.app.get(EventPartitionMaintenance).runOnce();
    expect(summary.purgedVisitorDays).toBeGreaterThanOrEqual(1);
    const left = await t.dataSource.query(`SELECT count(*)::int AS n FROM analytics_daily_visitors WHERE project_id = $1 AND day = $2`, [p.projectId, old]);
    expect(left[0].n).toBe(0);
    expect((await metrics('host=app.example.com&days=7')).body.data.totals).toEqual({ uniqueVisitors: 3, views: 5 });
  });

  it('the partition maintenance deletes every per-day rollup row past the retention and keeps the days within it', async () => {
    const old = new Date(t.clock.nowMs() - 200 * DAY).toISOString().slice(0, 10);
    const recent = new Date(t.clock.nowMs() - 80 * DAY).toISOString().slice(0, 10);
    for (const day of [old, recent]) {
      await t.dataSource.query(
        `INSERT INTO error_daily_rollups (project_id, env, fingerprint, day, occurrences, first_seen_ms, last_seen_ms) VALUES ($1, 'sandbox', '0badf00d', $2, 1, 1, 1)`,
        [p.projectId, day],
      );
      await t.dataSource.query(
        `INSERT INTO analytics_daily_hosts (project_id, env, host, day, views, visitors) VALUES ($1, 'sandbox', 'old.example.com', $2, 1, 1)`,
        [p.projectId, day],
      );
      await t.dataSource.query(
        `INSERT INTO analytics_daily_pages (project_id, env, host, day, path, views) VALUES ($1, 'sandbox', 'old.example.com', $2, '/', 1)`,
        [p.projectId, day],
      );
      await t.dataSource.query(
        `INSERT INTO analytics_daily_referrers (project_id, env, host, day, referrer_host, views) VALUES ($1, 'sandbox', 'old.example.com', $2, 'ref.example.com', 1)`,
        [p.projectId, day],
      );
    }
    const summary = await t.app.get(EventPartitionMaintenance).runOnce();
    expect(summary.purgedRollupDays).toBeGreaterThanOrEqual(4);
    for (const table of ['error_daily_rollups', 'analytics_daily_hosts', 'analytics_daily_pages', 'analytics_daily_referrers']) {
      const rows: { day: string }[] = await t.dataSource.query(
        `SELECT to_char(day, 'YYYY-MM-DD') AS day FROM ${table} WHERE project_id = $1 AND day IN ($2, $3)`,
        [p.projectId, old, recent],
      );
      expect({ table, days: rows.map((r) => r.day) }).toEqual({ table, days: [recent] });
    }
  });
});
