import { createProject, createProjectWithApp } from '../support/fixtures.js';
import { operatorAuth } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { keysHarness } from '../support/harness/keys.js';

describe('operator reads: projects, apps, workspaces and workspace keys', () => {
  const h = keysHarness();

  it('lists projects newest first with a startingAfter cursor and hasMore', async () => {
    const { t } = h;
    const ids = [await createProject(t, 'P1'), await createProject(t, 'P2'), await createProject(t, 'P3')];
    const first = await t.http.get('/admin/v1/projects?limit=2').set(operatorAuth());
    expect(first.status).toBe(200);
    expect(first.body.object).toBe('list');
    expect(first.body.data).toHaveLength(2);
    expect(first.body.hasMore).toBe(true);
    expect(first.body.data[0]).toEqual({
      object: 'project',
      id: expect.stringMatching(/^proj_/),
      name: expect.any(String),
      archived: false,
      createdAt: expect.any(Number),
    });
    // Walk every page: each project once, the newest three in creation order reversed.
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await t.http.get(`/admin/v1/projects?limit=2${after ? `&startingAfter=${after}` : ''}`).set(operatorAuth());
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((p: { id: string }) => p.id));
      if (!page.body.hasMore) break;
      after = page.body.data.at(-1).id;
    }
    expect(new Set(seen).size).toBe(seen.length);
    const positions = ids.map((id) => seen.indexOf(id));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect(positions[2]).toBeLessThan(positions[1]);
    expect(positions[1]).toBeLessThan(positions[0]);
  });

  it('validates limit and startingAfter', async () => {
    const { t } = h;
    for (const q of ['limit=0', 'limit=101', 'limit=abc', 'startingAfter=proj_nope']) {
      const res = await t.http.get(`/admin/v1/projects?${q}`).set(operatorAuth());
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toContain(q.split('=')[0]);
    }
  });

  it("lists a project's apps as GET /admin/v1/apps/{appId} answers each, secret keys without plaintext", async () => {
    const { t, web } = h;
    await createProjectWithApp(t, { platform: 'ios', projectId: web.projectId });
    const res = await t.http.get(`/admin/v1/projects/${web.projectId}/apps`).set(operatorAuth());
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    for (const app of res.body.data) {
      const one = await t.http.get(`/admin/v1/apps/${app.id}`).set(operatorAuth());
      expect(app).toEqual(one.body);
      expect(app.keys).toHaveLength(4);
      for (const key of app.keys) if (key.kind === 'secret') expect(key.key).toBeUndefined();
    }
    await t.http.post(`/admin/v1/keys/${web.keyIds.skLive}/revoke`).set(operatorAuth());
    const after = await t.http.get(`/admin/v1/projects/${web.projectId}/apps`).set(operatorAuth());
    const webApp = after.body.data.find((a: { id: string }) => a.id === web.appId);
    expect(webApp.keys.find((k: { id: string }) => k.id === web.keyIds.skLive).status).toBe('revoked');
  });

  it('an unknown project or workspace is 404 resource_missing; a key without the operator token is 401', async () => {
    const { t, web } = h;
    expectError(await t.http.get('/admin/v1/projects/proj_nope/apps').set(operatorAuth()), 404, 'resource_missing');
    expectError(await t.http.get('/admin/v1/workspaces/ws_nope/keys').set(operatorAuth()), 404, 'resource_missing');
    expect((await t.http.get('/admin/v1/projects').set({ Authorization: `Bearer ${web.keys.skLive}` })).status).toBe(401);
  });

  it('lists workspaces with their projects and their keys without plaintext', async () => {
    const { t, web } = h;
    const ws = await t.http.post('/admin/v1/workspaces').set(operatorAuth()).send({ name: 'Acme' });
    await t.http.post(`/admin/v1/workspaces/${ws.body.id}/projects/${web.projectId}`).set(operatorAuth());
    const minted = await t.http.post(`/admin/v1/workspaces/${ws.body.id}/keys`).set(operatorAuth()).send({ name: 'cli' });
    expect(minted.status).toBe(201);
    const list = await t.http.get('/admin/v1/workspaces').set(operatorAuth());
    expect(list.status).toBe(200);
    expect(list.body.data.find((w: { id: string }) => w.id === ws.body.id)).toEqual({
      object: 'workspace',
      id: ws.body.id,
      name: 'Acme',
      projects: [web.projectId],
      createdAt: expect.any(Number),
    });
    const keys = await t.http.get(`/admin/v1/workspaces/${ws.body.id}/keys`).set(operatorAuth());
    expect(keys.status).toBe(200);
    expect(keys.body.data).toEqual([{ ...minted.body, key: undefined }].map(({ key: _key, ...rest }) => rest));
    expect(JSON.stringify(keys.body)).not.toContain(minted.body.key);
  });
});
