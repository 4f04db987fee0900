import { randomUUID } from 'node:crypto';
import { EventIdentityResolver } from '#telemetry';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';

/**
 * The events chart's `uniqueUsers` per day, week and month through HTTP: customers active on
 * several days of one week (events sent on the test clock's days, resolved to customers by the
 * resolver), a day that reaches the rollup after a later one, and ranges that clip a period at
 * its start, its end or both. A week's figure is its distinct customers, not the sum of its days.
 */
describe('reporting: distinct active customers per day, week and month in the events chart', () => {
  let t: TestApp;
  let p: ProjectFixture;
  const DAY = 86_400_000;
  const uid = (prefix: string) => `${prefix}_${randomUUID().slice(0, 8)}`;
  const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  let monday = 0;
  /** The day `n` days after the Monday the activity starts on. */
  const m = (n: number) => dayOf(monday + n * DAY);

  const advance = async (ms: number) => {
    const res = await t.http
      .post('/admin/v1/test-clock/advance')
      .set(operatorAuth())
      .send({ seconds: Math.round(ms / 1000) });
    expect(res.status).toBe(200);
  };
  /** Moves the test clock (whole seconds) to about 12:00 UTC of the day `n` days after the Monday. */
  const on = async (n: number) => advance(monday + n * DAY - t.clock.nowMs());
  const identify = async (body: object) => {
    const res = await t.http.post('/v1/identify').set(keyHeaders(p, p.keys.pubTest)).send(body);
    expect(res.status).toBe(200);
  };
  const send = async (hints: { developerUserId?: string; anonymousId?: string }) => {
    const events = [{ name: 'screen.viewed', eventId: randomUUID(), timestamp: t.clock.nowMs() - 1000, ...hints }];
    expect((await t.http.post('/v1/events').set(keyHeaders(p, p.keys.pubTest)).send({ events })).status).toBe(202);
  };
  const resolve = () => t.app.get(EventIdentityResolver).runOnce();
  const chart = async (query: Record<string, string>) => {
    const res = await t.http.get('/v1/charts/events').query(query).set(keyHeaders(p, p.keys.skTest));
    expect(res.status).toBe(200);
    return res.body.data as { series: Array<{ period: string; values: Record<string, number | null> }>; summary: Record<string, number | null> };
  };
  const users = async (query: Record<string, string>) => (await chart(query)).series.map((s) => [s.period, s.values.uniqueUsers]);

  beforeAll(async () => {
    t = await createTestApp({}, { ownDatabase: true });
    p = await createProjectWithApp(t);
    const generous = { sustained: 10_000, burst: 10_000 };
    await setRateLimits(t, p.projectId, { events: generous, alias: generous });
    // 12:00 UTC of a Monday whose week (and the Monday after) lies inside one month.
    const noon = Math.floor(t.clock.nowMs() / DAY) * DAY + DAY + DAY / 2;
    monday = noon + ((8 - new Date(noon).getUTCDay()) % 7) * DAY;
    while (new Date(monday).getUTCDate() > 20) monday += 7 * DAY;
    await on(0);
  });
  afterAll(async () => t.close());

  it('a week counts its distinct customers; a late day moves its customer to it; clipped periods count within the range', async () => {
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(() => uid('user'));
    const anonymousOfD = uid('anon');
    for (const userId of [a, b, c]) await identify({ userId, anonymousId: uid('anon') });
    // A: Monday to Wednesday; B: Monday and the Monday after; C: Wednesday.
    await send({ developerUserId: a });
    await send({ developerUserId: b });
    await resolve();
    await on(1);
    await send({ developerUserId: a });
    await resolve();
    await on(2);
    await send({ developerUserId: a });
    await send({ developerUserId: c });
    await resolve();
    // D: a device not yet known on Thursday, then the customer on Saturday; the device is linked
    // to D afterwards, so Thursday reaches the rollup after Saturday.
    await on(3);
    await send({ anonymousId: anonymousOfD });
    await resolve();
    await on(5);
    await identify({ userId: d, anonymousId: uid('anon') });
    await send({ developerUserId: d });
    await resolve();
    await identify({ userId: d, anonymousId: anonymousOfD });
    await advance(60 * 60_000);
    await resolve();
    await on(7);
    await send({ developerUserId: b });
    await resolve();

    expect(await users({ from: m(0), to: m(7) })).toEqual([
      [m(0), 2],
      [m(1), 1],
      [m(2), 2],
      [m(3), 1],
      [m(4), 0],
      [m(5), 1],
      [m(6), 0],
      [m(7), 1],
    ]);
    // The week: A, B, C and D, though its days sum to 7; the next week (clipped at today): B.
    const weeks = await chart({ from: m(0), to: m(7), granularity: 'week' });
    expect(weeks.series.map((s) => [s.period, s.values.uniqueUsers])).toEqual([
      [m(0), 4],
      [m(7), 1],
    ]);
    expect(weeks.summary.uniqueUsers).toBe(4);
    // From Tuesday: the first week clipped at its start (A, C, D; B's Monday is before the range).
    expect(await users({ from: m(1), to: m(7), granularity: 'week' })).toEqual([
      [m(0), 3],
      [m(7), 1],
    ]);
    // Ranges inside one week: Tuesday to Thursday (A, C, D), Thursday and Friday (D's late day).
    expect(await users({ from: m(1), to: m(3), granularity: 'week' })).toEqual([[m(0), 3]]);
    expect(await users({ from: m(3), to: m(4), granularity: 'week' })).toEqual([[m(0), 1]]);

    // Months: the whole month to today, from its first day to Tuesday (A, B), from Thursday on (D, B).
    const month = `${m(0).slice(0, 7)}-01`;
    expect(await users({ from: month, to: m(7), granularity: 'month' })).toEqual([[month, 4]]);
    expect(await users({ from: month, to: m(1), granularity: 'month' })).toEqual([[month, 2]]);
    const monthEnd = dayOf(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)), 0));
    expect(await users({ from: m(3), to: monthEnd, granularity: 'month' })).toEqual([[month, 2]]);
    expect(await users({ from: m(1), to: m(7), granularity: 'month' })).toEqual([[month, 4]]);

    // The kept rows equal their recount from the day rows; D's week and month moved their first day back.
    const q = (sql: string) => t.dataSource.query(sql, [p.projectId]);
    expect(
      await q(
        `SELECT granularity, to_char(first_day, 'YYYY-MM-DD') AS first FROM reporting_active_periods WHERE project_id = $1 AND prev_first > first_day ORDER BY 1`,
      ),
    ).toEqual([
      { granularity: 'month', first: m(3) },
      { granularity: 'week', first: m(3) },
    ]);
    const periods = await q(
      `SELECT granularity, period, customer_id, first_day, last_day FROM reporting_active_periods WHERE project_id = $1 AND env = 'sandbox'
       EXCEPT SELECT g, date_trunc(g, day::timestamp)::date, customer_id, min(day), max(day) FROM reporting_active_days, (VALUES ('week'), ('month')) v(g)
        WHERE project_id = $1 AND env = 'sandbox' GROUP BY 1, 2, 3`,
    );
    expect(periods).toEqual([]);
    const counts = await q(
      `SELECT granularity, day, firsts::int, lasts::int FROM active_period_days WHERE project_id = $1 AND env = 'sandbox' AND (firsts <> 0 OR lasts <> 0)
       EXCEPT SELECT granularity, day, sum(f)::int, sum(l)::int FROM (
         SELECT granularity, first_day AS day, 1 AS f, 0 AS l FROM reporting_active_periods WHERE project_id = $1 AND env = 'sandbox'
         UNION ALL SELECT granularity, last_day, 0, 1 FROM reporting_active_periods WHERE project_id = $1 AND env = 'sandbox') e GROUP BY 1, 2`,
    );
    expect(counts).toEqual([]);
  });
});
