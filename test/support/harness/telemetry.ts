import { randomUUID } from 'node:crypto';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../fixtures.js';
import { createTestApp, type TestApp } from '../test-app.js';

export const DAY_MS = 86_400_000;
export const GENEROUS = {
  events: { sustained: 100_000, burst: 100_000 },
  alias: { sustained: 1000, burst: 10_000 },
  forget: { sustained: 1000, burst: 10_000 },
};

/**
 * One app and project per spec file (generous rate limits), with the event helpers of
 * POST /v1/events (registers its own beforeAll/afterAll). `ownDatabase`: the app runs on a
 * database of its own (createTestApp's option).
 */
export function telemetryHarness(options: { ownDatabase?: boolean } = {}) {
  let t: TestApp;
  let p: ProjectFixture;

  const eid = () => `evt_${randomUUID()}`;
  const ev = (overrides: Record<string, unknown> = {}) => ({
    name: 'page.viewed',
    eventId: eid(),
    timestamp: t.clock.nowMs() - 1000,
    anonymousId: 'anon_1',
    properties: { path: '/pricing' },
    ...overrides,
  });
  function send(body: unknown, key = p.keys.pubTest, fixture = p, extra: Record<string, string> = {}) {
    return t.http
      .post('/v1/events')
      .set({ ...keyHeaders(fixture, key), ...extra })
      .send(body as object);
  }
  async function rows(eventIds: string[], fixture = p) {
    return t.dataSource.query(
      `SELECT event_id, env, app_id, name, timestamp_ms::float8 AS timestamp_ms, client_timestamp_ms::float8 AS client_timestamp_ms, level, fingerprint,
              properties, tags, category_tags, developer_user_id, anonymous_id, service_customer_id, customer_id,
              deliveries, client_day::text AS client_day, sdk_name, sdk_version, tableoid::regclass::text AS partition
         FROM events WHERE project_id = $1 AND event_id = ANY($2::text[]) ORDER BY event_id`,
      [fixture.projectId, eventIds],
    );
  }
  async function countProjectEvents(fixture = p): Promise<number> {
    const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM events WHERE project_id = $1`, [fixture.projectId]);
    return n;
  }

  beforeAll(async () => {
    t = await createTestApp({}, { ownDatabase: options.ownDatabase });
    p = await createProjectWithApp(t);
    await setRateLimits(t, p.projectId, GENEROUS);
  }, 60_000);
  afterAll(async () => t?.close());
  return {
    get t() {
      return t;
    },
    get p() {
      return p;
    },
    eid,
    ev,
    send,
    rows,
    countProjectEvents,
  };
}
