import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { CustomerDirectory } from '#identity';
import { createProjectWithApp, keyHeaders, setRateLimits, WEB_ORIGIN, type ProjectFixture } from '../support/fixtures.js';
import { type IdentityProviderKit, aid, identityProviderKit, uid } from '../support/id-tokens.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { testScope } from '../support/scopes.js';
import { expectError } from '../support/expect-error.js';

/**
 * The published clients (@cross-deck/web, @cross-deck/node, …) against this server.
 * Every request here is sent the way those clients send it: the `Crossdeck-` header
 * spellings, `Accept: application/json`, the browser's preflight, the legacy identify alias.
 */

const WEB_SDK = '@cross-deck/web@1.14.1';
const NODE_SDK = '@cross-deck/node@1.2.0';
const REASON = 'Support goodwill grant for the outage';

/** What the web client sends on every call (fetch from the page's origin, publishable key). */
function webClient(f: ProjectFixture, key = f.keys.pubTest): Record<string, string> {
  return { Authorization: `Bearer ${key}`, 'Crossdeck-Sdk-Version': WEB_SDK, Accept: 'application/json', Origin: WEB_ORIGIN };
}

/** What the Node client sends on every call (server side, secret key). */
function nodeClient(key: string, sdk = NODE_SDK): Record<string, string> {
  return {
    Authorization: `Bearer ${key}`,
    'Crossdeck-Sdk-Version': sdk,
    'Crossdeck-Api-Version': '2025-01-01',
    'User-Agent': `${sdk.replace(/@(?=[^@]*$)/, '/')} node/20.10.0 linux`,
    Accept: 'application/json',
  };
}

/** The allowed-headers list of a preflight, lower-cased. */
function allowedHeaders(res: { headers: Record<string, string> }): string[] {
  return (res.headers['access-control-allow-headers'] ?? '').split(',').map((h) => h.trim().toLowerCase());
}

