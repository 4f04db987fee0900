import { createProjectWithApp, keyHeaders, WEB_ORIGIN, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { keysHarness, SEVEN_DAYS } from '../support/harness/keys.js';

describe('keys: authentication and platform locks', () => {
  const h = keysHarness();
  let t: TestApp;
  let web: ProjectFixture;
  beforeAll(() => {
    ({ t, web } = h);
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
      expectError(
        await t.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer cd_pub_live_${'b'.repeat(32)}`, Origin: WEB_ORIGIN }),
        401,
        'invalid_api_key',
      );
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
          key: expect.objectContaining({
            object: 'api_key',
            kind: 'secret',
            env: 'sandbox',
            status: 'active',
            key: expect.stringMatching(/^cd_sk_test_/),
            scopes: ['reporting:aggregate', 'revenue:read', 'errors:read', 'buckets:read'],
          }),
          rotatedOut: { id: f.keyIds.skTest, status: 'rotated_out', expiresAt: expect.any(Number) },
        });
        const nowS = Math.floor(t2.clock.nowMs() / 1000);
        expect(rotated.body.rotatedOut.expiresAt - nowS).toBeGreaterThanOrEqual(SEVEN_DAYS - 5);
        expect(rotated.body.rotatedOut.expiresAt - nowS).toBeLessThanOrEqual(SEVEN_DAYS);
        const newKey = rotated.body.key.key;
        expect((await t2.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${f.keys.skTest}` })).status).toBe(200);
        expect((await t2.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${newKey}` })).status).toBe(200);

        await t2.http
          .post('/admin/v1/test-clock/advance')
          .set(operatorAuth())
          .send({ seconds: SEVEN_DAYS - 60 });
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

    it("rotation can narrow a secret key's scopes; publishable keys take no scopes; rotated keys cannot rotate again", async () => {
      const f = await createProjectWithApp(t);
      const narrowed = await t.http
        .post(`/admin/v1/keys/${f.keyIds.skLive}/rotate`)
        .set(operatorAuth())
        .send({ scopes: ['revenue:read'] });
      expect(narrowed.body.key.scopes).toEqual(['revenue:read']);
      expectError(
        await t.http
          .post(`/admin/v1/keys/${f.keyIds.pubLive}/rotate`)
          .set(operatorAuth())
          .send({ scopes: ['revenue:read'] }),
        400,
        'invalid_param_value',
      );
      expectError(
        await t.http
          .post(`/admin/v1/keys/${f.keyIds.skTest}/rotate`)
          .set(operatorAuth())
          .send({ scopes: ['root'] }),
        400,
        'invalid_param_value',
      );
      // The old key keeps its own scopes: a different scope set is always a new key.
      const app = await t.http.get(`/admin/v1/apps/${f.appId}`).set(operatorAuth());
      const oldKey = app.body.keys.find((key: { id: string }) => key.id === f.keyIds.skLive);
      expect(oldKey.scopes).toEqual(['reporting:aggregate', 'revenue:read', 'errors:read', 'buckets:read']);
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
      expect(actions).toEqual(
        expect.arrayContaining([`created:${f.keyIds.skTest}`, `rotated:${f.keyIds.skTest}`, `revoked:${f.keyIds.pubTest}`, `created:${rot.body.key.id}`]),
      );
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
