import { randomUUID } from 'node:crypto';
import { EventIdentityResolver } from '#telemetry';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { testScope } from '../support/scopes.js';
import { clearCustomerRevenue, seedCustomerRevenue } from '../support/factories/revenue.js';

describe('operator reads: error issues titled, sorted and paged; issue events and users paged', () => {
  let t: TestApp;
  let p: ProjectFixture;
  const busy = 'aa11bb22';
  const quiet = 'cc33dd44';
  const users = ['u_1', 'u_2', 'u_3'].map((u) => `${u}_${randomUUID().slice(0, 6)}`);

  beforeAll(async () => {
    t = await createTestApp({}, { ownDatabase: true });
    p = await createProjectWithApp(t);
    await setRateLimits(t, p.projectId, { events: { sustained: 10_000, burst: 10_000 } });
    for (const userId of users)
      await t.http
        .post('/v1/identify')
        .set(keyHeaders(p, p.keys.skTest))
        .send({ userId, anonymousId: `anon_${userId}` });
    const now = t.clock.nowMs();
    const events = [
      ...users.map((userId, i) => ({
        name: 'error.unhandled',
        eventId: `err_${randomUUID()}`,
        timestamp: now - 10_000 + i * 1000,
        level: 'error',
        developerUserId: userId,
        properties: {
          fingerprint: busy,
          errorType: 'TypeError',
          message: "Cannot read properties of undefined (reading 'id')",
          frames: [{ function: `handler${i}`, filename: 'https://app.example.com/main.js', lineno: 1, colno: i + 1 }],
        },
      })),
      {
        name: 'error.unhandled',
        eventId: `err_${randomUUID()}`,
        timestamp: now - 1000,
        level: 'warning',
        anonymousId: 'anon_nobody',
        properties: { fingerprint: quiet },
      },
    ];
    const sent = await t.http.post('/v1/events').set(keyHeaders(p, p.keys.skTest)).send({ events });
    expect([sent.status, sent.body.error?.message]).toEqual([202, undefined]);
    await t.app.get(EventIdentityResolver).runOnce();
  });
  afterAll(async () => t.close());

  const get = (path: string) => t.http.get(`/admin/v1/projects/${p.projectId}/error-issues${path}`).set(operatorAuth());

  it('titles issues by exception type and message, with their level, else by the event name', async () => {
    const res = await get('?env=sandbox');
    expect(res.status).toBe(200);
    expect(res.body.sort).toBe('last_seen');
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.data.map((i: { fingerprint: string }) => i.fingerprint)).toEqual([quiet, busy]);
    expect(res.body.data[1]).toMatchObject({
      title: "TypeError: Cannot read properties of undefined (reading 'id')",
      errorType: 'TypeError',
      lastLevel: 'error',
      count: 3,
      affectedUsers: 3,
    });
    expect(res.body.data[0]).toMatchObject({ title: 'error.unhandled', errorType: null, message: null, lastLevel: 'warning', affectedUsers: 0 });
  });

  it('sorts on the server by count, users, first and last seen, and pages through the order with a cursor', async () => {
    for (const sort of ['count', 'users', 'first_seen']) {
      const res = await get(`?env=sandbox&sort=${sort}`);
      expect(res.status).toBe(200);
      expect(res.body.data.map((i: { fingerprint: string }) => i.fingerprint)).toEqual(sort === 'first_seen' ? [quiet, busy] : [busy, quiet]);
    }
    const first = await get('?env=sandbox&sort=count&limit=1');
    expect(first.body.data.map((i: { fingerprint: string }) => i.fingerprint)).toEqual([busy]);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await get(`?env=sandbox&sort=count&limit=1&after=${first.body.nextCursor}`);
    expect(second.body.data.map((i: { fingerprint: string }) => i.fingerprint)).toEqual([quiet]);
    expect(second.body.nextCursor).toBeNull();
    expectError(await get('?env=sandbox&sort=revenue'), 400, 'invalid_param_value');
    expectError(await get('?env=sandbox&after=not-a-cursor!'), 400, 'invalid_param_value');
  });

  it('sorts by revenue at risk: the monthly revenue of the distinct customers the issue hit, shown on every row', async () => {
    const hit = (await get(`/${busy}/users?env=sandbox`)).body.data as { userId: string; serviceCustomerId: string }[];
    const customerOf = (userId: string) => hit.find((u) => u.userId === userId)!.serviceCustomerId;
    const monthly = (userId: string, minor: number) => seedCustomerRevenue(t.dataSource, testScope(p.projectId), customerOf(userId), minor);
    await monthly(users[0]!, 1000);
    await monthly(users[1]!, 499);
    const byRevenue = await get('?env=sandbox&sort=revenue_at_risk');
    expect(byRevenue.status).toBe(200);
    expect(byRevenue.body.sort).toBe('revenue_at_risk');
    expect(byRevenue.body.data.map((i: { fingerprint: string; revenueAtRisk: unknown }) => [i.fingerprint, i.revenueAtRisk])).toEqual([
      [busy, { amountMinor: 1499, currency: 'USD' }],
      [quiet, { amountMinor: 0, currency: 'USD' }],
    ]);
    const first = await get('?env=sandbox&sort=revenue_at_risk&limit=1');
    const second = await get(`?env=sandbox&sort=revenue_at_risk&limit=1&after=${first.body.nextCursor}`);
    expect([...first.body.data, ...second.body.data].map((i: { fingerprint: string }) => i.fingerprint)).toEqual([busy, quiet]);
    const byLastSeen = await get('?env=sandbox');
    expect(byLastSeen.body.data.map((i: { revenueAtRisk: { amountMinor: number } }) => i.revenueAtRisk.amountMinor)).toEqual([0, 1499]);
    await clearCustomerRevenue(t.dataSource, p.projectId);
  });

  it("pages through an issue's events, newest first, each with its own stack", async () => {
    const first = await get(`/${busy}/events?env=sandbox&limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.data.map((e: { frames: { function: string }[] }) => e.frames[0].function)).toEqual(['handler2', 'handler1']);
    expect(first.body.data[0]).toMatchObject({ errorType: 'TypeError', level: 'error', message: "Cannot read properties of undefined (reading 'id')" });
    const second = await get(`/${busy}/events?env=sandbox&limit=2&after=${first.body.nextCursor}`);
    expect(second.body.data.map((e: { frames: { function: string }[] }) => e.frames[0].function)).toEqual(['handler0']);
    expect(second.body.nextCursor).toBeNull();
    expectError(await get(`/0000aaaa/events?env=sandbox`), 404, 'resource_missing');
  });

  it('pages through the users an issue hit with their total, never cut silently', async () => {
    const first = await get(`/${busy}/users?env=sandbox&limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.total).toBe(3);
    expect(first.body.data.map((u: { userId: string }) => u.userId)).toEqual([users[2], users[1]]);
    expect(first.body.data[0]).toEqual({ userId: users[2], serviceCustomerId: expect.stringMatching(/^cdcust_/), count: 1, lastHitAt: expect.any(Number) });
    const second = await get(`/${busy}/users?env=sandbox&limit=2&after=${first.body.nextCursor}`);
    expect(second.body).toMatchObject({ total: 3, nextCursor: null });
    expect(second.body.data.map((u: { userId: string }) => u.userId)).toEqual([users[0]]);
  });

  it('titles the issue page the same way', async () => {
    const res = await get(`/${busy}?env=sandbox`);
    expect(res.status).toBe(200);
    expect(res.body.title).toBe("TypeError: Cannot read properties of undefined (reading 'id')");
  });
});