describe('clients: the published web and Node clients against this server', () => {
  let t: TestApp;
  let p: ProjectFixture;
  let other: ProjectFixture;
  let kit: IdentityProviderKit;

  const identify = (body: Record<string, unknown>, f = p) =>
    // The web client still calls the legacy alias path.
    t.http.post('/v1/identity/alias').set(webClient(f)).set('Content-Type', 'application/json').send(body);
  const grant = (customerId: string, entitlementKey: string, f = p) =>
    t.http.post(`/v1/server/customers/${customerId}/grant`).set(nodeClient(f.keys.skTest)).send({ entitlementKey, duration: 'P30D', reason: REASON });
  const revoke = (customerId: string, entitlementKey: string, f = p) =>
    t.http.post(`/v1/server/customers/${customerId}/revoke`).set(nodeClient(f.keys.skTest)).send({ entitlementKey, reason: 'Refunded' });
  const resolve = (body: Record<string, unknown>, headers: Record<string, string>) => t.http.post('/v1/resolve').set(headers).send(body);
  const forget = (body: Record<string, unknown>, headers: Record<string, string>) => t.http.post('/v1/identity/forget').set(headers).send(body);
  const sandbox = (f = p) => testScope(f.projectId, 'sandbox');

  async function newCustomer(f = p): Promise<{ userId: string; anonymousId: string; customerId: string }> {
    const userId = uid('client');
    const anonymousId = aid('client');
    const res = await identify({ userId, anonymousId, email: `${userId}@example.com` }, f);
    if (res.status !== 200) throw new Error(`identify failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { userId, anonymousId, customerId: res.body.serviceCustomerId };
  }

  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
    other = await createProjectWithApp(t);
    const roomy = { sustained: 1000, burst: 10000 };
    await setRateLimits(t, p.projectId, { alias: roomy, forget: roomy, heartbeat: roomy, entitlements: roomy });
    kit = await identityProviderKit(t);
    await kit.configure(p.projectId);
  });
  afterAll(async () => t.close());

  describe("CORS preflight with the browser's Access-Control-Request-Headers", () => {
    it.each([
      ['POST', '/v1/events', 'authorization,content-type,crossdeck-sdk-version,idempotency-key'],
      ['GET', '/v1/sdk/heartbeat', 'authorization,crossdeck-sdk-version'],
      ['GET', '/v1/entitlements', 'authorization,crossdeck-sdk-version'],
      ['POST', '/v1/identity/alias', 'authorization,content-type,crossdeck-sdk-version'],
      ['POST', '/v1/resolve', 'content-type,crossdeck-api-key,crossdeck-sdk-version'],
      ['POST', '/v1/identity/forget', 'Content-Type, Crossdeck-Api-Key, Crossdeck-Sdk-Version'],
      ['POST', '/v1/purchases/sync', 'service-api-key,service-sdk-version,idempotency-key,content-type'],
    ])('%s %s: 204, echoes the origin and allows every requested header', async (method, path, requested) => {
      const res = await t.http
        .options(path)
        .set('Origin', WEB_ORIGIN)
        .set('Access-Control-Request-Method', method)
        .set('Access-Control-Request-Headers', requested);
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(WEB_ORIGIN);
      expect(res.headers['access-control-allow-methods']).toContain(method);
      const allowed = allowedHeaders(res);
      for (const header of requested.split(',').map((h) => h.trim().toLowerCase())) expect(allowed).toContain(header);
      expect(res.headers['access-control-max-age']).toBe('600');
    });

    it('the actual request from the page is then readable by the browser', async () => {
      const res = await t.http.get('/v1/sdk/heartbeat').set(webClient(p));
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(WEB_ORIGIN);
      expect(res.headers['access-control-expose-headers']).toContain('X-Request-Id');
    });
  });

  describe('heartbeat: the client-version header names the surface', () => {
    const liveness = (f: ProjectFixture) =>
      t.dataSource.query(`SELECT env, surface, sdk_name, sdk_version FROM sdk_liveness WHERE project_id = $1 ORDER BY surface`, [f.projectId]);

    it(`Crossdeck-Sdk-Version: ${WEB_SDK} is recorded under surface web`, async () => {
      const f = await createProjectWithApp(t);
      const res = await t.http.get('/v1/sdk/heartbeat').set(webClient(f));
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual({
        object: 'heartbeat',
        ok: true,
        projectId: f.projectId,
        appId: f.appId,
        platform: 'web',
        env: 'sandbox',
        serverTime: expect.any(Number),
      });
      expect(await liveness(f)).toEqual([{ env: 'sandbox', surface: 'web', sdk_name: '@cross-deck/web', sdk_version: '1.14.1' }]);
    });

    it('the Node, React Native, iOS and Android client names map to their surfaces', async () => {
      const f = await createProjectWithApp(t);
      const ios = await createProjectWithApp(t, { platform: 'ios', projectId: f.projectId });
      const android = await createProjectWithApp(t, { platform: 'android', projectId: f.projectId });
      expect((await t.http.get('/v1/sdk/heartbeat').set(nodeClient(f.keys.skTest))).status).toBe(200);
      expect((await t.http.get('/v1/sdk/heartbeat').set({ ...webClient(f), 'Crossdeck-Sdk-Version': '@cross-deck/react-native@1.1.0' })).status).toBe(200);
      const swift = { ...keyHeaders(ios, ios.keys.pubTest), 'Crossdeck-Sdk-Version': '@cross-deck/swift@1.4.1' };
      expect((await t.http.get('/v1/sdk/heartbeat').set(swift)).status).toBe(200);
      const kotlin = { ...keyHeaders(android, android.keys.pubTest), 'Crossdeck-Sdk-Version': '@cross-deck/android@1.4.2' };
      expect((await t.http.get('/v1/sdk/heartbeat').set(kotlin)).status).toBe(200);
      const rows = await t.dataSource.query(`SELECT app_id, surface, sdk_name, sdk_version FROM sdk_liveness WHERE project_id = $1 ORDER BY surface`, [
        f.projectId,
      ]);
      expect(rows).toEqual([
        { app_id: android.appId, surface: 'android', sdk_name: '@cross-deck/android', sdk_version: '1.4.2' },
        { app_id: f.appId, surface: 'node', sdk_name: '@cross-deck/node', sdk_version: '1.2.0' },
        { app_id: f.appId, surface: 'react-native', sdk_name: '@cross-deck/react-native', sdk_version: '1.1.0' },
        { app_id: ios.appId, surface: 'swift', sdk_name: '@cross-deck/swift', sdk_version: '1.4.1' },
      ]);
    });

    it('Service-Sdk-Version wins when both spellings are sent; an unknown client is surface unknown', async () => {
      const f = await createProjectWithApp(t);
      await t.http.get('/v1/sdk/heartbeat').set({ ...webClient(f), 'Service-Sdk-Version': '@service/node@1.4.2' });
      await t.http.get('/v1/sdk/heartbeat').set({ ...webClient(f), 'Crossdeck-Sdk-Version': '@cross-deck/cli@1.0.0' });
      expect(await liveness(f)).toEqual([
        { env: 'sandbox', surface: 'node', sdk_name: '@service/node', sdk_version: '1.4.2' },
        { env: 'sandbox', surface: 'unknown', sdk_name: '@cross-deck/cli', sdk_version: '1.0.0' },
      ]);
    });
  });

  describe('Crossdeck-Api-Key authentication', () => {
    const heartbeat = (key: string, extra: Record<string, string> = {}) =>
      t.http.get('/v1/sdk/heartbeat').set({ 'Crossdeck-Api-Key': key, 'Crossdeck-Sdk-Version': WEB_SDK, Origin: WEB_ORIGIN, ...extra });

    it('a valid key authenticates, publishable and secret, on reads and writes', async () => {
      expect((await heartbeat(p.keys.pubTest)).status).toBe(200);
      expect((await heartbeat(p.keys.skLive)).body).toMatchObject({ ok: true, env: 'production' });
      const read = await t.http.get('/v1/entitlements').query({ userId: 'nobody' }).set({ 'Crossdeck-Api-Key': p.keys.pubTest, Origin: WEB_ORIGIN });
      expect(read.status).toBe(200);
      const events = await t.http
        .post('/v1/events')
        .set({ 'Crossdeck-Api-Key': p.keys.skTest, 'Crossdeck-Sdk-Version': NODE_SDK })
        .send({ events: [{ name: 'server.started', eventId: randomUUID(), anonymousId: 'anon_node_1' }] });
      expect(events.status).toBe(202);
    });

    it('a revoked key: 401 key_revoked', async () => {
      const f = await createProjectWithApp(t);
      expect((await heartbeat(f.keys.pubTest)).status).toBe(200);
      for (const id of [f.keyIds.pubTest, f.keyIds.skTest]) {
        expect((await t.http.post(`/admin/v1/keys/${id}/revoke`).set(operatorAuth())).status).toBe(200);
      }
      expectError(await heartbeat(f.keys.pubTest), 401, 'key_revoked');
      expectError(await heartbeat(f.keys.skTest), 401, 'key_revoked');
    });

    it('an unknown key: 401 invalid_api_key; a malformed one or none: 401 missing_api_key', async () => {
      expectError(await heartbeat(`cd_pub_test_${'x'.repeat(32)}`), 401, 'invalid_api_key');
      expectError(await heartbeat(`cd_sk_live_${'y'.repeat(32)}`), 401, 'invalid_api_key');
      expectError(await heartbeat('cd_pub_nope'), 401, 'missing_api_key');
      expectError(await t.http.get('/v1/sdk/heartbeat').set({ 'Crossdeck-Sdk-Version': WEB_SDK, Origin: WEB_ORIGIN }), 401, 'missing_api_key');
    });

    it('Authorization is read first, then Service-Api-Key, then Crossdeck-Api-Key', async () => {
      const unknown = `cd_pub_test_${'z'.repeat(32)}`;
      expectError(await heartbeat(p.keys.pubTest, { Authorization: `Bearer ${unknown}` }), 401, 'invalid_api_key');
      expectError(await heartbeat(p.keys.pubTest, { 'Service-Api-Key': unknown }), 401, 'invalid_api_key');
      expect((await heartbeat(unknown, { 'Service-Api-Key': p.keys.pubTest })).status).toBe(200);
    });

    it('the platform lock still applies to a publishable key in Crossdeck-Api-Key', async () => {
      expectError(await heartbeat(p.keys.pubTest, { Origin: 'https://evil.example.com' }), 403, 'origin_not_allowed');
    });
  });

  describe('GET /v1/entitlements?customerId=cdcust_… with a publishable key', () => {
    it('known: the customer identify returned, with its active entitlements', async () => {
      const c = await newCustomer();
      expect(c.customerId).toMatch(/^cdcust_/);
      expect((await grant(c.customerId, 'pro_access')).status).toBe(200);
      const res = await t.http.get('/v1/entitlements').query({ customerId: c.customerId }).set(webClient(p));
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.headers['access-control-allow-origin']).toBe(WEB_ORIGIN);
      expect(res.body).toEqual({
        object: 'list',
        data: [
          {
            object: 'entitlement',
            key: 'pro_access',
            isActive: true,
            validUntil: expect.any(Number),
            source: { rail: 'manual', productId: 'manual', subscriptionId: expect.any(String) },
            updatedAt: expect.any(Number),
          },
        ],
        serviceCustomerId: c.customerId,
        crossdeckCustomerId: c.customerId,
        env: 'sandbox',
      });
    });

    it('unknown: 200 with data [] and serviceCustomerId ""', async () => {
      const res = await t.http
        .get('/v1/entitlements')
        .query({ customerId: `cdcust_${'0'.repeat(24)}` })
        .set(webClient(p));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ object: 'list', data: [], serviceCustomerId: '', crossdeckCustomerId: '', env: 'sandbox' });
    });

    it("another project's customer, or the other environment's, reads as unknown", async () => {
      const theirs = await newCustomer(other);
      expect((await grant(theirs.customerId, 'pro_access', other)).status).toBe(200);
      const empty = { object: 'list', data: [], serviceCustomerId: '', crossdeckCustomerId: '', env: 'sandbox' };
      expect((await t.http.get('/v1/entitlements').query({ customerId: theirs.customerId }).set(webClient(p))).body).toEqual(empty);
      const mine = await newCustomer();
      await grant(mine.customerId, 'pro_access');
      const live = await t.http.get('/v1/entitlements').query({ customerId: mine.customerId }).set(webClient(p, p.keys.pubLive));
      expect(live.body).toEqual({ ...empty, env: 'production' });
    });

    it('a forgotten customer reads as unknown; a bad prefix is still 400 invalid_customer', async () => {
      const c = await newCustomer();
      await grant(c.customerId, 'pro_access');
      expect((await forget({ customerId: c.customerId }, nodeClient(p.keys.skTest))).status).toBe(200);
      expect((await t.http.get('/v1/entitlements').query({ customerId: c.customerId }).set(webClient(p))).body.serviceCustomerId).toBe('');
      expectError(await t.http.get('/v1/entitlements').query({ customerId: 'cust_123' }).set(webClient(p)), 400, 'invalid_customer');
    });
  });

  describe('POST /v1/resolve with { userId } alone', () => {
    it('secret key, known user: tier 1 recognized / welcome_back with user', async () => {
      const c = await newCustomer();
      const res = await resolve({ userId: c.userId }, nodeClient(p.keys.skTest));
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.body).toEqual({
        object: 'resolve_result',
        status: 'recognized',
        trustTier: 1,
        user: { id: c.userId, email: `${c.userId}@example.com` },
        entitlements: null,
        recommendedAction: 'welcome_back',
        anonymousId: '',
        serviceCustomerId: c.customerId,
        crossdeckCustomerId: c.customerId,
        blocked: false,
        blockReason: null,
        blockedKey: null,
        reference: null,
        supportEmail: null,
        blockEventId: null,
      });
    });

    it('secret key, unknown user (or of another environment or project): tier 0 anonymous / onboard', async () => {
      const tier0 = {
        object: 'resolve_result',
        status: 'anonymous',
        trustTier: 0,
        user: null,
        entitlements: null,
        recommendedAction: 'onboard',
        anonymousId: '',
        serviceCustomerId: null,
        crossdeckCustomerId: null,
        blocked: false,
        blockReason: null,
        blockedKey: null,
        reference: null,
        supportEmail: null,
        blockEventId: null,
      };
      expect((await resolve({ userId: uid('stranger') }, nodeClient(p.keys.skTest))).body).toEqual(tier0);
      const c = await newCustomer();
      expect((await resolve({ userId: c.userId }, nodeClient(p.keys.skLive))).body).toEqual(tier0);
      expect((await resolve({ userId: c.userId }, nodeClient(other.keys.skTest))).body).toEqual(tier0);
      // A forgotten user is unknown.
      await forget({ userId: c.userId }, nodeClient(p.keys.skTest));
      expect((await resolve({ userId: c.userId }, nodeClient(p.keys.skTest))).body).toEqual(tier0);
    });

    it('never tier 2 or 3 without a device or a token, even for a device verified yesterday; a failed token changes nothing', async () => {
      const c = await newCustomer();
      const verified = await resolve({ userId: c.userId, anonymousId: c.anonymousId, idToken: await kit.token({ sub: c.userId }) }, webClient(p));
      expect(verified.body.trustTier).toBe(3);
      expect((await resolve({ anonymousId: c.anonymousId }, webClient(p))).body.trustTier).toBe(2);
      const byUser = await resolve({ userId: c.userId, passkeyAvailable: true }, nodeClient(p.keys.skTest));
      expect(byUser.body).toMatchObject({ status: 'recognized', trustTier: 1, recommendedAction: 'welcome_back', entitlements: null });
      const badToken = await resolve({ userId: c.userId, idToken: await kit.token({ sub: c.userId }, { key: kit.stranger }) }, nodeClient(p.keys.skTest));
      expect(badToken.status).toBe(200);
      expect(badToken.body).toMatchObject({ trustTier: 1, user: { id: c.userId } });
    });

    it('publishable key: still 400 invalid_param_value', async () => {
      const c = await newCustomer();
      const res = await resolve({ userId: c.userId }, webClient(p));
      expectError(res, 400, 'invalid_param_value');
    });
  });

  describe('tier-3 resolve: entitlements are the active keys as strings', () => {
    it('lists active keys only, sorted, as strings the clients can read', async () => {
      const c = await newCustomer();
      await grant(c.customerId, 'pro_access');
      await grant(c.customerId, 'ai_credits');
      await grant(c.customerId, 'refunded_addon');
      await revoke(c.customerId, 'refunded_addon');
      const res = await resolve({ anonymousId: c.anonymousId, userId: c.userId, idToken: await kit.token({ sub: c.userId }) }, webClient(p));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'authenticated', trustTier: 3, recommendedAction: 'enter', anonymousId: c.anonymousId });
      expect(res.body.entitlements).toEqual(['ai_credits', 'pro_access']);
    });

    it("never lists another project's or environment's entitlements for the same user id", async () => {
      const c = await newCustomer();
      await grant(c.customerId, 'pro_access');
      // Another project trusting the same identity provider: the same user id is its own customer there.
      const shared = await createProjectWithApp(t);
      await kit.configure(shared.projectId);
      const there = await resolve({ anonymousId: aid('shared'), userId: c.userId, idToken: await kit.token({ sub: c.userId }) }, webClient(shared));
      expect(there.body).toMatchObject({ trustTier: 3, entitlements: [] });
      const live = await resolve({ anonymousId: c.anonymousId, userId: c.userId, idToken: await kit.token({ sub: c.userId }) }, webClient(p, p.keys.pubLive));
      expect(live.body).toMatchObject({ trustTier: 3, entitlements: [] });
      const here = await resolve({ anonymousId: c.anonymousId, userId: c.userId, idToken: await kit.token({ sub: c.userId }) }, webClient(p));
      expect(here.body.entitlements).toEqual(['pro_access']);
    });
  });

  describe('POST /v1/identity/forget with { anonymousId } alone', () => {
    /** The customer's audit entries as the operator's timeline lists them. */
    const forgetAudits = async (customerId: string): Promise<{ eventType: string; decision: string; reason: string }[]> => {
      const res = await t.http.get(`/admin/v1/projects/${p.projectId}/customers/${customerId}/timeline?env=sandbox&limit=100`).set(operatorAuth());
      expect(res.status).toBe(200);
      expect(res.body.hasMore).toBe(false);
      return res.body.data.map(({ eventType, decision, reason }: { eventType: string; decision: string; reason: string }) => ({ eventType, decision, reason }));
    };

    it('secret key: the customer the device resolves to is erased (scope customer)', async () => {
      const c = await newCustomer();
      const res = await forget({ anonymousId: c.anonymousId }, nodeClient(p.keys.skTest));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'forgot',
        serviceCustomerId: c.customerId,
        crossdeckCustomerId: c.customerId,
        queuedAt: expect.any(Number),
        env: 'sandbox',
        scope: 'customer',
      });
      const directory = t.app.get(CustomerDirectory);
      expect(await directory.isActiveCustomer(sandbox(), c.customerId)).toBe(false);
      expect(await directory.findCustomerId(sandbox(), { userId: c.userId })).toBeNull();
      expect(await forgetAudits(c.customerId)).toEqual([
        { eventType: 'customer.forget_requested', decision: 'queued', reason: 'anonymous-only erasure requested with a secret key' },
      ]);
      // Repeating collapses to the first answer.
      expect((await forget({ anonymousId: c.anonymousId }, nodeClient(p.keys.skTest))).body).toEqual(res.body);
      expect(await forgetAudits(c.customerId)).toHaveLength(1);
    });

    it('publishable key, customer with a developer id: only the device is forgotten, the answer names the customer (scope device)', async () => {
      const c = await newCustomer();
      const laptop = aid('laptop');
      await identify({ userId: c.userId, anonymousId: laptop });
      const before = t.clock.nowMs();
      const res = await forget({ anonymousId: c.anonymousId }, webClient(p));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'forgot',
        serviceCustomerId: c.customerId,
        crossdeckCustomerId: c.customerId,
        queuedAt: expect.any(Number),
        env: 'sandbox',
        scope: 'device',
      });
      expect(res.body.queuedAt).toBeGreaterThanOrEqual(before);
      const directory = t.app.get(CustomerDirectory);
      expect(await directory.isActiveCustomer(sandbox(), c.customerId)).toBe(true);
      expect(await directory.findCustomerId(sandbox(), { anonymousId: c.anonymousId })).toBeNull();
      expect(await directory.findCustomerId(sandbox(), { anonymousId: laptop })).toBe(c.customerId);
      expect(await forgetAudits(c.customerId)).toEqual([expect.objectContaining({ eventType: 'customer.device_forgotten', decision: 'applied' })]);
    });

    it('a device no customer is behind: 200, serviceCustomerId null, scope device', async () => {
      const anonymousId = aid('never-identified');
      for (const headers of [webClient(p), nodeClient(p.keys.skTest)]) {
        const res = await forget({ anonymousId }, headers);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          object: 'forgot',
          serviceCustomerId: null,
          crossdeckCustomerId: null,
          queuedAt: expect.any(Number),
          env: 'sandbox',
          scope: 'device',
        });
      }
    });

    it("another project's device is never reached, with either key kind", async () => {
      const theirs = await newCustomer(other);
      for (const headers of [webClient(p), nodeClient(p.keys.skTest)]) {
        const res = await forget({ anonymousId: theirs.anonymousId }, headers);
        expect(res.body).toMatchObject({ serviceCustomerId: null, crossdeckCustomerId: null, scope: 'device' });
      }
      const directory = t.app.get(CustomerDirectory);
      expect(await directory.isActiveCustomer(sandbox(other), theirs.customerId)).toBe(true);
      expect(await directory.findCustomerId(sandbox(other), { anonymousId: theirs.anonymousId })).toBe(theirs.customerId);
    });

    it("the other environment's device is never reached", async () => {
      const c = await newCustomer();
      const res = await forget({ anonymousId: c.anonymousId }, nodeClient(p.keys.skLive));
      expect(res.body).toMatchObject({ serviceCustomerId: null, env: 'production', scope: 'device' });
      expect(await t.app.get(CustomerDirectory).isActiveCustomer(sandbox(), c.customerId)).toBe(true);
    });
  });

  describe("web errors: the client's level in properties.level", () => {
    /** The web client's batch (event-queue.ts): envelope v1, one error event built by reportError() and track(). */
    const webErrorBatch = (fingerprint: string, level: unknown, anonymousId: string, topLevel?: string) => ({
      envelopeVersion: 1,
      appId: p.appId,
      environment: 'sandbox',
      sdk: { name: '@cross-deck/web', version: WEB_SDK.split('@').pop() },
      events: [
        {
          eventId: `evt_${Date.now().toString(36)}${randomUUID().slice(0, 8)}`,
          name: 'error.handled',
          timestamp: Date.now(),
          seq: 3,
          context: { os: 'macOS', sdkName: '@cross-deck/web', sdkVersion: WEB_SDK.split('@').pop(), locale: 'en-GB', browser: 'Chrome', browserVersion: '131' },
          properties: {
            screenWidth: 1440,
            screenHeight: 900,
            sessionId: `ses_${randomUUID()}`,
            fingerprint,
            level,
            errorType: 'TypeError',
            message: 'x is not a function',
            stack: 'TypeError: x is not a function\n    at onClick (https://app.example.com/assets/index.js:1:200)',
            frames: [{ function: 'onClick', filename: 'https://app.example.com/assets/index.js', lineno: 1, colno: 200, inApp: true }],
            tags: { area: 'checkout' },
            context: {},
            breadcrumbs: [],
          },
          anonymousId,
          ...(topLevel === undefined ? {} : { level: topLevel }),
        },
      ],
    });
    const send = (body: object) => t.http.post('/v1/events').set(webClient(p)).set('Content-Type', 'application/json').send(body);

    it('captureException(err, { level: "warning" }): the issue reads show warning, in /v1/errors and /v1/server/errors/issues', async () => {
      const fingerprint = randomUUID().replace(/-/g, '').slice(0, 8);
      expect((await send(webErrorBatch(fingerprint, 'warning', aid('web')))).status).toBe(202);
      const impact = await t.http.get('/v1/errors').query({ fingerprint }).set(nodeClient(p.keys.skTest));
      expect(impact.status).toBe(200);
      expect(impact.body.data).toEqual(expect.objectContaining({ fingerprint, level: 'warning', occurrences: 1 }));
      const issue = await t.http.get(`/v1/server/errors/issues/${fingerprint}`).set(nodeClient(p.keys.skTest));
      expect(issue.status).toBe(200);
      expect(issue.body).toEqual(expect.objectContaining({ lastLevel: 'warning', latestEvent: expect.objectContaining({ level: 'warning' }) }));
      const list = await t.http.get('/v1/server/errors/issues').set(nodeClient(p.keys.skTest));
      expect(list.body.data.find((i: { fingerprint: string }) => i.fingerprint === fingerprint)).toEqual(expect.objectContaining({ lastLevel: 'warning' }));
    });

    it('a top-level level wins; a properties.level outside error, warning, info is no level', async () => {
      const top = randomUUID().replace(/-/g, '').slice(0, 8);
      expect((await send(webErrorBatch(top, 'info', aid('web'), 'error'))).status).toBe(202);
      const bad = randomUUID().replace(/-/g, '').slice(0, 8);
      expect((await send(webErrorBatch(bad, 'fatal', aid('web')))).status).toBe(202);
      const read = async (fingerprint: string) => (await t.http.get('/v1/errors').query({ fingerprint }).set(nodeClient(p.keys.skTest))).body.data.level;
      expect(await read(top)).toBe('error');
      expect(await read(bad)).toBeNull();
    });
  });
});

describe('clients: the OpenAPI document describes what the clients send and read', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('both client-version headers, the Crossdeck-Api-Key scheme, forget scope and tier-3 keys', async () => {
    const doc = (await t.http.get('/docs/json')).body;
    for (const [path, method] of [
      ['/v1/sdk/heartbeat', 'get'],
      ['/v1/events', 'post'],
    ]) {
      const headers = doc.paths[path][method].parameters.filter((param: any) => param.in === 'header').map((param: any) => param.name);
      expect(headers).toEqual(expect.arrayContaining(['Service-Sdk-Version', 'Crossdeck-Sdk-Version']));
    }
    expect(doc.components.securitySchemes.apiKeyClientHeader).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'Crossdeck-Api-Key' }));
    expect(doc.components.schemas.ForgotView.properties.scope).toEqual(expect.objectContaining({ enum: ['customer', 'device'] }));
    expect(doc.components.schemas.ForgotView.required).toContain('scope');
    expect(doc.components.schemas.ResolveResultView.properties.entitlements).toEqual(expect.objectContaining({ type: 'array', items: { type: 'string' } }));
  });

  it("the revenue read's byRail holds numbers (the CLI's by-rail line), each rail's figures under byRailDetail, at the top level and in current", async () => {
    const doc = (await t.http.get('/docs/json')).body;
    const schemas = doc.components.schemas;
    const ref = (name: string) => expect.objectContaining({ $ref: `#/components/schemas/${name}` });
    for (const rail of ['ios_store', 'card_payments', 'android_store']) {
      expect(schemas.RevenueByRailView.properties[rail]).toEqual(expect.objectContaining({ type: 'integer', nullable: true }));
      expect(schemas.RevenueByRailDetailView.properties[rail]).toEqual(ref('RailRevenueView'));
    }
    expect(Object.keys(schemas.RailRevenueView.properties).sort()).toEqual(['activeTrials', 'mrrCents', 'payingCustomers']);
    for (const figures of [schemas.RevenueFiguresView, schemas.RevenueData]) {
      expect(figures.properties.byRail).toEqual(expect.objectContaining({ allOf: [ref('RevenueByRailView')] }));
      expect(figures.properties.byRailDetail).toEqual(expect.objectContaining({ allOf: [ref('RevenueByRailDetailView')] }));
    }
    expect(schemas.RevenueData.properties.current).toEqual(expect.objectContaining({ allOf: [ref('RevenueFiguresView')] }));
  });
});

