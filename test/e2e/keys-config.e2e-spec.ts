import { createProjectWithApp, keyHeaders, setRateLimits, WEB_ORIGIN, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { createTestDatabase, dropTestDatabase } from '../support/test-database.js';
import { keysHarness } from '../support/harness/keys.js';

describe('keys: GET /v1/config and GET /v1/sdk/heartbeat', () => {
  const h = keysHarness();
  let t: TestApp;
  let web: ProjectFixture;
  beforeAll(() => {
    ({ t, web } = h);
  });

  describe('GET /v1/config', () => {
    it('returns the app settings with serverTime and public, max-age=60', async () => {
      const f = await createProjectWithApp(t);
      const patched = await t.http
        .patch(`/admin/v1/apps/${f.appId}`)
        .set(operatorAuth())
        .send({
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
        const res = await t.http
          .patch(`/admin/v1/apps/${f.appId}`)
          .set(operatorAuth())
          .send({ [field]: null });
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
      const statuses = await Promise.all(
        Array.from({ length: 15 }, () =>
          t.http
            .get('/v1/sdk/heartbeat')
            .set(keyHeaders(f, f.keys.skTest))
            .then((r) => r.status),
        ),
      );
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
      expectError(
        await t.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${f.keys.pubLive}`, Origin: 'https://other.example.com' }),
        403,
        'origin_not_allowed',
      );
    });

    it('onboarding does not learn from a heartbeat without an Origin', async () => {
      const f = await createProjectWithApp(t, { allowedOrigins: [] });
      expectError(await t.http.get('/v1/sdk/heartbeat').set({ Authorization: `Bearer ${f.keys.pubTest}` }), 403, 'origin_not_allowed');
      const app = await t.http.get(`/admin/v1/apps/${f.appId}`).set(operatorAuth());
      expect(app.body.allowedOrigins).toEqual([]);
    });
  });
});

describe('keys: heartbeat is best effort', () => {
  it('answers ok: true when the liveness write fails', async () => {
    // The fault (a renamed table) is made in a database of its own: suites running in
    // parallel on the shared database must never see it.
    const database = await createTestDatabase();
    const t = await createTestApp({ DATABASE_URL: database.url });
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
      await dropTestDatabase(database);
    }
  });
});
