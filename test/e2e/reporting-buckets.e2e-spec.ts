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

  it('a report is 202; a later one for the same date and key adds to it; per-user and overhead reads come from byActor', async () => {
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
      reads: 9347,
      writes: 3,
      deletes: 1,
      perUserReads: 410,
      overheadReads: 8937,
      attributedActors: 2,
      byOperation: [
        { label: 'home-feed', reads: 9130 },
        { label: 'col:posts', reads: 217 },
      ],
    });
    expect(res.body.meta.coverage.readCost.state).toBe('measured');
    expect(res.body.meta.project).toBe(web.projectId);
  });

  it('flush windows of one key and day add up, their hours, slots and actor labels too; other days stay apart', async () => {
    const app = await createProjectWithApp(t);
    const yesterday = new Date(t.clock.nowMs() - 86_400_000).toISOString().slice(0, 10);
    const report = (date: string, body: Record<string, unknown>) =>
      t.http
        .post('/v1/buckets/report')
        .set(bearer(app.keys.skTest))
        .send({ date, ...body });
    const windows = [
      {
        byLabel: { feed: { read: 10, write: 1 } },
        byHour: { '07': { read: 10 } },
        byActor: { u1: { read: 6 }, anonymous: { read: 4 } },
        byActorLabel: { 'u1␟feed': { read: 6 } },
      },
      { byLabel: { feed: { read: 5 }, posts: { read: 7, delete: 2 } }, byHour: { '07': { read: 2 }, '08': { read: 10 } }, byMinute: { '0800': { read: 3 } } },
      { byLabel: { posts: { read: 3 } }, byActor: { u1: { read: 1 }, u2: { read: 2 } }, byActorLabel: { 'u1␟feed': { read: 1 }, 'u2␟posts': { read: 2 } } },
    ];
    for (const body of windows) expect((await report(today, body)).status).toBe(202);
    expect((await report(yesterday, { byLabel: { feed: { read: 100 } } })).status).toBe(202);

    const day = await t.http.get('/v1/buckets?days=1').set(bearer(app.keys.skTest));
    expect(day.body.data).toEqual({
      reads: 25,
      writes: 1,
      deletes: 2,
      perUserReads: 9,
      overheadReads: 16,
      attributedActors: 2,
      byOperation: [
        { label: 'feed', reads: 15 },
        { label: 'posts', reads: 10 },
      ],
    });
    const twoDays = await t.http.get('/v1/buckets?days=2').set(bearer(app.keys.skTest));
    expect(twoDays.body.data.reads).toBe(125);

    const [row] = await t.dataSource.query(
      `SELECT reads, by_hour, by_minute, by_actor_label FROM bucket_reports WHERE project_id = $1 AND env = 'sandbox' AND report_date = $2::date`,
      [app.projectId, today],
    );
    expect(Number(row.reads)).toBe(25);
    expect(row.by_hour).toEqual({ '07': { read: 12, write: 0, delete: 0 }, '08': { read: 10, write: 0, delete: 0 } });
    expect(row.by_minute).toEqual({ '0800': { read: 3, write: 0, delete: 0 } });
    expect(row.by_actor_label).toEqual({ 'u1␟feed': { read: 7, write: 0, delete: 0 }, 'u2␟posts': { read: 2, write: 0, delete: 0 } });
  });

  it('a report retried with the same Idempotency-Key is added once; another key adds; the same key with another body is 400', async () => {
    const app = await createProjectWithApp(t);
    const body = { date: today, byLabel: { feed: { read: 40 } }, byActor: { u1: { read: 40 } } };
    const send = (key: string, b: object = body) =>
      t.http
        .post('/v1/buckets/report')
        .set({ ...bearer(app.keys.skTest), 'Idempotency-Key': key })
        .send(b);
    const first = await send('flush-1');
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ object: 'bucket_report', date: today });
    const retry = await send('flush-1');
    expect(retry.status).toBe(202);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect((await send('flush-2')).status).toBe(202);
    expectError(await send('flush-1', { date: today, byLabel: { feed: { read: 41 } } }), 400, 'idempotency_key_in_use');

    const res = await t.http.get('/v1/buckets?days=1').set(bearer(app.keys.skTest));
    expect(res.body.data).toEqual(expect.objectContaining({ reads: 80, perUserReads: 80, attributedActors: 1, byOperation: [{ label: 'feed', reads: 80 }] }));
  });

  it('reports sent at once all count, with and without an Idempotency-Key', async () => {
    const app = await createProjectWithApp(t);
    await setRateLimits(t, app.projectId, { events: { sustained: 10_000, burst: 10_000 } });
    const send = (i: number) =>
      t.http
        .post('/v1/buckets/report')
        .set(i % 2 === 0 ? bearer(app.keys.skTest) : { ...bearer(app.keys.skTest), 'Idempotency-Key': `window-${i}` })
        .send({
          date: today,
          byLabel: { feed: { read: 1 }, [`l${i % 3}`]: { read: 1 } },
          byHour: { '09': { read: 2 } },
          byActor: { [`u${i % 4}`]: { read: 2 } },
        });
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => send(i)));
    expect(answers.map((r) => r.status)).toEqual(Array(16).fill(202));

    const res = await t.http.get('/v1/buckets?days=1').set(bearer(app.keys.skTest));
    expect(res.body.data).toEqual(expect.objectContaining({ reads: 32, perUserReads: 32, attributedActors: 4 }));
    expect(res.body.data.byOperation[0]).toEqual({ label: 'feed', reads: 16 });
    const [row] = await t.dataSource.query(`SELECT by_hour FROM bucket_reports WHERE project_id = $1 AND env = 'sandbox'`, [app.projectId]);
    expect(row.by_hour['09'].read).toBe(32);
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
    expect(res.body.data.reads).toBe(9347);
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
