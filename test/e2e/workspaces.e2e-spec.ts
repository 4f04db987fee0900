import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';

/**
 * Workspaces and workspace keys (operator API), the key guard's workspace rules, the read
 * envelope, the reads bucket, and the public CLI's workspace calls (`projects list`,
 * `apps list`, `projects create`, `apps create`, `init`), sent as the CLI sends them.
 */

/** What the public CLI sends (oauth/api.ts): the workspace token as a bearer, JSON. */
function cli(key: string, body = false): Record<string, string> {
  return { Authorization: `Bearer ${key}`, Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) };
}

describe('workspaces: operator API, workspace keys, workspace reads and the CLI', () => {
  let t: TestApp;
  let a: ProjectFixture;
  let b: ProjectFixture;
  let outside: ProjectFixture;
  let workspaceId: string;
  let wk: string;
  let wkId: string;

  const op = () => operatorAuth();

  beforeAll(async () => {
    t = await createTestApp();
    a = await createProjectWithApp(t);
    b = await createProjectWithApp(t, { platform: 'ios' });
    outside = await createProjectWithApp(t);
    const ws = await t.http.post('/admin/v1/workspaces').set(op()).send({ name: 'Acme' });
    expect(ws.status).toBe(201);
    expect(ws.body).toEqual({ object: 'workspace', id: expect.stringMatching(/^ws_/), name: 'Acme', projects: [] });
    workspaceId = ws.body.id;
    for (const f of [a, b]) {
      const added = await t.http.post(`/admin/v1/workspaces/${workspaceId}/projects/${f.projectId}`).set(op());
      expect(added.status).toBe(200);
    }
    const key = await t.http.post(`/admin/v1/workspaces/${workspaceId}/keys`).set(op()).send({ name: 'assistant' });
    expect(key.status).toBe(201);
    wk = key.body.key;
    wkId = key.body.id;
  });
  afterAll(async () => t.close());

  describe('operator', () => {
    it('a workspace lists its projects; adding one twice is idempotent; unknown ids are 404', async () => {
      const again = await t.http.post(`/admin/v1/workspaces/${workspaceId}/projects/${a.projectId}`).set(op());
      expect(again.body).toEqual({ object: 'workspace', id: workspaceId, name: 'Acme', projects: [a.projectId, b.projectId] });
      expectError(await t.http.post(`/admin/v1/workspaces/ws_nope/projects/${a.projectId}`).set(op()), 404, 'resource_missing');
      expectError(await t.http.post(`/admin/v1/workspaces/${workspaceId}/projects/proj_nope`).set(op()), 404, 'resource_missing');
      expectError(await t.http.post('/admin/v1/workspaces').set(op()).send({}), 400, 'missing_required_param');
      expect((await t.http.post('/admin/v1/workspaces').send({ name: 'x' })).status).toBe(401);
    });

    it('a workspace key is shown once, stored as SHA-256 only, with the aggregate scopes by default', async () => {
      expect(wk).toMatch(/^cd_wk_[A-Za-z0-9]{32}$/);
      const [row] = await t.dataSource.query(`SELECT secret_hash, last4, scopes, status FROM workspace_keys WHERE id = $1`, [wkId]);
      expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(row.secret_hash).not.toContain(wk);
      expect(row.last4).toBe(wk.slice(-4));
      expect(row.scopes).toEqual(['reporting:aggregate', 'revenue:read', 'errors:read', 'buckets:read']);
      const all = JSON.stringify(await t.dataSource.query(`SELECT * FROM workspace_keys`));
      expect(all).not.toContain(wk);
      const bad = await t.http
        .post(`/admin/v1/workspaces/${workspaceId}/keys`)
        .set(op())
        .send({ scopes: ['everything'] });
      expectError(bad, 400, 'invalid_param_value');
    });
  });

  describe('GET /v1/workspace/projects (the CLI’s projects list, login and whoami)', () => {
    it('a workspace key: every project of its workspace with platforms, in the envelope, private no-store', async () => {
      const res = await t.http.get('/v1/workspace/projects').set(cli(wk));
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.body).toEqual({
        object: 'workspace_projects',
        data: {
          projects: [
            { project: a.projectId, id: a.projectId, name: 'Test project', platforms: ['web'] },
            { project: b.projectId, id: b.projectId, name: 'Test project', platforms: ['ios'] },
          ],
        },
        meta: { project: null, env: 'production', generatedAt: expect.any(Number), coverage: {} },
      });
    });

    it('a secret key: its own project; project= naming another is 403 project_not_allowed; a publishable key 401', async () => {
      const own = await t.http.get('/v1/workspace/projects').set(keyHeaders(a, a.keys.skLive));
      expect(own.body.data.projects.map((p: any) => p.project)).toEqual([a.projectId]);
      expect(own.body.meta).toMatchObject({ project: a.projectId, env: 'production' });
      const named = await t.http.get('/v1/workspace/projects').query({ project: a.projectId }).set(keyHeaders(a, a.keys.skTest));
      expect(named.status).toBe(200);
      expectError(await t.http.get('/v1/workspace/projects').query({ project: b.projectId }).set(keyHeaders(a, a.keys.skTest)), 403, 'project_not_allowed');
      expectError(await t.http.get('/v1/workspace/projects').set(keyHeaders(a, a.keys.pubTest)), 401, 'invalid_api_key');
    });

    it('a workspace key naming a project outside its workspace: 403 project_not_allowed; a bad env: 400', async () => {
      expectError(await t.http.get('/v1/workspace/projects').query({ project: outside.projectId }).set(cli(wk)), 403, 'project_not_allowed');
      const env = await t.http.get('/v1/workspace/projects').query({ env: 'staging' }).set(cli(wk));
      expectError(env, 400, 'invalid_param_value');
      expect(env.body.error.message).toMatch(/env/);
      const sandbox = await t.http.get('/v1/workspace/projects').query({ env: 'sandbox', project: b.projectId }).set(cli(wk));
      expect(sandbox.body.meta).toMatchObject({ project: b.projectId, env: 'sandbox' });
      expect(sandbox.body.data.projects.map((p: any) => p.project)).toEqual([b.projectId]);
    });

    it('an unknown workspace key: 401 invalid_api_key; not accepted where workspace keys are not (heartbeat)', async () => {
      expectError(await t.http.get('/v1/workspace/projects').set(cli('cd_wk_UnknownUnknownUnknownUnknown00')), 401, 'invalid_api_key');
      expectError(await t.http.get('/v1/sdk/heartbeat').set(cli(wk)), 401, 'invalid_api_key');
    });
  });

  describe('GET /v1/workspace/coverage', () => {
    it('every project with its surfaces; nothing instrumented is not_instrumented with since null', async () => {
      const res = await t.http.get('/v1/workspace/coverage').set(cli(wk));
      expect(res.status).toBe(200);
      expect(res.body.object).toBe('workspace_coverage');
      expect(res.body.data.projects.map((p: any) => p.project)).toEqual([a.projectId, b.projectId]);
      for (const p of res.body.data.projects) {
        expect(p.coverage).toEqual({
          revenue: { state: 'not_instrumented', since: null },
          errors: { state: 'not_instrumented', since: null },
          analytics: { state: 'not_instrumented', since: null },
          readCost: { state: 'not_instrumented', since: null },
          userCensus: { state: 'not_instrumented', since: null },
        });
      }
    });

    it('a customer in the environment read makes userCensus measured, only there', async () => {
      await t.http.post('/v1/identify').set(keyHeaders(a, a.keys.pubLive)).send({ userId: 'census_user', anonymousId: 'census_anon' });
      const live = await t.http.get('/v1/workspace/coverage').query({ project: a.projectId }).set(cli(wk));
      expect(live.body.data.projects).toEqual([
        { project: a.projectId, coverage: expect.objectContaining({ userCensus: { state: 'measured', since: null } }) },
      ]);
      const sandbox = await t.http.get('/v1/workspace/coverage').query({ project: a.projectId, env: 'sandbox' }).set(cli(wk));
      expect(sandbox.body.data.projects[0].coverage.userCensus).toEqual({ state: 'not_instrumented', since: null });
    });
  });

  describe('the CLI: apps list, projects create, apps create (workspace:write)', () => {
    it('GET /v1/workspace/apps lists every app with its publishable keys; project= narrows it', async () => {
      const res = await t.http.get('/v1/workspace/apps').set(cli(wk));
      expect(res.status).toBe(200);
      expect(res.body.data.apps).toEqual([
        {
          appId: a.appId,
          project: a.projectId,
          platform: 'web',
          publishableKeyLive: a.keys.pubLive,
          publishableKeyTest: a.keys.pubTest,
          allowedOrigins: expect.any(Array),
        },
        { appId: b.appId, project: b.projectId, platform: 'ios', publishableKeyLive: b.keys.pubLive, publishableKeyTest: b.keys.pubTest, allowedOrigins: [] },
      ]);
      const narrowed = await t.http.get('/v1/workspace/apps').query({ project: b.projectId }).set(cli(wk));
      expect(narrowed.body.data.apps.map((x: any) => x.appId)).toEqual([b.appId]);
    });

    it('without workspace:write: 403 insufficient_scope before anything is written; a secret key: 401', async () => {
      const res = await t.http.post('/v1/projects').set(cli(wk, true)).send({ name: 'Nope' });
      expectError(res, 403, 'insufficient_scope');
      expect(res.body.error.message).toMatch(/workspace:write/);
      expectError(await t.http.post('/v1/projects').set(keyHeaders(a, a.keys.skTest)).send({ name: 'Nope' }), 401, 'invalid_api_key');
    });

    it('init: POST /v1/projects then POST /v1/apps, as the CLI sends them; the new project joins the workspace', async () => {
      const writer = await t.http
        .post(`/admin/v1/workspaces/${workspaceId}/keys`)
        .set(op())
        .send({ scopes: ['workspace:write', 'reporting:aggregate'] });
      const key = writer.body.key as string;
      const proj = await t.http.post('/v1/projects').set(cli(key, true)).send({ name: 'My App' });
      expect(proj.status).toBe(201);
      expect(proj.body).toMatchObject({ object: 'project', data: { project: { name: 'My App', businessModel: null } } });
      const projectId = proj.body.data.project.project;
      expect(projectId).toMatch(/^proj_/);
      const app = await t.http.post('/v1/apps').set(cli(key, true)).send({ projectId, platform: 'web', domain: 'myapp.example.com' });
      expect(app.status).toBe(201);
      expect(app.body.data.app).toEqual({
        appId: expect.stringMatching(/^app_/),
        project: projectId,
        platform: 'web',
        publishableKeyLive: expect.stringMatching(/^cd_pub_live_/),
        publishableKeyTest: expect.stringMatching(/^cd_pub_test_/),
        allowedOrigins: ['https://myapp.example.com'],
      });
      // The CLI's next call sees it (this replica's cache was cleared).
      const listed = await t.http.get('/v1/workspace/projects').set(cli(wk));
      expect(listed.body.data.projects.map((p: any) => p.project)).toContain(projectId);
      // An app in a project outside the workspace: 403 project_not_allowed; a bad body names the field.
      expectError(await t.http.post('/v1/apps').set(cli(key, true)).send({ projectId: outside.projectId, platform: 'web' }), 403, 'project_not_allowed');
      const bad = await t.http.post('/v1/apps').set(cli(key, true)).send({ projectId, platform: 'desktop' });
      expectError(bad, 400, 'invalid_param_value');
      expect(bad.body.error.message).toMatch(/platform/);
    });
  });

  describe('the reads bucket and revocation', () => {
    it('20/s burst 100 per project and key by default; the project override applies; another key has its own bucket', async () => {
      const small = await createProjectWithApp(t);
      await t.http.post(`/admin/v1/workspaces/${workspaceId}/projects/${small.projectId}`).set(op());
      await setRateLimits(t, small.projectId, { reads: { sustained: 1, burst: 2 } });
      const read = (key: string) => t.http.get('/v1/workspace/apps').query({ project: small.projectId }).set(cli(key));
      expect((await read(wk)).status).toBe(200);
      expect((await read(wk)).status).toBe(200);
      const limited = await read(wk);
      expectError(limited, 429, 'rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const other = await t.http.post(`/admin/v1/workspaces/${workspaceId}/keys`).set(op()).send({});
      expect((await read(other.body.key)).status).toBe(200);
    });

    it('a revoked workspace key: the next request is 401 key_revoked', async () => {
      const extra = await t.http.post(`/admin/v1/workspaces/${workspaceId}/keys`).set(op()).send({});
      expect((await t.http.get('/v1/workspace/projects').set(cli(extra.body.key))).status).toBe(200);
      const revoked = await t.http.post(`/admin/v1/workspace-keys/${extra.body.id}/revoke`).set(op());
      expect(revoked.status).toBe(200);
      expect(revoked.body).toMatchObject({ object: 'workspace_key', id: extra.body.id, status: 'revoked' });
      expect(revoked.body.key).toBeUndefined();
      expectError(await t.http.get('/v1/workspace/projects').set(cli(extra.body.key)), 401, 'key_revoked');
      expectError(await t.http.post('/admin/v1/workspace-keys/key_nope/revoke').set(op()), 404, 'resource_missing');
    });
  });

  describe('archived projects', () => {
    it('adding an archived project to a workspace: 400 invalid_param_value naming it; nothing added', async () => {
      const archived = await createProjectWithApp(t);
      expect((await t.http.post(`/admin/v1/projects/${archived.projectId}/archive`).set(op())).status).toBe(200);
      const ws = (await t.http.post('/admin/v1/workspaces').set(op()).send({ name: 'Archive' })).body.id as string;
      const res = await t.http.post(`/admin/v1/workspaces/${ws}/projects/${archived.projectId}`).set(op());
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toContain(archived.projectId);
      expect(res.body.error.message).toMatch(/archived/);
      const listed = await t.http.get('/admin/v1/workspaces').set(op());
      expect(listed.body.data.find((w: { id: string }) => w.id === ws)).toEqual(expect.objectContaining({ projects: [] }));
    });

    it('a project archived after it joined: its workspace key is answered as for a project it cannot see, on reads and writes', async () => {
      const kept = await createProjectWithApp(t);
      const gone = await createProjectWithApp(t);
      const ws = (await t.http.post('/admin/v1/workspaces').set(op()).send({ name: 'Later' })).body.id as string;
      for (const f of [kept, gone]) expect((await t.http.post(`/admin/v1/workspaces/${ws}/projects/${f.projectId}`).set(op())).status).toBe(200);
      const key = (
        await t.http
          .post(`/admin/v1/workspaces/${ws}/keys`)
          .set(op())
          .send({ scopes: ['reporting:aggregate', 'workspace:write'] })
      ).body.key as string;
      expect((await t.http.get('/v1/customers').query({ project: gone.projectId }).set(cli(key))).status).toBe(200);

      expect((await t.http.post(`/admin/v1/projects/${gone.projectId}/archive`).set(op())).status).toBe(200);
      // The project's own keys are refused; the workspace key no longer reaches it either.
      expect((await t.http.get('/v1/customers').set(keyHeaders(gone, gone.keys.skTest))).status).toBe(401);
      const unseen = await t.http.get('/v1/customers').query({ project: outside.projectId }).set(cli(key));
      expectError(unseen, 403, 'project_not_allowed');
      for (const path of ['/v1/customers', '/v1/workspace/projects', '/v1/workspace/coverage', '/v1/workspace/apps']) {
        const res = await t.http.get(path).query({ project: gone.projectId }).set(cli(key));
        expectError(res, 403, 'project_not_allowed');
        expect(res.body.error.message).toBe(unseen.body.error.message.replace(outside.projectId, gone.projectId));
      }
      const listed = await t.http.get('/v1/workspace/projects').set(cli(key));
      expect(listed.body.data.projects.map((p: any) => p.project)).toEqual([kept.projectId]);
      const app = await t.http.post('/v1/apps').set(cli(key, true)).send({ projectId: gone.projectId, platform: 'web' });
      expectError(app, 403, 'project_not_allowed');
      expect((await t.http.get('/v1/customers').query({ project: kept.projectId }).set(cli(key))).status).toBe(200);
    });
  });
});