describe("clients: the CLI's default login (scope prism.read projects:write apps:write keys:write)", () => {
  const CLI_DEFAULT_SCOPE = 'prism.read projects:write apps:write keys:write';
  const REDIRECT = 'http://127.0.0.1:53682/callback';
  /** The CLI's JSON posts (oauth/client.ts postJson) and its API calls (oauth/api.ts). */
  const json = { 'Content-Type': 'application/json', Accept: 'application/json' };
  const cli = (token: string) => ({ Authorization: `Bearer ${token}`, ...json });
  let t: TestApp;
  let fx: ProjectFixture;
  let workspaceId: string;
  let cookie: string;

  beforeAll(async () => {
    t = await createTestApp();
    fx = await createProjectWithApp(t);
    workspaceId = (await t.http.post('/admin/v1/workspaces').set(operatorAuth()).send({ name: 'CLI login' })).body.id;
    await t.http.post(`/admin/v1/workspaces/${workspaceId}/projects/${fx.projectId}`).set(operatorAuth());
    const session = await t.http.post('/console/api/session').send({ token: t.config.operatorToken });
    cookie = ([] as string[]).concat(session.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
  });
  afterAll(async () => t.close());

  /** register, authorize (the consent page submitted with the boxes it ticks), token: the CLI's login. */
  async function login(): Promise<{ page: string; tokens: Record<string, unknown> }> {
    const clientId = (
      await t.http
        .post('/oauth/register')
        .set(json)
        .send({ client_name: 'Crossdeck CLI', redirect_uris: [REDIRECT], application_type: 'native' })
    ).body.client_id as string;
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: 'cli_state',
      scope: CLI_DEFAULT_SCOPE,
    });
    const page = await t.http.get(`/oauth/authorize?${query}`).set('Cookie', cookie);
    expect(page.status).toBe(200);
    const form = new URLSearchParams({ workspace: workspaceId, decision: 'approve' });
    for (const m of page.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) form.append(m[1], m[2].replace(/&amp;/g, '&'));
    for (const m of page.text.matchAll(/<input type="checkbox" id="[^"]+" name="scope" value="([^"]+)" checked>/g)) form.append('scope', m[1]);
    const approved = await t.http.post('/oauth/authorize').set('Cookie', cookie).set('Content-Type', 'application/x-www-form-urlencoded').send(form.toString());
    expect(approved.status).toBe(302);
    const code = new URL(approved.headers.location).searchParams.get('code');
    expect(code).toEqual(expect.any(String));
    const tokens = await t.http
      .post('/oauth/token')
      .set(json)
      .send({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: REDIRECT });
    expect(tokens.status).toBe(200);
    return { page: page.text, tokens: tokens.body };
  }

  it('the consent page shows the aggregate read set and workspace:write, all ticked, nothing else', async () => {
    const { page } = await login();
    const boxes = [...page.matchAll(/<input type="checkbox" id="[^"]+" name="scope" value="([^"]+)"( checked)?>/g)].map((m) => [m[1], Boolean(m[2])]);
    expect(boxes).toEqual([
      ['reporting:aggregate', true],
      ['revenue:read', true],
      ['errors:read', true],
      ['buckets:read', true],
      ['workspace:write', true],
    ]);
  });

  it('the issued token creates a project and an app (projects create, apps create) and reads the aggregate set', async () => {
    const { tokens } = await login();
    expect(String(tokens.scope).split(' ').sort()).toEqual(['buckets:read', 'errors:read', 'reporting:aggregate', 'revenue:read', 'workspace:write']);
    const token = tokens.access_token as string;
    const project = await t.http.post('/v1/projects').set(cli(token)).send({ name: 'From the CLI' });
    expect(project.status).toBe(201);
    const projectId = project.body.data.project.project as string;
    const app = await t.http.post('/v1/apps').set(cli(token)).send({ projectId, platform: 'web', domain: 'cli.example.com' });
    expect(app.status).toBe(201);
    expect(app.body.data.app).toEqual(expect.objectContaining({ project: projectId, platform: 'web' }));

    for (const path of ['/v1/revenue', '/v1/customers', '/v1/errors?fingerprint=abc', '/v1/buckets', '/v1/acquisition']) {
      const res = await t.http.get(`${path}${path.includes('?') ? '&' : '?'}project=${projectId}`).set(cli(token));
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
    // Identity reads were not asked for.
    expectError(await t.http.get(`/v1/customers/ranked?project=${projectId}`).set(cli(token)), 403, 'insufficient_scope');
  });
});

describe('clients: the 426 floor with SDK_VERSION_ENFORCEMENT=enabled', () => {
  let strict: TestApp;
  let f: ProjectFixture;

  beforeAll(async () => {
    strict = await createTestApp({ SDK_VERSION_ENFORCEMENT: 'enabled' });
    f = await createProjectWithApp(strict);
  });
  afterAll(async () => strict.close());

  const event = () => ({ name: 'server.request', eventId: randomUUID(), anonymousId: 'anon_node_proc' });

  it('@cross-deck/node@0.1.0 in Crossdeck-Sdk-Version: 426 sdk_version_unsupported, surface node', async () => {
    const res = await strict.http
      .post('/v1/events')
      .set(nodeClient(f.keys.skTest, '@cross-deck/node@0.1.0'))
      .send({ events: [event()] });
    expectError(res, 426, 'sdk_version_unsupported');
    expect(res.body.error).toMatchObject({ type: 'version_error', minVersion: '0.3.0', surface: 'node' });
  });

  it('@cross-deck/node@0.1.0 in the batch envelope, as the Node client sends it: 426', async () => {
    const res = await strict.http
      .post('/v1/events')
      .set(nodeClient(f.keys.skTest, '@cross-deck/node@0.1.0'))
      .send({ events: [event()], appId: f.appId, environment: 'sandbox', sdk: { name: '@cross-deck/node', version: '0.1.0' } });
    expectError(res, 426, 'sdk_version_unsupported');
    expect(res.body).toMatchObject({ minVersion: '0.3.0', surface: 'node' });
  });

  it('current clients pass the floor', async () => {
    const node = await strict.http
      .post('/v1/events')
      .set(nodeClient(f.keys.skTest))
      .send({ events: [event()], appId: f.appId, environment: 'sandbox', sdk: { name: '@cross-deck/node', version: '1.2.0' } });
    expect(node.status).toBe(202);
    const web = await strict.http
      .post('/v1/events')
      .set(webClient(f))
      .set('Idempotency-Key', randomUUID())
      .send({ events: [event()], appId: f.appId, environment: 'sandbox', sdk: { name: '@cross-deck/web', version: '1.14.1' } });
    expect(web.status).toBe(202);
  });
});
