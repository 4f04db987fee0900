import { createProjectWithApp, WEB_ORIGIN, type ProjectFixture } from '../support/fixtures.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { tablesContaining } from '../support/plaintext-scan.js';
import { expectError } from '../support/expect-error.js';
import { keysHarness } from '../support/harness/keys.js';

describe('keys: operator API (projects, apps, keys, rate-limit overrides, OpenAPI)', () => {
  const h = keysHarness();
  let t: TestApp;
  let web: ProjectFixture;
  beforeAll(() => {
    ({ t, web } = h);
  });

  describe('operator: projects, apps and keys', () => {
    it('creates a project and reads it back', async () => {
      const created = await t.http.post('/admin/v1/projects').set(operatorAuth()).send({ name: 'Acme' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ object: 'project', id: expect.stringMatching(/^proj_/), name: 'Acme', archived: false, createdAt: expect.any(Number) });
      const read = await t.http.get(`/admin/v1/projects/${created.body.id}`).set(operatorAuth());
      expect(read.body).toEqual(created.body);
    });

    it('validates project and app bodies with the documented codes', async () => {
      expectError(await t.http.post('/admin/v1/projects').set(operatorAuth()).send({}), 400, 'missing_required_param');
      expectError(
        await t.http
          .post('/admin/v1/projects')
          .set(operatorAuth())
          .send({ name: 'x'.repeat(101) }),
        400,
        'invalid_param_value',
      );
      const ios = await t.http.post(`/admin/v1/projects/${web.projectId}/apps`).set(operatorAuth()).send({ name: 'i', platform: 'ios' });
      expectError(ios, 400, 'missing_required_param');
      expect(ios.body.error.message).toContain('bundleId');
      const badOrigin = await t.http
        .post(`/admin/v1/projects/${web.projectId}/apps`)
        .set(operatorAuth())
        .send({ name: 'w', platform: 'web', allowedOrigins: ['https://ok.example.com', 'not an origin'] });
      expectError(badOrigin, 400, 'invalid_param_value');
      expect(badOrigin.body.error.message).toContain('allowedOrigins');
      expectError(
        await t.http.post(`/admin/v1/projects/${web.projectId}/apps`).set(operatorAuth()).send({ name: 'x', platform: 'tv' }),
        400,
        'invalid_param_value',
      );
    });

    it('unknown ids are 404 resource_missing', async () => {
      expectError(await t.http.get('/admin/v1/projects/proj_nope').set(operatorAuth()), 404, 'resource_missing');
      expectError(await t.http.get('/admin/v1/apps/app_nope').set(operatorAuth()), 404, 'resource_missing');
      expectError(await t.http.post('/admin/v1/keys/key_nope/revoke').set(operatorAuth()), 404, 'resource_missing');
      expectError(await t.http.post('/admin/v1/projects/proj_nope/apps').set(operatorAuth()).send({ name: 'a', platform: 'web' }), 404, 'resource_missing');
    });

    it('mints four keys of the documented formats; secret plaintext only once', async () => {
      const projectId = (await t.http.post('/admin/v1/projects').set(operatorAuth()).send({ name: 'Fmt' })).body.id;
      const res = await t.http
        .post(`/admin/v1/projects/${projectId}/apps`)
        .set(operatorAuth())
        .send({ name: 'Web', platform: 'web', allowedOrigins: [WEB_ORIGIN] });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(
        expect.objectContaining({ object: 'app', id: expect.stringMatching(/^app_/), projectId, platform: 'web', allowedOrigins: [WEB_ORIGIN] }),
      );
      expect(res.body.keys).toHaveLength(4);
      const byKind = (kind: string, env: string) => res.body.keys.find((k: any) => k.kind === kind && k.env === env);
      expect(byKind('publishable', 'sandbox').key).toMatch(/^cd_pub_test_[A-Za-z0-9]{32}$/);
      expect(byKind('publishable', 'production').key).toMatch(/^cd_pub_live_[A-Za-z0-9]{32}$/);
      expect(byKind('secret', 'sandbox').key).toMatch(/^cd_sk_test_[A-Za-z0-9]{32}$/);
      expect(byKind('secret', 'production').key).toMatch(/^cd_sk_live_[A-Za-z0-9]{32}$/);
      expect(byKind('secret', 'sandbox').scopes).toEqual(['reporting:aggregate', 'revenue:read', 'errors:read', 'buckets:read']);
      for (const key of res.body.keys) {
        expect(key).toEqual(
          expect.objectContaining({
            object: 'api_key',
            id: expect.stringMatching(/^key_/),
            appId: res.body.id,
            status: 'active',
            last4: key.key.slice(-4),
            createdAt: expect.any(Number),
          }),
        );
      }
      const again = await t.http.get(`/admin/v1/apps/${res.body.id}`).set(operatorAuth());
      expect(again.status).toBe(200);
      for (const key of again.body.keys) {
        if (key.kind === 'secret') {
          expect(key.key).toBeUndefined();
          expect(key.last4).toHaveLength(4);
        } else {
          expect(key.key).toMatch(/^cd_pub_/);
        }
      }
    });

    it('never stores a plaintext secret key anywhere in the database', async () => {
      const fixture = await createProjectWithApp(t);
      const rotated = await t.http.post(`/admin/v1/keys/${fixture.keyIds.skLive}/rotate`).set(operatorAuth()).send({});
      const secrets = [fixture.keys.skTest, fixture.keys.skLive, rotated.body.key.key];
      // Every row of every table, searched inside the database (the rail webhook specs scan for their secrets the same way).
      const scanned = await tablesContaining(t.dataSource, secrets);
      expect(scanned.length).toBeGreaterThan(0);
      for (const { table, hits } of scanned) expect({ table, hits }).toEqual({ table, hits: 0 });
      const [stored] = await t.dataSource.query(`SELECT secret_hash FROM api_keys WHERE id = $1`, [fixture.keyIds.skTest]);
      expect(stored.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    });
  });

  describe('rate-limit overrides', () => {
    it('returns the effective table and validates buckets', async () => {
      const f = await createProjectWithApp(t);
      const res = await t.http
        .put(`/admin/v1/projects/${f.projectId}/rate-limits`)
        .set(operatorAuth())
        .send({ events: { sustained: 5, burst: 50 } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        events: { sustained: 5, burst: 50 },
        purchases: { sustained: 10, burst: 100 },
        entitlements: { sustained: 100, burst: 1000 },
        heartbeat: { sustained: 1, burst: 10 },
        forget: { sustained: 1, burst: 10 },
        alias: { sustained: 10, burst: 100 },
        sourcemaps: { sustained: 0.5, burst: 60 },
        reads: { sustained: 20, burst: 100 },
        rail_reads_card_payments: { sustained: 20, burst: 20 },
        rail_reads_ios_store: { sustained: 10, burst: 10 },
        rail_reads_android_store: { sustained: 10, burst: 10 },
      });
      expectError(
        await t.http
          .put(`/admin/v1/projects/${f.projectId}/rate-limits`)
          .set(operatorAuth())
          .send({ bogus: { sustained: 1, burst: 1 } }),
        400,
        'invalid_param_value',
      );
      expectError(
        await t.http
          .put(`/admin/v1/projects/${f.projectId}/rate-limits`)
          .set(operatorAuth())
          .send({ events: { burst: 1 } }),
        400,
        'missing_required_param',
      );
      expectError(
        await t.http
          .put(`/admin/v1/projects/${f.projectId}/rate-limits`)
          .set(operatorAuth())
          .send({ events: { sustained: 0, burst: 1 } }),
        400,
        'invalid_param_value',
      );
      expectError(await t.http.put('/admin/v1/projects/proj_nope/rate-limits').set(operatorAuth()).send({}), 404, 'resource_missing');
    });

    it("concurrent replacements of one project's overrides all succeed; the last one wins whole", async () => {
      const f = await createProjectWithApp(t);
      const bodies = Array.from({ length: 8 }, (_, i) => ({ events: { sustained: 10 + i, burst: 100 }, alias: { sustained: 1, burst: 5 } }));
      const results = await Promise.all(bodies.map((body) => t.http.put(`/admin/v1/projects/${f.projectId}/rate-limits`).set(operatorAuth()).send(body)));
      expect(results.map((r) => r.status)).toEqual(bodies.map(() => 200));
      const rows = await t.dataSource.query(`SELECT bucket FROM project_rate_limits WHERE project_id = $1 ORDER BY bucket`, [f.projectId]);
      expect(rows.map((r: { bucket: string }) => r.bucket)).toEqual(['alias', 'events']);
    });
  });

  describe('OpenAPI', () => {
    it('documents the operator API under its own tag with its bearer scheme', async () => {
      const doc = (await t.http.get('/docs/json')).body;
      for (const path of [
        '/admin/v1/projects',
        '/admin/v1/projects/{projectId}/apps',
        '/admin/v1/apps/{appId}',
        '/admin/v1/keys/{keyId}/rotate',
        '/admin/v1/keys/{keyId}/revoke',
        '/admin/v1/projects/{projectId}/key-activity',
        '/admin/v1/projects/{projectId}/rate-limits',
      ]) {
        const ops = Object.values<any>(doc.paths[path]);
        for (const op of ops) {
          expect(op.tags).toContain('operator');
          expect(op.security).toEqual(expect.arrayContaining([{ operatorToken: [] }]));
        }
      }
      expect(doc.paths['/v1/config'].get.security).toEqual(expect.arrayContaining([{ apiKeyBearer: [] }, { apiKeyHeader: [] }]));
    });
  });
});
