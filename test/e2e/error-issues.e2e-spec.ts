import { randomUUID } from 'node:crypto';
import { EventIdentityResolver } from '#telemetry';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';

describe('error issues: aggregate and identity scopes on server reads', () => {
  let t: TestApp;
  let p: ProjectFixture;
  let customerId: string;
  const fingerprint = 'c0ffee42';

  beforeAll(async () => {
    t = await createTestApp({}, { ownDatabase: true });
    p = await createProjectWithApp(t);
    await setRateLimits(t, p.projectId, { events: { sustained: 10_000, burst: 10_000 } });
    const userId = `user_${randomUUID().slice(0, 8)}`;
    const anonymousId = `anon_${randomUUID().slice(0, 8)}`;
    customerId = (await t.http.post('/v1/identify').set(keyHeaders(p, p.keys.skTest)).send({ userId, anonymousId })).body.serviceCustomerId;
    const now = t.clock.nowMs();
    const events = [1, 2, 3].map((i) => ({
      name: 'error.unhandled',
      eventId: `err_${randomUUID()}`,
      timestamp: now - i * 1000,
      level: 'error',
      anonymousId,
      properties: { fingerprint, message: 'boom' },
    }));
    const sent = await t.http.post('/v1/events').set(keyHeaders(p, p.keys.skTest)).send({ events });
    expect(sent.status).toBe(202);
    await t.app.get(EventIdentityResolver).runOnce();
  });
  afterAll(async () => t.close());

  const issues = (key: string) => t.http.get('/v1/server/errors/issues').set({ Authorization: `Bearer ${key}` });
  const affected = (key: string, fp = fingerprint) => t.http.get(`/v1/server/errors/issues/${fp}/customers`).set({ Authorization: `Bearer ${key}` });

  it('a default secret key (aggregate scopes) reads issue counts', async () => {
    const res = await issues(p.keys.skTest);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.body).toEqual({
      object: 'list',
      env: 'sandbox',
      data: [
        expect.objectContaining({
          object: 'error_issue',
          fingerprint,
          count: 3,
          lastEventName: 'error.unhandled',
          lastLevel: 'error',
          firstSeenAt: expect.any(Number),
          lastSeenAt: expect.any(Number),
        }),
      ],
    });
  });

  it('a default secret key lacks the identity scope: 403 insufficient_scope', async () => {
    const res = await affected(p.keys.skTest);
    expect(res.status).toBe(403);
    expect(res.body.error).toEqual(expect.objectContaining({ type: 'permission_error', code: 'insufficient_scope', request_id: res.headers['x-request-id'] }));
    expect(res.body.error.message).toContain('reporting:identity');
  });

  it('a key minted with the identity scope reads who an issue hit; the old key keeps its own scopes', async () => {
    const rotated = await t.http
      .post(`/admin/v1/keys/${p.keyIds.skTest}/rotate`)
      .set(operatorAuth())
      .send({ scopes: ['reporting:identity', 'errors:read'] });
    expect(rotated.status).toBe(201);
    const identityKey = rotated.body.key.key;
    const res = await affected(identityKey);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'list',
      fingerprint,
      env: 'sandbox',
      data: [{ serviceCustomerId: customerId, crossdeckCustomerId: customerId, count: 3, lastSeenAt: expect.any(Number) }],
    });
    expect((await affected(p.keys.skTest)).status).toBe(403);
    expect((await affected(identityKey, fingerprint.toUpperCase())).body.data).toHaveLength(1);
    const bad = await affected(identityKey, 'NOT-HEX!');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_param_value');
  });

  it('a key without errors:read is refused on the aggregate read too', async () => {
    const rotated = await t.http
      .post(`/admin/v1/keys/${p.keyIds.skLive}/rotate`)
      .set(operatorAuth())
      .send({ scopes: ['revenue:read'] });
    const res = await issues(rotated.body.key.key);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('insufficient_scope');
  });

  it('publishable keys are refused with 401 invalid_api_key, environments are isolated', async () => {
    const pub = await t.http.get('/v1/server/errors/issues').set(keyHeaders(p, p.keys.pubTest));
    expect(pub.status).toBe(401);
    expect(pub.body.error.code).toBe('invalid_api_key');
    const other = await createProjectWithApp(t);
    expect((await issues(other.keys.skTest)).body.data).toEqual([]);
  });
});
