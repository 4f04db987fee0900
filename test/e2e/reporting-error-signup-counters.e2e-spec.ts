import { randomUUID } from 'node:crypto';
import { ErasureWorker } from '#identity';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { bearer, secretKeyWithScopes } from '../support/read-api.js';

/**
 * The error and acquisition reads answer from counters kept by triggers with the rows they
 * count; after every kind of write (new, repeated, retried and concurrent error batches,
 * concurrent signups, forget and its erasure, a customer row's cascade) each counter equals
 * the recount of its rows, and the reads answer the recount.
 */
describe('reporting: error user and signup counters equal their recounts', () => {
  let t: TestApp;
  let p: ProjectFixture;
  const HOST = 'shop.example.com';
  const FINGERPRINTS = ['c0ffee01', 'c0ffee02', 'c0ffee03'];
  const uid = (prefix: string) => `${prefix}_${randomUUID().slice(0, 8)}`;
  const q = async <T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> => t.dataSource.query(sql, [p.projectId, ...params]);

  const error = (fingerprint: string, developerUserId: string | null, eventId = `err_${randomUUID()}`) => ({
    name: 'error.unhandled',
    eventId,
    timestamp: t.clock.nowMs() - 1000,
    level: 'error',
    ...(developerUserId ? { developerUserId } : {}),
    anonymousId: uid('anon'),
    properties: { fingerprint, message: 'boom', errorType: 'TypeError' },
  });
  const view = (anonymousId: string, utmSource: string) => ({
    name: 'page.viewed',
    eventId: `pv_${randomUUID()}`,
    timestamp: t.clock.nowMs() - 1000,
    anonymousId,
    properties: { url: `https://${HOST}/`, path: '/', utm_source: utmSource },
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

  /** Each fingerprint's count against its rows, and the read against the recount; answers the recounts. */
  async function expectErrorUsersExact(): Promise<Record<string, number>> {
    const wrong = await q(
      `SELECT fingerprint, a.n AS rows, b.users AS counted
         FROM (SELECT fingerprint, count(*) AS n FROM error_affected_users WHERE project_id = $1 AND env = 'sandbox' GROUP BY fingerprint) a
         FULL JOIN (SELECT fingerprint, users FROM error_affected_user_counts WHERE project_id = $1 AND env = 'sandbox') b USING (fingerprint)
        WHERE coalesce(a.n, 0) <> coalesce(b.users, 0)`,
    );
    expect(wrong).toEqual([]);
    const recounts: Record<string, number> = {};
    for (const fingerprint of FINGERPRINTS) {
      const [{ n }] = await q<{ n: string }>(`SELECT count(*) AS n FROM error_affected_users WHERE project_id = $1 AND env = 'sandbox' AND fingerprint = $2`, [
        fingerprint,
      ]);
      recounts[fingerprint] = Number(n);
      const res = await t.http.get(`/v1/errors?fingerprint=${fingerprint}`).set(bearer(p.keys.skTest));
      expect(res.status).toBe(200);
      if (res.body.data) expect({ fingerprint, users: res.body.data.affected.users }).toEqual({ fingerprint, users: Number(n) });
    }
    return recounts;
  }

  /** Signups per source against acquisition_signups, and the read against the recount. */
  async function expectSignupsExact(): Promise<Array<{ source: string; signups: number }>> {
    const recount = (
      await q<{ source: string; n: string }>(
        `SELECT source, count(*) AS n FROM acquisition_signups WHERE project_id = $1 AND env = 'sandbox' GROUP BY source ORDER BY count(*) DESC, source`,
      )
    ).map((r) => ({ source: r.source, signups: Number(r.n) }));
    const counted = (
      await q<{ source: string; n: string }>(
        `SELECT source, sum(signups) AS n FROM acquisition_signup_counts WHERE project_id = $1 AND env = 'sandbox'
          GROUP BY source HAVING sum(signups) <> 0 ORDER BY sum(signups) DESC, source`,
      )
    ).map((r) => ({ source: r.source, signups: Number(r.n) }));
    expect(counted).toEqual(recount);
    const res = await t.http.get('/v1/acquisition?limit=100').set(bearer(p.keys.skTest));
    expect(res.status).toBe(200);
    expect(res.body.data.sources).toEqual(recount);
    return recount;
  }

  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t, { allowedOrigins: [`https://${HOST}`] });
    const generous = { sustained: 10_000, burst: 10_000 };
    await setRateLimits(t, p.projectId, { events: generous, alias: generous, forget: generous });
  });
  afterAll(async () => t.close());

  it('error users: a user counts once per fingerprint across repeated, retried and concurrent batches', async () => {
    const [a, b, c] = FINGERPRINTS;
    await send([error(a, 'u_1'), error(a, 'u_1'), error(a, 'u_2'), error(a, null), error(b, 'u_1')]);
    expect(await expectErrorUsersExact()).toEqual({ [a]: 2, [b]: 1, [c]: 0 });

    // The same batch twice (a client retry) and a later hit of known users add no user.
    const retried = [error(b, 'u_3'), error(c, 'u_3')];
    await send(retried);
    await send(retried);
    await send([error(a, 'u_1'), error(b, 'u_1')]);
    expect(await expectErrorUsersExact()).toEqual({ [a]: 2, [b]: 2, [c]: 1 });

    // Concurrent batches racing for the same new users of the same fingerprints.
    const racing = Array.from({ length: 8 }, (_, i) => `u_race_${i}`);
    await Promise.all(Array.from({ length: 6 }, (_, k) => send(racing.map((u, i) => error(FINGERPRINTS[(i + k) % 3], u)))));
    // Over the six batches each racing user hits every fingerprint.
    expect(await expectErrorUsersExact()).toEqual({ [a]: 2 + racing.length, [b]: 2 + racing.length, [c]: 1 + racing.length });
  });

  it('error users: the erasure of a forgotten customer takes its user ids out of every count', async () => {
    const gone = { userId: uid('user'), anonymousId: uid('anon') };
    const customerId = await identify(gone);
    await send(FINGERPRINTS.map((f) => error(f, gone.userId)));
    const before = await expectErrorUsersExact();
    const forget = await t.http.post('/v1/identity/forget').set(keyHeaders(p, p.keys.skTest)).send({ customerId });
    expect(forget.status).toBe(200);
    await t.app.get(ErasureWorker).runOnce({ projectId: p.projectId });
    expect((await q(`SELECT 1 FROM error_affected_users WHERE project_id = $1 AND user_id = $2`, [gone.userId])).length).toBe(0);
    const after = await expectErrorUsersExact();
    for (const f of FINGERPRINTS) expect(after[f]).toBe(before[f] - 1);
  });

  it('paying and affected users weigh the most recent users of the window when an error hit more', async () => {
    // 5,003 users as the event write leaves them (user g last hit at g): the window is users 3 to 5,002.
    const fingerprint = 'c0ffee09';
    const seed = async (sql: string, params: unknown[] = []) => q(sql, params);
    await seed(
      `INSERT INTO customers (id, project_id, env, created_at, updated_at) SELECT 'cdcust_win' || g, $1, 'sandbox', now(), now() FROM generate_series(0, 5002) g`,
    );
    await seed(
      `INSERT INTO customer_aliases (project_id, env, type, value, customer_id, created_at)
       SELECT $1, 'sandbox', 'developer', 'win_user_' || g, 'cdcust_win' || g, now() FROM generate_series(0, 5002) g`,
    );
    await seed(
      `INSERT INTO error_affected_users (project_id, env, fingerprint, user_id, hits, first_hit_ms, last_hit_ms)
       SELECT $1, 'sandbox', $2, 'win_user_' || g, 1, g, g FROM generate_series(0, 5002) g`,
      [fingerprint],
    );
    await seed(
      `INSERT INTO error_daily_rollups (project_id, env, fingerprint, day, occurrences, first_seen_ms, last_seen_ms, exception_type)
       VALUES ($1, 'sandbox', $2, current_date, 5003, 0, 5002, 'TypeError')`,
      [fingerprint],
    );
    await seed(`INSERT INTO rail_settings (project_id, rail, enabled, updated_at) VALUES ($1, 'card_payments', true, now()) ON CONFLICT DO NOTHING`);
    // Paying: three users out of the window, two in it, and one in it whose customer is forgotten.
    for (const [g, minor] of [
      [0, 900],
      [1, 900],
      [2, 900],
      [10, 500],
      [20, 700],
      [30, 800],
    ])
      await seed(`INSERT INTO revenue_customer_totals (project_id, env, customer_id, currency, monthly_minor) VALUES ($1, 'sandbox', $2, 'USD', $3)`, [
        `cdcust_win${g}`,
        minor,
      ]);
    await seed(`UPDATE customers SET forgotten_at = now() WHERE project_id = $1 AND id = 'cdcust_win30'`);

    const impact = await t.http.get(`/v1/errors?fingerprint=${fingerprint}`).set(bearer(p.keys.skTest));
    expect(impact.status).toBe(200);
    expect(impact.body.data.affected).toEqual({ users: 5003, payingUsers: 2 });
    const identityKey = await secretKeyWithScopes(t, p.keyIds.skTest, ['reporting:identity']);
    const affected = await t.http.get(`/v1/errors/affected?fingerprint=${fingerprint}&limit=3`).set(bearer(identityKey));
    expect(affected.status).toBe(200);
    expect(affected.body.data.rows).toEqual([
      { userId: 'win_user_20', serviceCustomerId: 'cdcust_win20', crossdeckCustomerId: 'cdcust_win20', monthlyRevenueCents: 700, lastHitAt: 20 },
      { userId: 'win_user_10', serviceCustomerId: 'cdcust_win10', crossdeckCustomerId: 'cdcust_win10', monthlyRevenueCents: 500, lastHitAt: 10 },
      { userId: 'win_user_5002', serviceCustomerId: 'cdcust_win5002', crossdeckCustomerId: 'cdcust_win5002', monthlyRevenueCents: 0, lastHitAt: 5002 },
    ]);
    await expectErrorUsersExact();
  });

  it('signups: each customer counts once under its source, concurrent signups included; a removed signup leaves the count', async () => {
    const people = Array.from({ length: 12 }, (_, i) => ({ userId: uid('user'), anonymousId: uid('anon'), source: `campaign_${i % 3}` }));
    await send(people.map((x) => view(x.anonymousId, x.source)));
    // Each identify twice at once: the second finds the customer the first made.
    await Promise.all(
      people.flatMap((x) => [identify({ userId: x.userId, anonymousId: x.anonymousId }), identify({ userId: x.userId, anonymousId: x.anonymousId })]),
    );
    expect(await expectSignupsExact()).toEqual([
      { source: 'campaign_0', signups: 4 },
      { source: 'campaign_1', signups: 4 },
      { source: 'campaign_2', signups: 4 },
    ]);

    // Forgetting keeps the customer row, and with it its signup.
    const customerId = await identify({ userId: people[0].userId, anonymousId: people[0].anonymousId });
    expect((await t.http.post('/v1/identity/forget').set(keyHeaders(p, p.keys.skTest)).send({ customerId })).status).toBe(200);
    await t.app.get(ErasureWorker).runOnce({ projectId: p.projectId });
    await expectSignupsExact();

    // A signup row removed (as the customer row's foreign key cascades) takes its count down.
    const removed = await identify({ userId: people[1].userId, anonymousId: people[1].anonymousId });
    await q(`DELETE FROM acquisition_signups WHERE project_id = $1 AND customer_id = $2`, [removed]);
    expect(await expectSignupsExact()).toEqual([
      { source: 'campaign_0', signups: 4 },
      { source: 'campaign_2', signups: 4 },
      { source: 'campaign_1', signups: 3 },
    ]);
  });
});
