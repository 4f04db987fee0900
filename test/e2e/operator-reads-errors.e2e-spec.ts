import { randomUUID } from 'node:crypto';
import { EventIdentityResolver } from '#telemetry';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');

describe('operator reads: error issues and one issue with its symbolicated latest event', () => {
  let t: TestApp;
  let p: ProjectFixture;
  let other: ProjectFixture;
  let customerId: string;
  let userId: string;
  const fingerprint = 'feed5eed';
  const release = `2.0.${randomUUID().slice(0, 8)}`;
  const fileUrl = 'https://app.example.com/static/main.js';

  beforeAll(async () => {
    t = await createTestApp({}, { ownDatabase: true });
    p = await createProjectWithApp(t);
    other = await createProjectWithApp(t);
    await setRateLimits(t, p.projectId, { events: { sustained: 10_000, burst: 10_000 } });
    userId = `user_${randomUUID().slice(0, 8)}`;
    const anonymousId = `anon_${randomUUID().slice(0, 8)}`;
    customerId = (await t.http.post('/v1/identify').set(keyHeaders(p, p.keys.skTest)).send({ userId, anonymousId })).body.serviceCustomerId;
    // A one-line map: generated line 1, column 0 is src/app.ts line 1, column 0.
    const map = { version: 3, sources: ['src/app.ts'], names: [], mappings: 'AAAA', sourcesContent: ['throw new Error("boom");\n'] };
    const uploaded = await t.http
      .post('/v1/releases/sourcemaps')
      .set({ Authorization: `Bearer ${p.keys.skTest}` })
      .send({ release, environment: 'sandbox', files: [{ fileUrl, sourceMap: b64(map) }] });
    expect(uploaded.status).toBeLessThan(300);
    const now = t.clock.nowMs();
    const events = [3, 2, 1].map((i) => ({
      name: 'error.unhandled',
      eventId: `err_${randomUUID()}`,
      timestamp: now - i * 1000,
      level: 'error',
      anonymousId,
      developerUserId: userId,
      properties: { fingerprint, message: 'boom', release, frames: [{ function: 'main', filename: fileUrl, lineno: 1, colno: 1, in_app: true }] },
    }));
    expect((await t.http.post('/v1/events').set(keyHeaders(p, p.keys.skTest)).send({ events })).status).toBe(202);
    await t.app.get(EventIdentityResolver).runOnce();
  });
  afterAll(async () => t.close());

  const list = (query: string, fx = p) => t.http.get(`/admin/v1/projects/${fx.projectId}/error-issues?${query}`).set(operatorAuth());
  const one = (fp: string, query = 'env=sandbox', fx = p) => t.http.get(`/admin/v1/projects/${fx.projectId}/error-issues/${fp}?${query}`).set(operatorAuth());

  it('lists issues with counts and first and last seen, per environment', async () => {
    const res = await list('env=sandbox');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'list',
      env: 'sandbox',
      sort: 'last_seen',
      nextCursor: null,
      data: [
        {
          object: 'error_issue',
          fingerprint,
          title: 'boom',
          errorType: null,
          message: 'boom',
          count: 3,
          firstSeenAt: expect.any(Number),
          lastSeenAt: expect.any(Number),
          lastEventName: 'error.unhandled',
          lastLevel: 'error',
          affectedUsers: 1,
          revenueAtRisk: { amountMinor: 0, currency: 'USD' },
        },
      ],
    });
    expect((await list('')).body).toEqual({ object: 'list', env: 'production', sort: 'last_seen', nextCursor: null, data: [] });
    expect((await list('env=sandbox', other)).body.data).toEqual([]);
  });

  it('counts the distinct users of each issue from the rollups; events without a user id are not counted', async () => {
    const q = await createProjectWithApp(t);
    const now = t.clock.nowMs();
    const event = (fp: string, developerUserId: string | undefined, i: number) => ({
      name: 'error.unhandled',
      eventId: `err_${randomUUID()}`,
      timestamp: now - i * 1000,
      level: 'error',
      anonymousId: 'anon_affected',
      ...(developerUserId ? { developerUserId } : {}),
      properties: { fingerprint: fp, message: 'boom' },
    });
    const events = [
      event('a1a1a1a1', 'u1', 5),
      event('a1a1a1a1', 'u1', 4),
      event('a1a1a1a1', 'u2', 3),
      event('a1a1a1a1', undefined, 2),
      event('b2b2b2b2', undefined, 1),
    ];
    expect((await t.http.post('/v1/events').set(keyHeaders(q, q.keys.skTest)).send({ events })).status).toBe(202);
    const res = await list('env=sandbox', q);
    expect(res.status).toBe(200);
    expect(res.body.data.map((i: { fingerprint: string; count: number; affectedUsers: number }) => [i.fingerprint, i.count, i.affectedUsers])).toEqual([
      ['b2b2b2b2', 1, 0],
      ['a1a1a1a1', 4, 2],
    ]);
  });

  it('answers one issue with its latest event, frames symbolicated with the source line, and the users it hit', async () => {
    const res = await one(fingerprint.toUpperCase());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'error_issue', fingerprint, count: 3, env: 'sandbox' });
    const frame = res.body.latestEvent.frames[0];
    expect(frame.original).toMatchObject({ source: 'src/app.ts', line: 1, contextLine: 'throw new Error("boom");' });
    expect(res.body.affectedUsers).toEqual([{ serviceCustomerId: customerId, userId, count: 3, lastHitAt: expect.any(Number) }]);
  });

  it('validates env, limit, status and the fingerprint; unknown issues and projects are 404', async () => {
    expectError(await list('env=staging'), 400, 'invalid_param_value');
    expectError(await list('limit=0'), 400, 'invalid_param_value');
    expectError(await list('status=resolvedish'), 400, 'invalid_param_value');
    expectError(await one('xyz'), 400, 'invalid_param_value');
    expectError(await one('00000000'), 404, 'resource_missing');
    expectError(await one(fingerprint, 'env=production'), 404, 'resource_missing');
    expectError(await one(fingerprint, 'env=sandbox', other), 404, 'resource_missing');
    expectError(await t.http.get('/admin/v1/projects/proj_nope/error-issues').set(operatorAuth()), 404, 'resource_missing');
  });
});
