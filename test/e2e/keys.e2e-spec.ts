import { createProjectWithApp, keyHeaders, setRateLimits, WEB_ORIGIN, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';

const SEVEN_DAYS = 7 * 24 * 3600;

function expectError(res: { status: number; body: any; headers: Record<string, string> }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
}

describe('keys: operator API, authentication, locks, config and heartbeat', () => {
  let t: TestApp;
  let web: ProjectFixture;

  beforeAll(async () => {
    t = await createTestApp();
    web = await createProjectWithApp(t);
  });
  afterAll(async () => t.close());

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
      expectError(await t.http.post('/admin/v1/projects').set(operatorAuth()).send({ name: 'x'.repeat(101) }), 400, 'invalid_param_value');
      const ios = await t.http.post(`/admin/v1/projects/${web.projectId}/apps`).set(operatorAuth()).send({ name: 'i', platform: 'ios' });
      expectError(ios, 400, 'missing_required_param');
      expect(ios.body.error.message).toContain('bundleId');
      const badOrigin = await t.http.post(`/admin/v1/projects/${web.projectId}/apps`).set(operatorAuth()).send({ name: 'w', platform: 'web', allowedOrigins: ['https://ok.example.com', 'not an origin'] });
      expectError(badOrigin, 400, 'invalid_param_value');
      expect(badOrigin.body.error.message).toContain('allowedOrigins');
      expectError(await t.http.post(`/admin/v1/projects/${web.projectId}/apps`).set(operatorAuth()).send({ name: 'x', platform: 'tv' }), 400, 'invalid_param_value');
    });

    it('unknown ids are 404 resource_missing', async () => {
      expectError(await t.http.get('/admin/v1/projects/proj_nope').set(operatorAuth()), 404, 'resource_missing');
      expectError(await t.http.get('/admin/v1/apps/app_nope').set(operatorAuth()), 404, 'resource_missing');
      expectError(await t.http.post('/admin/v1/keys/key_nope/revoke').set(operatorAuth()), 404, 'resource_missing');
      expectError(await t.http.post('/admin/v1/projects/proj_nope/apps').set(operatorAuth()).send({ name: 'a', platform: 'web' }), 404, 'resource_missing');
    });

    it('mints four keys of the documented formats; secret plaintext only once', async () => {
      const projectId = (await t.http.post('/admin/v1/projects').set(operatorAuth()).send({ name: 'Fmt' })).body.id;
      const res = await t.http.post(`/admin/v1/projects/${projectId}/apps`).set(operatorAuth()).send({ name: 'Web', platform: 'web', allowedOrigins: [WEB_ORIGIN] });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(expect.objectContaining({ object: 'app', id: expect.stringMatching(/^app_/), projectId, platform: 'web', allowedOrigins: [WEB_ORIGIN] }));
      expect(res.body.keys).toHaveLength(4);
      const byKind = (kind: string, env: string) => res.body.keys.find((k: any) => k.kind === kind && k.env === env);
      expect(byKind('publishable', 'sandbox').key).toMatch(/^cd_pub_test_[A-Za-z0-9]{32}$/);
      expect(byKind('publishable', 'production').key).toMatch(/^cd_pub_live_[A-Za-z0-9]{32}$/);
      expect(byKind('secret', 'sandbox').key).toMatch(/^cd_sk_test_[A-Za-z0-9]{32}$/);
      expect(byKind('secret', 'production').key).toMatch(/^cd_sk_live_[A-Za-z0-9]{32}$/);
      expect(byKind('secret', 'sandbox').scopes).toEqual(['reporting:aggregate', 'revenue:read', 'errors:read', 'buckets:read']);
      for (const key of res.body.keys) {
        expect(key).toEqual(expect.objectContaining({ object: 'api_key', id: expect.stringMatching(/^key_/), appId: res.body.id, status: 'active', last4: key.key.slice(-4), createdAt: expect.any(Number) }));
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
      const tables: { table_name: string }[] = await t.dataSource.query(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
      );
      // Every row of every table, searched inside the database.
      for (const { table_name } of tables) {
        const [{ hits }] = await t.dataSource.query(
          `SELECT count(*)::int AS hits FROM "${table_name}" t WHERE strpos(t::text, $1) > 0 OR strpos(t::text, $2) > 0 OR strpos(t::text, $3) > 0`,
          secrets,
        );
        expect({ table: table_name, hits }).toEqual({ table: table_name, hits: 0 });
      }
      const [stored] = await t.dataSource.query(`SELECT secret_hash FROM api_keys WHERE id = $1`, [fixture.keyIds.skTest]);
      expect(stored.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    });
  });

  describe('authentication', () => {
    it('accepts both header forms', async () => {
      const bearer = await t.http.get('/v1/config').set({ Authorization: `Bearer ${web.keys.pubTest}`, Origin: WEB_ORIGIN });
      expect(bearer.status).toBe(200);
      const alias = await t.http.get('/v1/config').set({ 'Service-Api-Key': web.keys.pubTest, Origin: WEB_ORIGIN });
      expect(alias.status).toBe(200);
      const bare = await t.http.get('/config').set({ 'Service-Api-Key': web.keys.pubTest, Origin: WEB_ORIGIN });
      expect(bare.status).toBe(200);
    });

    it.each([
      ['no key', {}],
      ['empty bearer', { Authorization: 'Bearer ' }],
      ['basic scheme', { Authorization: 'Basic dXNlcjpwYXNz' }],
      ['garbage', { Authorization: 'Bearer hello' }],
      ['garbage alias', { 'Service-Api-Key': 'cd_nope' }],
    ])('%s: 401 missing_api_key', async (_label, headers) => {
      expectError(await t.http.get('/v1/sdk/heartbeat').set(headers as Record<string, string>), 401, 'missing_api_key');
    });

    it('unknown, well-formed keys: 401 invalid_api_key', async () => {
      expectError(await t.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer cd_sk_test_${'A'.repeat(32)}` }), 401, 'invalid_api_key');
      expectError(await t.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer cd_pub_live_${'b'.repeat(32)}`, Origin: WEB_ORIGIN }), 401, 'invalid_api_key');
      expectError(await t.http.get('/v1/sdk/heartbeat').set({ Authorization: 'Bearer cd_wk_abcdefghijklmnop' }), 401, 'invalid_api_key');
    });

    it('a key whose env part was edited is unknown', async () => {
      const forged = web.keys.pubTest.replace('_test_', '_live_');
      expectError(await t.http.get('/v1/config').set({ Authorization: `Bearer ${forged}`, Origin: WEB_ORIGIN }), 401, 'invalid_api_key');
    });

    it('wrong key kind for the endpoint: 401 invalid_api_key (secret key on GET /v1/config)', async () => {
      expectError(await t.http.get('/v1/config').set(keyHeaders(web, web.keys.skTest)), 401, 'invalid_api_key');
    });

    it('rotation: both keys work during the 7-day grace, then the old one fails closed', async () => {
      const t2 = await createTestApp();
      try {
        const f = await createProjectWithApp(t2);
        const rotated = await t2.http.post(`/admin/v1/keys/${f.keyIds.skTest}/rotate`).set(operatorAuth()).send({});
        expect(rotated.status).toBe(201);
        expect(rotated.body).toEqual({
          object: 'key_rotation',
          key: expect.objectContaining({ object: 'api_key', kind: 'secret', env: 'sandbox', status: 'active', key: expect.stringMatching(/^cd_sk_test_/), scopes: ['reporting:aggregate', 'revenue:read', 'errors:read', 'buckets:read'] }),
          rotatedOut: { id: f.keyIds.skTest, status: 'rotated_out', expiresAt: expect.any(Number) },
        });
        const nowS = Math.floor(t2.clock.nowMs() / 1000);
        expect(rotated.body.rotatedOut.expiresAt - nowS).toBeGreaterThanOrEqual(SEVEN_DAYS - 5);
        expect(rotated.body.rotatedOut.expiresAt - nowS).toBeLessThanOrEqual(SEVEN_DAYS);
        const newKey = rotated.body.key.key;
        expect((await t2.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${f.keys.skTest}` })).status).toBe(200);
        expect((await t2.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${newKey}` })).status).toBe(200);

        await t2.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: SEVEN_DAYS - 60 });
        expect((await t2.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${f.keys.skTest}` })).status).toBe(200);
        await t2.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 61 });
        expectError(await t2.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${f.keys.skTest}` }), 401, 'invalid_api_key');
        expect((await t2.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${newKey}` })).status).toBe(200);

        const app = await t2.http.get(`/admin/v1/apps/${f.appId}`).set(operatorAuth());
        expect(app.body.keys.find((k: any) => k.id === f.keyIds.skTest).status).toBe('expired');
        expect(app.body.keys.filter((k: any) => k.kind === 'secret' && k.env === 'sandbox' && k.status === 'active')).toHaveLength(1);
      } finally {
        await t2.close();
      }
    });

    it('rotation can narrow a secret key\'s scopes; publishable keys take no scopes; rotated keys cannot rotate again', async () => {
      const f = await createProjectWithApp(t);
      const narrowed = await t.http.post(`/admin/v1/keys/${f.keyIds.skLive}/rotate`).set(operatorAuth()).send({ scopes: ['revenue:read'] });
      expect(narrowed.body.key.scopes).toEqual(['revenue:read']);
      expectError(await t.http.post(`/admin/v1/keys/${f.keyIds.pubLive}/rotate`).set(operatorAuth()).send({ scopes: ['revenue:read'] }), 400, 'invalid_param_value');
      expectError(await t.http.post(`/admin/v1/keys/${f.keyIds.skTest}/rotate`).set(operatorAuth()).send({ scopes: ['root'] }), 400, 'invalid_param_value');
      // The old key keeps its own scopes: a different scope set is always a new key.
      const [oldScopes] = await t.dataSource.query(`SELECT scopes FROM api_keys WHERE id = $1`, [f.keyIds.skLive]);
      expect(oldScopes.scopes).toEqual(['reporting:aggregate', 'revenue:read', 'errors:read', 'buckets:read']);
      expectError(await t.http.post(`/admin/v1/keys/${f.keyIds.skLive}/rotate`).set(operatorAuth()).send({}), 400, 'invalid_param_value');
      const pub = await t.http.post(`/admin/v1/keys/${f.keyIds.pubTest}/rotate`).set(operatorAuth()).send({});
      expect(pub.body.key.key).toMatch(/^cd_pub_test_/);
      expect(pub.body.key.scopes).toBeUndefined();
    });

    it('revocation is immediate: 401 key_revoked on the next request', async () => {
      const f = await createProjectWithApp(t);
      expect((await t.http.get('/v1/config').set(keyHeaders(f, f.keys.pubLive))).status).toBe(200);
      const revoked = await t.http.post(`/admin/v1/keys/${f.keyIds.pubLive}/revoke`).set(operatorAuth());
      expect(revoked.status).toBe(200);
      expect(revoked.body).toEqual(expect.objectContaining({ object: 'api_key', id: f.keyIds.pubLive, status: 'revoked' }));
      expectError(await t.http.get('/v1/config').set(keyHeaders(f, f.keys.pubLive)), 401, 'key_revoked');
      const sk = await t.http.post(`/admin/v1/keys/${f.keyIds.skLive}/revoke`).set(operatorAuth());
      expect(sk.body.key).toBeUndefined();
      expectError(await t.http.get('/v1/sdk/heartbeat').set({ 'Service-Api-Key': f.keys.skLive }), 401, 'key_revoked');
      expectError(await t.http.post(`/admin/v1/keys/${f.keyIds.skLive}/rotate`).set(operatorAuth()).send({}), 400, 'invalid_param_value');
      expect((await t.http.get('/v1/config').set(keyHeaders(f, f.keys.pubTest))).status).toBe(200);
    });

    it('archiving a project fails every key closed with 401 invalid_api_key', async () => {
      const f = await createProjectWithApp(t);
      expect((await t.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${f.keys.skTest}` })).status).toBe(200);
      const archived = await t.http.post(`/admin/v1/projects/${f.projectId}/archive`).set(operatorAuth());
      expect(archived.body).toEqual(expect.objectContaining({ archived: true }));
      for (const key of Object.values(f.keys)) {
        expectError(await t.http.get('/v1/sdk/heartbeat').set(keyHeaders(f, key)), 401, 'invalid_api_key');
      }
    });

    it('records created, rotated and revoked in the key-activity log, newest first', async () => {
      const f = await createProjectWithApp(t);
      const rot = await t.http.post(`/admin/v1/keys/${f.keyIds.skTest}/rotate`).set(operatorAuth()).send({});
      await t.http.post(`/admin/v1/keys/${f.keyIds.pubTest}/revoke`).set(operatorAuth());
      const log = await t.http.get(`/admin/v1/projects/${f.projectId}/key-activity`).set(operatorAuth());
      expect(log.status).toBe(200);
      expect(log.body.object).toBe('list');
      const actions = log.body.data.map((e: any) => `${e.action}:${e.keyId}`);
      expect(actions).toEqual(expect.arrayContaining([`created:${f.keyIds.skTest}`, `rotated:${f.keyIds.skTest}`, `revoked:${f.keyIds.pubTest}`, `created:${rot.body.key.id}`]));
      expect(log.body.data).toHaveLength(7);
      for (const entry of log.body.data) expect(entry.requestId).toMatch(/^(req_|seed)/);
      const times = log.body.data.map((e: any) => e.at);
      expect([...times].sort((a: number, b: number) => b - a)).toEqual(times);
    });
  });

  describe('platform locks', () => {
    let locked: ProjectFixture;
    beforeAll(async () => {
      locked = await createProjectWithApp(t, { allowedOrigins: ['https://app.example.com', 'https://*.example.org', 'http://localhost:5173'] });
    });
    const call = (key: string, origin?: string) => {
      const req = t.http.get('/v1/config').set({ Authorization: `Bearer ${key}` });
      return origin === undefined ? req : req.set('Origin', origin);
    };

    it.each([
      ['exact', 'https://app.example.com', 200],
      ['exact with port', 'http://localhost:5173', 200],
      ['wrong port', 'http://localhost:5174', 403],
      ['wrong scheme', 'http://app.example.com', 403],
      ['case differs', 'https://App.example.com', 403],
      ['wildcard one label', 'https://shop.example.org', 200],
      ['wildcard nested labels', 'https://a.shop.example.org', 403],
      ['wildcard bare domain', 'https://example.org', 403],
      ['wildcard with a port', 'https://shop.example.org:8443', 403],
      ['lookalike suffix', 'https://evilexample.org', 403],
      ['null origin', 'null', 403],
    ])('web origin %s (%s): %i', async (_label, origin, status) => {
      const res = await call(locked.keys.pubTest, origin as string);
      expect(res.status).toBe(status);
      if (status === 403) expectError(res, 403, 'origin_not_allowed');
      else expect(res.headers['access-control-allow-origin']).toBe(origin);
    });

    it('missing Origin fails closed', async () => {
      expectError(await call(locked.keys.pubTest), 403, 'origin_not_allowed');
    });

    it('an empty allowlist fails closed', async () => {
      const empty = await createProjectWithApp(t, { allowedOrigins: [] });
      expectError(await call(empty.keys.pubTest, 'https://anything.example.com'), 403, 'origin_not_allowed');
    });

    it('secret keys skip the locks', async () => {
      const res = await t.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${locked.keys.skTest}`, Origin: 'https://evil.example.net' });
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('iOS bundle id lock: exact and case-sensitive', async () => {
      const ios = await createProjectWithApp(t, { platform: 'ios', bundleId: 'com.acme.App' });
      const hb = (bundle?: string) => {
        const req = t.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${ios.keys.pubTest}` });
        return bundle === undefined ? req : req.set('X-Service-Bundle-Id', bundle);
      };
      expect((await hb('com.acme.App')).status).toBe(200);
      expectError(await hb('com.acme.app'), 403, 'bundle_id_not_allowed');
      expectError(await hb(), 403, 'bundle_id_not_allowed');
      expect((await t.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${ios.keys.skTest}` })).status).toBe(200);
    });

    it('Android package name lock', async () => {
      const android = await createProjectWithApp(t, { platform: 'android', packageName: 'com.acme.android' });
      const hb = (pkg?: string) => {
        const req = t.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${android.keys.pubLive}` });
        return pkg === undefined ? req : req.set('X-Service-Package-Name', pkg);
      };
      expect((await hb('com.acme.android')).status).toBe(200);
      expectError(await hb('com.acme.other'), 403, 'package_name_not_allowed');
      expectError(await hb(), 403, 'package_name_not_allowed');
    });

    it('the lock is checked after the key: a revoked key is 401 whatever the origin', async () => {
      const f = await createProjectWithApp(t);
      await t.http.post(`/admin/v1/keys/${f.keyIds.pubTest}/revoke`).set(operatorAuth());
      expectError(await call(f.keys.pubTest, 'https://evil.example.net'), 401, 'key_revoked');
    });
  });

  describe('GET /v1/config', () => {
    it('returns the app settings with serverTime and public, max-age=60', async () => {
      const f = await createProjectWithApp(t);
      const patched = await t.http.patch(`/admin/v1/apps/${f.appId}`).set(operatorAuth()).send({
        sdkMinVersion: '1.2.0',
        sdkDeprecatedVersions: ['1.0.x'],
        verifierConfig: { logVerifierResults: true, verifyContractsAtBoot: null },
        errorNoiseDenyList: { version: 2, patterns: ['ResizeObserver loop'] },
        allowedOrigins: [WEB_ORIGIN, 'https://*.example.com'],
      });
      expect(patched.status).toBe(200);
      const res = await t.http.get('/v1/config').set(keyHeaders(f, f.keys.pubLive));
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=60');
      expect(res.body).toEqual({
        object: 'config',
        env: 'production',
        projectId: f.projectId,
        appId: f.appId,
        platform: 'web',
        allowedOrigins: [WEB_ORIGIN, 'https://*.example.com'],
        sdk: { minVersion: '1.2.0', deprecatedVersions: ['1.0.x'] },
        verifierConfig: { logVerifierResults: true, verifyContractsAtBoot: null },
        errorNoiseDenyList: { version: 2, patterns: ['ResizeObserver loop'] },
        serverTime: expect.any(Number),
      });
      expect(Math.abs(res.body.serverTime - t.clock.nowMs())).toBeLessThan(5000);
      const sandbox = await t.http.get('/v1/config').set(keyHeaders(f, f.keys.pubTest));
      expect(sandbox.body.env).toBe('sandbox');
    });

    it('PATCH refuses null for settings that need a value (400, app unchanged); null sdkMinVersion resets the floor', async () => {
      const f = await createProjectWithApp(t);
      const ios = await createProjectWithApp(t, { platform: 'ios' });
      for (const field of ['name', 'allowedOrigins', 'sdkDeprecatedVersions', 'errorNoiseDenyList']) {
        const res = await t.http.patch(`/admin/v1/apps/${f.appId}`).set(operatorAuth()).send({ [field]: null });
        expectError(res, 400, 'invalid_param_value');
        expect(res.body.error.message).toContain(field);
      }
      expectError(await t.http.patch(`/admin/v1/apps/${ios.appId}`).set(operatorAuth()).send({ bundleId: null }), 400, 'invalid_param_value');
      // The app still authenticates and its config keeps its shape.
      const config = await t.http.get('/v1/config').set(keyHeaders(f, f.keys.pubTest));
      expect(config.status).toBe(200);
      expect(config.body.allowedOrigins).toEqual([WEB_ORIGIN]);
      expect(config.body.sdk.deprecatedVersions).toEqual([]);
      expect(config.body.errorNoiseDenyList).toEqual({ version: 1, patterns: [] });
      expect((await t.http.get('/v1/config').set(keyHeaders(ios, ios.keys.pubTest))).status).toBe(200);

      await t.http.patch(`/admin/v1/apps/${f.appId}`).set(operatorAuth()).send({ sdkMinVersion: '2.0.0' });
      expect((await t.http.get('/v1/config').set(keyHeaders(f, f.keys.pubTest))).body.sdk.minVersion).toBe('2.0.0');
      const reset = await t.http.patch(`/admin/v1/apps/${f.appId}`).set(operatorAuth()).send({ sdkMinVersion: null });
      expect(reset.status).toBe(200);
      expect((await t.http.get('/v1/config').set(keyHeaders(f, f.keys.pubTest))).body.sdk.minVersion).toBe('0.3.0');
    });

    it('defaults: the manifest floor, tri-state nulls, an empty deny list', async () => {
      const res = await t.http.get('/v1/config').set(keyHeaders(web, web.keys.pubTest));
      expect(res.body.sdk).toEqual({ minVersion: '0.3.0', deprecatedVersions: [] });
      expect(res.body.verifierConfig).toEqual({ logVerifierResults: null, verifyContractsAtBoot: null });
      expect(res.body.errorNoiseDenyList).toEqual({ version: 1, patterns: [] });
    });
  });

  describe('GET /v1/sdk/heartbeat', () => {
    it('answers the heartbeat shape, no-store, with both key kinds', async () => {
      for (const key of [web.keys.pubTest, web.keys.skLive]) {
        const res = await t.http.get('/v1/sdk/heartbeat').set(keyHeaders(web, key)).set('Service-Sdk-Version', '@service/web@1.6.0');
        expect(res.status).toBe(200);
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.body).toEqual({
          object: 'heartbeat',
          ok: true,
          projectId: web.projectId,
          appId: web.appId,
          platform: 'web',
          env: key.includes('_test_') ? 'sandbox' : 'production',
          serverTime: expect.any(Number),
        });
      }
    });

    it('records per-app, per-surface liveness from Service-Sdk-Version (never from the key)', async () => {
      const f = await createProjectWithApp(t);
      await t.http.get('/v1/sdk/heartbeat').set(keyHeaders(f, f.keys.skTest)).set('Service-Sdk-Version', '@service/node@1.4.2');
      await t.http.get('/v1/sdk/heartbeat').set(keyHeaders(f, f.keys.pubTest)).set('Service-Sdk-Version', '@service/web@1.6.0');
      await t.http.get('/v1/sdk/heartbeat').set(keyHeaders(f, f.keys.pubTest));
      const rows = await t.dataSource.query(`SELECT env, surface, sdk_version FROM sdk_liveness WHERE project_id = $1 ORDER BY surface`, [f.projectId]);
      expect(rows).toEqual([
        { env: 'sandbox', surface: 'node', sdk_version: '1.4.2' },
        { env: 'sandbox', surface: 'unknown', sdk_version: null },
        { env: 'sandbox', surface: 'web', sdk_version: '1.6.0' },
      ]);
    });

    it('throttles with the heartbeat bucket: 429 rate_limited, Retry-After, X-Service-Sample-Rate', async () => {
      const f = await createProjectWithApp(t);
      // A slow refill (one token per 100 s) so a slow machine cannot refill between calls.
      await setRateLimits(t, f.projectId, { heartbeat: { sustained: 0.01, burst: 2 } });
      const h = keyHeaders(f, f.keys.pubTest);
      expect((await t.http.get('/v1/sdk/heartbeat').set(h)).status).toBe(200);
      expect((await t.http.get('/v1/sdk/heartbeat').set(h)).status).toBe(200);
      const limited = await t.http.get('/v1/sdk/heartbeat').set(h);
      expectError(limited, 429, 'rate_limited');
      expect(limited.body.error.type).toBe('rate_limit_error');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const rate = Number(limited.headers['x-service-sample-rate']);
      expect(rate).toBeGreaterThanOrEqual(0);
      expect(rate).toBeLessThanOrEqual(1);
      expect(limited.headers['access-control-allow-origin']).toBe(WEB_ORIGIN);
      // Buckets are per environment: production is untouched.
      expect((await t.http.get('/v1/sdk/heartbeat').set(keyHeaders(f, f.keys.pubLive))).status).toBe(200);
      // Refill with the test clock.
      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 101 });
      expect((await t.http.get('/v1/sdk/heartbeat').set(h)).status).toBe(200);
    });

    it('the default heartbeat bucket allows a burst of 10 (1/s refill)', async () => {
      const f = await createProjectWithApp(t);
      const started = Date.now();
      const statuses = await Promise.all(Array.from({ length: 15 }, () => t.http.get('/v1/sdk/heartbeat').set(keyHeaders(f, f.keys.skTest)).then((r) => r.status)));
      const elapsedSeconds = (Date.now() - started) / 1000;
      const ok = statuses.filter((s) => s === 200).length;
      expect(ok).toBeGreaterThanOrEqual(10);
      // Tokens refill at 1/s while the calls are in flight; nothing beyond that.
      expect(ok).toBeLessThanOrEqual(10 + Math.ceil(elapsedSeconds));
      expect(statuses.filter((s) => s !== 200).every((s) => s === 429)).toBe(true);
      if (elapsedSeconds < 4) expect(statuses).toContain(429);
    });

    it('onboarding: the first heartbeat of a web app with an empty allowlist learns its origin and apex', async () => {
      const f = await createProjectWithApp(t, { allowedOrigins: [] });
      const origin = 'https://shop.acme.co.uk';
      expectError(await t.http.get('/v1/config').set({ Authorization: `Bearer ${f.keys.pubTest}`, Origin: origin }), 403, 'origin_not_allowed');
      const first = await t.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${f.keys.pubTest}`, Origin: origin });
      expect(first.status).toBe(200);
      const app = await t.http.get(`/admin/v1/apps/${f.appId}`).set(operatorAuth());
      expect(app.body.allowedOrigins).toEqual([origin, 'https://acme.co.uk']);
      expect((await t.http.get('/v1/config').set({ Authorization: `Bearer ${f.keys.pubTest}`, Origin: 'https://acme.co.uk' })).status).toBe(200);
      // Now the list locks normally: another origin is refused, even on a heartbeat.
      expectError(await t.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${f.keys.pubLive}`, Origin: 'https://other.example.com' }), 403, 'origin_not_allowed');
    });

    it('onboarding does not learn from a heartbeat without an Origin', async () => {
      const f = await createProjectWithApp(t, { allowedOrigins: [] });
      expectError(await t.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${f.keys.pubTest}` }), 403, 'origin_not_allowed');
      const app = await t.http.get(`/admin/v1/apps/${f.appId}`).set(operatorAuth());
      expect(app.body.allowedOrigins).toEqual([]);
    });
  });

  describe('rate-limit overrides', () => {
    it('returns the effective table and validates buckets', async () => {
      const f = await createProjectWithApp(t);
      const res = await t.http.put(`/admin/v1/projects/${f.projectId}/rate-limits`).set(operatorAuth()).send({ events: { sustained: 5, burst: 50 } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        events: { sustained: 5, burst: 50 },
        purchases: { sustained: 10, burst: 100 },
        entitlements: { sustained: 100, burst: 1000 },
        heartbeat: { sustained: 1, burst: 10 },
        forget: { sustained: 1, burst: 10 },
        alias: { sustained: 10, burst: 100 },
      });
      expectError(await t.http.put(`/admin/v1/projects/${f.projectId}/rate-limits`).set(operatorAuth()).send({ bogus: { sustained: 1, burst: 1 } }), 400, 'invalid_param_value');
      expectError(await t.http.put(`/admin/v1/projects/${f.projectId}/rate-limits`).set(operatorAuth()).send({ events: { burst: 1 } }), 400, 'missing_required_param');
      expectError(await t.http.put(`/admin/v1/projects/${f.projectId}/rate-limits`).set(operatorAuth()).send({ events: { sustained: 0, burst: 1 } }), 400, 'invalid_param_value');
      expectError(await t.http.put('/admin/v1/projects/proj_nope/rate-limits').set(operatorAuth()).send({}), 404, 'resource_missing');
    });

    it('concurrent replacements of one project\'s overrides all succeed; the last one wins whole', async () => {
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
      for (const path of ['/admin/v1/projects', '/admin/v1/projects/{projectId}/apps', '/admin/v1/apps/{appId}', '/admin/v1/keys/{keyId}/rotate', '/admin/v1/keys/{keyId}/revoke', '/admin/v1/projects/{projectId}/key-activity', '/admin/v1/projects/{projectId}/rate-limits']) {
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

describe('keys: rejection logging', () => {
  it('writes one structured line per rejection with the request id and the reason, never the key', async () => {
    const lines: Record<string, unknown>[] = [];
    const t = await createTestApp({ LOG_LEVEL: 'warn' }, { onLogLine: (line) => lines.push(line) });
    try {
      const f = await createProjectWithApp(t);
      await t.http.post(`/admin/v1/keys/${f.keyIds.skTest}/revoke`).set(operatorAuth());
      const cases = [
        { headers: { Authorization: `Bearer ${f.keys.skTest}` }, reason: 'key_revoked' },
        { headers: { Authorization: `Bearer ${f.keys.pubTest}`, Origin: 'https://evil.example.net' }, reason: 'origin_not_allowed' },
        { headers: { Authorization: `Bearer ${f.keys.skLive}` }, reason: 'wrong_key_kind_secret', path: '/v1/config' },
        { headers: {}, reason: 'no_key' },
      ];
      for (const c of cases) {
        const res = await t.http.get(c.path ?? '/v1/sdk/heartbeat').set(c.headers);
        const matching = lines.filter((l) => l.requestId === res.headers['x-request-id'] && l.msg === 'api key rejected');
        expect(matching).toEqual([expect.objectContaining({ reason: c.reason, level: 'warn' })]);
      }
      const everything = JSON.stringify(lines);
      for (const key of Object.values(f.keys)) expect(everything.includes(key)).toBe(false);
    } finally {
      await t.close();
    }
  });
});

describe('keys: revocation across replicas', () => {
  it('another replica refuses a revoked key once its key cache expires (KEY_CACHE_TTL_MS bound)', async () => {
    const ttlMs = 300;
    const replicaA = await createTestApp({ KEY_CACHE_TTL_MS: String(ttlMs) });
    const replicaB = await createTestApp({ KEY_CACHE_TTL_MS: String(ttlMs) });
    try {
      const f = await createProjectWithApp(replicaA);
      const beat = (t: TestApp) => t.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${f.keys.skTest}` });
      expect((await beat(replicaB)).status).toBe(200); // B now holds the key in memory
      await replicaA.http.post(`/admin/v1/keys/${f.keyIds.skTest}/revoke`).set(operatorAuth());
      expectError(await beat(replicaA), 401, 'key_revoked'); // the revoking replica: at once
      await new Promise((resolve) => setTimeout(resolve, ttlMs + 50));
      expectError(await beat(replicaB), 401, 'key_revoked'); // every other replica: within the TTL
    } finally {
      await replicaA.close();
      await replicaB.close();
    }
  });
});

describe('keys: heartbeat is best effort', () => {
  it('answers ok: true when the liveness write fails', async () => {
    const t = await createTestApp();
    try {
      const f = await createProjectWithApp(t);
      await t.dataSource.query('ALTER TABLE sdk_liveness RENAME TO sdk_liveness_unavailable');
      let res;
      try {
        res = await t.http.get('/v1/sdk/heartbeat').set(keyHeaders(f, f.keys.skTest)).set('Service-Sdk-Version', '@service/node@1.4.2');
      } finally {
        await t.dataSource.query('ALTER TABLE sdk_liveness_unavailable RENAME TO sdk_liveness');
      }
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expect.objectContaining({ object: 'heartbeat', ok: true }));
    } finally {
      await t.close();
    }
  });
});
