import { randomUUID } from 'node:crypto';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';

const DAY = 86_400_000;

describe('operator overview: events today', () => {
  let t: TestApp;
  let p: ProjectFixture;

  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
    await setRateLimits(t, p.projectId, { events: { sustained: 10_000, burst: 10_000 } });
  });
  afterAll(async () => t.close());

  const overview = (env: string) => t.http.get(`/admin/v1/projects/${p.projectId}/overview`).query({ env }).set(operatorAuth());
  const send = async (timestamps: number[]) => {
    const events = timestamps.map((timestamp) => ({ name: 'screen.viewed', eventId: `evt_${randomUUID()}`, timestamp, anonymousId: 'anon_overview' }));
    expect((await t.http.post('/v1/events').set(keyHeaders(p, p.keys.skTest)).send({ events })).status).toBe(202);
  };

  it('counts the events of the environment whose client day is today, not the other days, and each event once', async () => {
    expect((await overview('sandbox')).body.eventsToday).toBe(0);
    const now = t.clock.nowMs();
    const startOfToday = now - (now % DAY);
    await send([startOfToday, startOfToday + 1, now]);
    await send([startOfToday - 1, startOfToday - 2 * DAY]);
    const res = await overview('sandbox');
    expect(res.status).toBe(200);
    expect(res.body.eventsToday).toBe(3);
    expect((await overview('production')).body.eventsToday).toBe(0);
  });

  it('a retried delivery of the same event ids does not count twice', async () => {
    const now = t.clock.nowMs();
    const events = [{ name: 'screen.viewed', eventId: `evt_${randomUUID()}`, timestamp: now, anonymousId: 'anon_overview' }];
    const before = (await overview('sandbox')).body.eventsToday as number;
    for (let i = 0; i < 2; i++) expect((await t.http.post('/v1/events').set(keyHeaders(p, p.keys.skTest)).send({ events })).status).toBe(202);
    expect((await overview('sandbox')).body.eventsToday).toBe(before + 1);
  });
});
