import { randomUUID } from 'node:crypto';
import { ErasureWorker } from '#identity';
import { EventIdentityResolver, EventPartitionMaintenance } from '#telemetry';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';

/**
 * The census and distinct-visitor reads answer from counters the writes keep; after every kind
 * of write (identify, events, forget and its erasure, merge, retention purge) each counter
 * equals the recount of the rows it stands for, and the reads answer the recount.
 */
describe('reporting: maintained counters equal their recounts', () => {
  let t: TestApp;
  let p: ProjectFixture;
  const DAY = 86_400_000;
  const HOST = 'app.example.com';
  const uid = (prefix: string) => `${prefix}_${randomUUID().slice(0, 8)}`;
  const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const q = async <T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> => t.dataSource.query(sql, [p.projectId, ...params]);
  const n = async (sql: string, params: unknown[] = []) => Number((await q<{ n: string }>(sql, params))[0].n);

  const view = (anonymousId: string, at: number) => ({
    name: 'page.viewed',
    eventId: `pv_${randomUUID()}`,
    timestamp: at,
    anonymousId,
    properties: { url: `https://${HOST}/`, path: '/' },
  });
  const send = async (events: unknown[]) => {
    const res = await t.http.post('/v1/events').set(keyHeaders(p, p.keys.pubTest)).send({ events });
    expect(res.status).toBe(202);
  };
  const identify = async (body: object): Promise<string> => {
    const res = await t.http.post('/v1/identify').set(keyHeaders(p, p.keys.pubTest)).send(body);
    expect(res.status).toBe(200);
    return res.body.serviceCustomerId;
  };
  const advance = async (ms: number) =>
    expect(
      (
        await t.http
          .post('/admin/v1/test-clock/advance')
          .set(operatorAuth())
          .send({ seconds: ms / 1000 })
      ).status,
    ).toBe(200);
  const census = async () => (await t.http.get('/v1/customers').set(keyHeaders(p, p.keys.skTest))).body.data;
  const uniqueVisitors = async (days: number) =>
    (await t.http.get(`/v1/reporting/metrics?host=${HOST}&days=${days}`).set(keyHeaders(p, p.keys.skTest))).body.data.totals.uniqueVisitors;

  /** The visitor counters against analytics_daily_visitors, and the read against the recount. */
  async function expectVisitorCountsExact() {
    const wrongLastDays = await n(
      `SELECT count(*) AS n FROM (SELECT host, visitor, max(day) AS day FROM analytics_daily_visitors WHERE project_id = $1 AND env = 'sandbox' GROUP BY host, visitor) a
        FULL JOIN (SELECT host, visitor, day FROM analytics_visitor_last_days WHERE project_id = $1 AND env = 'sandbox') b USING (host, visitor)
        WHERE a.day IS DISTINCT FROM b.day`,
    );
    expect(wrongLastDays).toBe(0);
    for (const days of [1, 2, 7, 30, 90]) {
      const from = dayOf(t.clock.nowMs() - (days - 1) * DAY);
      const recount = await n(
        `SELECT count(DISTINCT visitor) AS n FROM analytics_daily_visitors WHERE project_id = $1 AND env = 'sandbox' AND host = $2 AND day >= $3::date`,
        [HOST, from],
      );
      const counted = await n(
        `SELECT coalesce(sum(visitors), 0) AS n FROM analytics_visitor_day_counts WHERE project_id = $1 AND env = 'sandbox' AND host = $2 AND day >= $3::date`,
        [HOST, from],
      );
      expect({ days, counted }).toEqual({ days, counted: recount });
      expect({ days, read: await uniqueVisitors(days) }).toEqual({ days, read: recount });
    }
    return uniqueVisitors(90);
  }

  /** The census counters against customers and reporting_active_days, and the read against the recounts. */
  async function expectCensusExact() {
    const customers = await n(`SELECT count(*) AS n FROM customers WHERE project_id = $1 AND env = 'sandbox' AND forgotten_at IS NULL`);
    const wrongLastDays = await n(
      `SELECT count(*) AS n FROM (SELECT customer_id, max(day) AS day FROM reporting_active_days WHERE project_id = $1 AND env = 'sandbox' GROUP BY customer_id) a
        FULL JOIN (SELECT customer_id, day FROM reporting_active_last_days WHERE project_id = $1 AND env = 'sandbox') b USING (customer_id)
        WHERE a.day IS DISTINCT FROM b.day`,
    );
    expect(wrongLastDays).toBe(0);
    const active = await n(
      `SELECT count(DISTINCT customer_id) AS n FROM reporting_active_days WHERE project_id = $1 AND env = 'sandbox' AND day BETWEEN $2::date AND $3::date`,
      [dayOf(t.clock.nowMs() - 29 * DAY), dayOf(t.clock.nowMs())],
    );
    const anyDay = await n(`SELECT count(*) AS n FROM reporting_active_days WHERE project_id = $1 AND env = 'sandbox'`);
    const read = await census();
    expect({ totalCustomers: read.totalCustomers, activePeople: read.activePeople }).toEqual({
      totalCustomers: customers,
      activePeople: anyDay > 0 ? active : null,
    });
    return read;
  }

  beforeAll(async () => {
    t = await createTestApp({}, { ownDatabase: true });
    p = await createProjectWithApp(t, { allowedOrigins: [`https://${HOST}`] });
    const generous = { sustained: 10_000, burst: 10_000 };
    await setRateLimits(t, p.projectId, { events: generous, alias: generous, forget: generous });
  });
  afterAll(async () => t.close());

  // First, on the test clock's start: the maintenance purges every tenant's days past the retention of that clock.
  it('visitors: a forgotten visitor leaves the counts; the retention purge keeps them exact', async () => {
    const now = t.clock.nowMs();
    const gone = { userId: uid('user'), anonymousId: uid('anon') };
    const customerId = await identify(gone);
    await send([view(gone.anonymousId, now), view('anon_f', now)]);
    const withGone = await expectVisitorCountsExact();
    const forget = await t.http.post('/v1/identity/forget').set(keyHeaders(p, p.keys.skTest)).send({ customerId });
    expect(forget.status).toBe(200);
    await t.app.get(ErasureWorker).runOnce({ projectId: p.projectId });
    expect(await n(`SELECT count(*) AS n FROM analytics_visitor_last_days WHERE project_id = $1 AND visitor = $2`, [gone.anonymousId])).toBe(0);
    expect(await expectVisitorCountsExact()).toBe(withGone - 1);

    // Two visitors as the event write leaves them 200 days back; one of them comes back today.
    const old = dayOf(t.clock.nowMs() - 200 * DAY);
    for (const visitor of ['anon_old', 'anon_back']) {
      await q(`INSERT INTO analytics_daily_visitors (project_id, env, host, day, visitor) VALUES ($1, 'sandbox', $2, $3, $4)`, [HOST, old, visitor]);
      await q(`INSERT INTO analytics_visitor_last_days (project_id, env, host, visitor, day) VALUES ($1, 'sandbox', $2, $3, $4)`, [HOST, visitor, old]);
    }
    await q(`INSERT INTO analytics_visitor_day_counts (project_id, env, host, day, visitors) VALUES ($1, 'sandbox', $2, $3, 2)`, [HOST, old]);
    await send([view('anon_back', t.clock.nowMs())]);
    await expectVisitorCountsExact();
    expect(await n(`SELECT visitors AS n FROM analytics_visitor_day_counts WHERE project_id = $1 AND host = $2 AND day = $3`, [HOST, old])).toBe(1);
    const summary = await t.app.get(EventPartitionMaintenance).runOnce();
    expect(summary.purgedRollupDays).toBeGreaterThanOrEqual(2);
    expect(await n(`SELECT count(*) AS n FROM analytics_visitor_day_counts WHERE project_id = $1 AND day = $2`, [old])).toBe(0);
    expect(await n(`SELECT count(*) AS n FROM analytics_visitor_last_days WHERE project_id = $1 AND day = $2`, [old])).toBe(0);
    await expectVisitorCountsExact();
  });

  it('visitors: new days move each last day once; late and retried views change nothing; concurrent batches stay exact', async () => {
    const now = t.clock.nowMs();
    const base = await expectVisitorCountsExact();
    await send([view('anon_a', now - DAY), view('anon_b', now - DAY), view('anon_a', now)]);
    expect(await expectVisitorCountsExact()).toBe(base + 2);
    // A late view of an earlier day and the same batch twice.
    const batch = [view('anon_a', now - DAY + 1000), view('anon_c', now)];
    await send(batch);
    await t.http.post('/v1/events').set(keyHeaders(p, p.keys.pubTest)).send({ events: batch });
    expect(await expectVisitorCountsExact()).toBe(base + 3);
    // Concurrent batches moving the same visitors.
    await advance(DAY);
    const later = t.clock.nowMs();
    const visitors = ['anon_a', 'anon_b', 'anon_c', 'anon_d', 'anon_e'];
    await Promise.all(Array.from({ length: 6 }, (_, i) => send(visitors.map((v, j) => view(v, later - ((i + j) % 2) * DAY)))));
    expect(await expectVisitorCountsExact()).toBe(base + 5);
    expect(await uniqueVisitors(1)).toBe(5);
  });

  it('customers and active people: identify, events through the resolver, merge, forget and erasure', async () => {
    const before = await census();
    expect(before.activePeople).toBeNull();
    const a = { userId: uid('user'), anonymousId: uid('anon') };
    const b = { userId: uid('user'), anonymousId: uid('anon') };
    const c = { userId: uid('user'), anonymousId: uid('anon') };
    const canonical = await identify(a);
    const other = await identify(b);
    const forgotten = await identify(c);
    expect((await expectCensusExact()).totalCustomers).toBe(3);

    const event = (developerUserId: string, at = t.clock.nowMs()) => ({ name: 'screen.viewed', eventId: randomUUID(), timestamp: at - 1000, developerUserId });
    await send([event(a.userId), event(b.userId), event(c.userId), event(a.userId, t.clock.nowMs() - DAY)]);
    await t.app.get(EventIdentityResolver).runOnce();
    expect((await expectCensusExact()).activePeople).toBe(3);

    // Ten days on: the same customers again move their last day; two resolver runs at once.
    await advance(10 * DAY);
    await send([event(a.userId), event(b.userId)]);
    await Promise.all([t.app.get(EventIdentityResolver).runOnce(), t.app.get(EventIdentityResolver).runOnce()]);
    expect((await expectCensusExact()).activePeople).toBe(3);

    // Merge: the other customer's events and hint sets move to the canonical one.
    const clash = await t.http.post('/v1/identify').set(keyHeaders(p, p.keys.pubTest)).send({ userId: a.userId, anonymousId: b.anonymousId });
    expect(clash.body.mergePending).toBe(true);
    const reviews = await t.http.get(`/admin/v1/projects/${p.projectId}/merge-reviews?env=sandbox`).set(operatorAuth());
    const review = reviews.body.data.find((r: { otherCustomerId: string }) => r.otherCustomerId === other);
    expect(review).toBeDefined();
    const approved = await t.http.post(`/admin/v1/projects/${p.projectId}/merge-reviews/${review.id}/approve`).set(operatorAuth());
    expect(approved.status).toBe(200);
    await send([event(b.userId)]);
    await t.app.get(EventIdentityResolver).runOnce();
    await expectCensusExact();
    expect(await n(`SELECT count(*) AS n FROM events WHERE project_id = $1 AND customer_id = $2`, [canonical])).toBeGreaterThan(0);

    // Forget and erasure: the customer leaves the total at once.
    const forget = await t.http.post('/v1/identity/forget').set(keyHeaders(p, p.keys.skTest)).send({ customerId: forgotten });
    expect(forget.status).toBe(200);
    expect((await expectCensusExact()).totalCustomers).toBe(2);
    await t.app.get(ErasureWorker).runOnce({ projectId: p.projectId });
    expect((await expectCensusExact()).totalCustomers).toBe(2);
    // A fresh identify counts again, and a customer out of the window for 31 days leaves it.
    await identify({ userId: uid('user'), anonymousId: uid('anon') });
    expect((await expectCensusExact()).totalCustomers).toBe(3);
    await advance(31 * DAY);
    expect((await expectCensusExact()).activePeople).toBe(0);
  });

  it('customers written in bulk by one statement are counted by the schema', async () => {
    const before = (await census()).totalCustomers;
    await q(
      `INSERT INTO customers (id, project_id, env, created_at, updated_at) SELECT 'cdcust_bulk' || g || $2, $1, 'sandbox', now(), now() FROM generate_series(1, 50) g`,
      [randomUUID().slice(0, 8)],
    );
    expect((await expectCensusExact()).totalCustomers).toBe(before + 50);
  });
});
