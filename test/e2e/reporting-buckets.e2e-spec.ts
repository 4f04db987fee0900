import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { bearer, expectNamedError, secretKeyWithScopes } from '../support/read-api.js';

/** Bucket reports (the buckets-oss reporter's body) and the read-cost read. */
describe('bucket reports and GET /v1/buckets', () => {
  let t: TestApp;
  let web: ProjectFixture;
  let ios: ProjectFixture;
  let today: string;

  beforeAll(async () => {
    t = await createTestApp();
    web = await createProjectWithApp(t);
    ios = await createProjectWithApp(t, { platform: 'ios' });
    today = new Date(t.clock.nowMs()).toISOString().slice(0, 10);
  });
  afterAll(async () => t.close());

  it('before any report the read cost is not_instrumented with null figures', async () => {
    const res = await t.http.get('/v1/buckets').set(bearer(web.keys.skTest));
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.body.object).toBe('read_cost');
    expect(res.body.data).toEqual({
      reads: null,
      writes: null,
      deletes: null,
      perUserReads: null,
      overheadReads: null,
      attributedActors: null,
      byOperation: null,
    });
    expect(res.body.meta.coverage.readCost).toEqual({ state: 'not_instrumented', since: null });
  });

  it('a report is 202; a later one for the same date and key replaces it; per-user and overhead reads come from byActor', async () => {
    const first = await t.http
      .post('/v1/buckets/report')
      .set(bearer(web.keys.skTest))
      .send({ date: today, byLabel: { 'home-feed': { read: 5000 } } });
    expect(first.status).toBe(202);
    const second = await t.http
      .post('/v1/buckets/report')
      .set(bearer(web.keys.skTest))
      .send({
        date: today,
        byLabel: { 'home-feed': { read: 4120, write: 3 }, 'col:posts': { read: 217, delete: 1, 'openai.tokens': 9 } },
        byHour: { '07': { read: 1200 }, '08': { read: 3137 } },
        byMinute: { '0845': { read: 10 } },
        byActor: { user_1: { read: 300 }, user_2: { read: 100 }, anonymous: { read: 3937 } },
        byActorLabel: { 'user_1␟home-feed': { read: 300 } },
        extra: 'ignored',
      });
    expect(second.status).toBe(202);
    // Another key (the browser's publishable key) reports on its own.
    const browser = await t.http
      .post('/v1/buckets/report')
      .set(keyHeaders(web, web.keys.pubTest))
      .send({ date: today, byLabel: { 'home-feed': { read: 10 } }, byActor: { user_1: { read: 10 } } });
    expect(browser.status).toBe(202);

    const res = await t.http.get('/v1/buckets?days=7').set(bearer(web.keys.skTest));
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      reads: 4347,
      writes: 3,
      deletes: 1,
      perUserReads: 410,
      overheadReads: 3937,
      attributedActors: 2,
      byOperation: [
        { label: 'home-feed', reads: 4130 },
        { label: 'col:posts', reads: 217 },
      ],
    });
    expect(res.body.meta.coverage.readCost.state).toBe('measured');
    expect(res.body.meta.project).toBe(web.projectId);
  });

  it('bounds and shapes are 400 or 413 naming the field', async () => {
    const send = (body: unknown) =>
      t.http
        .post('/v1/buckets/report')
        .set(bearer(web.keys.skTest))
        .send(body as object);
    expectNamedError(await send({ byLabel: {} }), 400, 'missing_required_param', /date/);
    expectNamedError(await send({ date: '2026-02-30', byLabel: {} }), 400, 'invalid_param_value', /date/);
    expectNamedError(await send({ date: today }), 400, 'missing_required_param', /byLabel/);
    expectNamedError(await send({ date: today, byLabel: { a: { read: -1 } } }), 400, 'invalid_param_value', /byLabel\.a\.read/);
    expectNamedError(await send({ date: today, byLabel: {}, byHour: { '24': { read: 1 } } }), 400, 'invalid_param_value', /byHour/);
    const labels = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`l${i}`, { read: 1 }]));
    expectNamedError(await send({ date: today, byLabel: labels }), 413, 'invalid_param_value', /byLabel/);
  });

  it('keys: an iOS publishable key is refused; reads need buckets:read; publishable keys cannot read', async () => {
    const refused = await t.http.post('/v1/buckets/report').set(keyHeaders(ios, ios.keys.pubTest)).send({ date: today, byLabel: {} });
    expectError(refused, 401, 'invalid_api_key');
    expectError(await t.http.get('/v1/buckets').set(keyHeaders(web, web.keys.pubTest)), 401, 'invalid_api_key');
    expectNamedError(await t.http.get('/v1/buckets?days=91').set(bearer(web.keys.skTest)), 400, 'invalid_param_value', /days/);
    const narrow = await secretKeyWithScopes(t, web.keyIds.skLive, ['errors:read']);
    expectNamedError(await t.http.get('/v1/buckets').set(bearer(narrow)), 403, 'insufficient_scope', /buckets:read/);
  });

  it('a workspace key reads a project of its workspace by project= (required), in the environment it names', async () => {
    const ws = await t.http.post('/admin/v1/workspaces').set(operatorAuth()).send({ name: 'Buckets' });
    await t.http.post(`/admin/v1/workspaces/${ws.body.id}/projects/${web.projectId}`).set(operatorAuth());
    const wk = (await t.http.post(`/admin/v1/workspaces/${ws.body.id}/keys`).set(operatorAuth()).send({})).body.key;
    expectNamedError(await t.http.get('/v1/buckets').set(bearer(wk)), 400, 'missing_required_param', /project/);
    const res = await t.http.get(`/v1/buckets?project=${web.projectId}&env=sandbox&days=7`).set(bearer(wk));
    expect(res.status).toBe(200);
    expect(res.body.data.reads).toBe(4347);
    expect(res.body.meta).toEqual(expect.objectContaining({ project: web.projectId, env: 'sandbox' }));
    const production = await t.http.get(`/v1/buckets?project=${web.projectId}`).set(bearer(wk));
    expect(production.body.data.reads).toBeNull();
    expectError(await t.http.get(`/v1/buckets?project=${ios.projectId}`).set(bearer(wk)), 403, 'project_not_allowed');
  });

  it('reads charge the reads bucket: past it 429 rate_limited', async () => {
    await setRateLimits(t, ios.projectId, { reads: { sustained: 0.001, burst: 1 } });
    expect((await t.http.get('/v1/buckets').set(bearer(ios.keys.skTest))).status).toBe(200);
    expectError(await t.http.get('/v1/buckets').set(bearer(ios.keys.skTest)), 429, 'rate_limited');
  });
});
