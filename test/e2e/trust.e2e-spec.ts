import { CustomerDirectory, ErasureWorker } from '#identity';
import { createProjectWithApp, keyHeaders, type ProjectFixture, setRateLimits } from '../support/fixtures.js';
import { explain, loadIdentityVolume } from '../support/identity-volume.js';
import { type IdentityProviderKit, type TokenOptions, aid, identityProviderKit, uid } from '../support/id-tokens.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { testScope } from '../support/scopes.js';
import { FIND_DEVICE_BINDING_SQL } from '../../libs/trust/src/bindings/device-binding.repository.js';
import { CUSTOMER_PROFILE_SQL } from '../../libs/identity/src/customers/identity.repository.js';

const DAY = 86_400;

describe('trust: POST /v1/resolve', () => {
  let t: TestApp;
  let p: ProjectFixture;

  const resolve = (body: Record<string, unknown>, key = p.keys.pubTest) => t.http.post('/v1/resolve').set(keyHeaders(p, key)).send(body);
  const identify = (body: Record<string, unknown>, key = p.keys.pubTest) => t.http.post('/v1/identify').set(keyHeaders(p, key)).send(body);
  const advance = (seconds: number) => t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds });

  let kit: IdentityProviderKit;
  const token = (claims: Record<string, unknown>, options?: TokenOptions) => kit.token(claims, options);

  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
    await setRateLimits(t, p.projectId, { alias: { sustained: 1000, burst: 10000 }, forget: { sustained: 1000, burst: 10000 } });
    kit = await identityProviderKit(t);
    await kit.configure(p.projectId);
  });
  afterAll(async () => t.close());

  describe('request rules', () => {
    it.each([
      ['empty body', {}],
      ['userId alone', { userId: 'u1' }],
      ['idToken alone', { idToken: 'x.y.z' }],
      ['passkeyAvailable alone', { passkeyAvailable: true }],
    ])('no identity to resolve (%s): 400 invalid_param_value', async (_label, body) => {
      const res = await resolve(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_param_value' });
    });

    it('malformed fields: 400 invalid_param_value', async () => {
      expect((await resolve({ anonymousId: 42 })).body.error.code).toBe('invalid_param_value');
      expect((await resolve({ anonymousId: 'd1', passkeyAvailable: 'yes' })).body.error.code).toBe('invalid_param_value');
    });

    it('a NUL character in anonymousId is 400 invalid_param_value, not a 500', async () => {
      const res = await resolve({ anonymousId: 'd\u0000' });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_param_value');
    });

    it('needs a key', async () => {
      expect((await t.http.post('/v1/resolve').send({ anonymousId: 'd' })).status).toBe(401);
    });
  });

  it('tier 0: an unknown device is anonymous, onboard; private, no-store', async () => {
    const anonymousId = aid();
    const res = await resolve({ anonymousId });
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.body).toEqual({
      object: 'resolve_result',
      status: 'anonymous',
      trustTier: 0,
      user: null,
      entitlements: null,
      recommendedAction: 'onboard',
      anonymousId,
      serviceCustomerId: null,
      crossdeckCustomerId: null,
      blocked: false,
      blockReason: null,
      blockedKey: null,
      reference: null,
      supportEmail: null,
      blockEventId: null,
    });
  });

  it('tier 1: the device maps to a known user (identify) but was never verified here', async () => {
    const userId = uid();
    const anonymousId = aid();
    await identify({ userId, anonymousId, email: 'ada@example.com' });
    const res = await resolve({ anonymousId, passkeyAvailable: true });
    expect(res.body).toEqual({
      object: 'resolve_result',
      status: 'recognized',
      trustTier: 1,
      user: { id: userId, email: 'ada@example.com' },
      entitlements: null,
      recommendedAction: 'welcome_back',
      anonymousId,
      serviceCustomerId: expect.stringMatching(/^cdcust_/),
      crossdeckCustomerId: expect.stringMatching(/^cdcust_/),
      blocked: false,
      blockReason: null,
      blockedKey: null,
      reference: null,
      supportEmail: null,
      blockEventId: null,
    });
  });

  it('tier 3 records the device binding; then tier 2 within 90 days, tier 1 after', async () => {
    const userId = uid();
    const anonymousId = aid();
    const idToken = await token({ sub: userId, email: 'grace@example.com', given_name: 'Grace' });
    const verified = await resolve({ anonymousId, userId, idToken });
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({
      object: 'resolve_result',
      status: 'authenticated',
      trustTier: 3,
      user: { id: userId, email: 'grace@example.com', firstName: 'Grace' },
      entitlements: [],
      recommendedAction: 'enter',
      anonymousId,
      serviceCustomerId: expect.stringMatching(/^cdcust_/),
      crossdeckCustomerId: expect.stringMatching(/^cdcust_/),
      blocked: false,
      blockReason: null,
      blockedKey: null,
      reference: null,
      supportEmail: null,
      blockEventId: null,
    });
    const customerId = await t.app.get(CustomerDirectory).findCustomerId(testScope(p.projectId, 'sandbox'), { userId });
    expect(customerId).toMatch(/^cdcust_/);
    const binding = await t.dataSource.query(`SELECT customer_id, user_id FROM device_bindings WHERE project_id = $1 AND anonymous_id = $2`, [
      p.projectId,
      anonymousId,
    ]);
    expect(binding).toEqual([{ customer_id: customerId, user_id: userId }]);

    // Same device without a token: tier 2.
    let res = await resolve({ anonymousId });
    expect(res.body).toMatchObject({
      status: 'recognized',
      trustTier: 2,
      recommendedAction: 'silent_refresh',
      user: { id: userId, email: 'grace@example.com' },
      entitlements: null,
    });
    expect(res.body.user.firstName).toBeUndefined();
    res = await resolve({ anonymousId, passkeyAvailable: true });
    expect(res.body).toMatchObject({ trustTier: 2, recommendedAction: 'one_tap' });

    await advance(89 * DAY);
    res = await resolve({ anonymousId, passkeyAvailable: true });
    expect(res.body).toMatchObject({ trustTier: 2, recommendedAction: 'one_tap' });

    await advance(2 * DAY);
    res = await resolve({ anonymousId, passkeyAvailable: true });
    expect(res.body).toMatchObject({ status: 'recognized', trustTier: 1, recommendedAction: 'welcome_back', user: { id: userId } });

    // A new verification renews the window.
    await resolve({ anonymousId, userId, idToken: await token({ sub: userId }) });
    res = await resolve({ anonymousId });
    expect(res.body).toMatchObject({ trustTier: 2, recommendedAction: 'silent_refresh' });
  });

  // The items are the active entitlement keys (strings), not entitlement objects.
  it("tier 3 lists the keys of the customer's active entitlements", async () => {
    const userId = uid();
    const anonymousId = aid();
    const first = await resolve({ anonymousId, userId, idToken: await token({ sub: userId }) });
    expect(first.body.entitlements).toEqual([]);
    const customerId = await t.app.get(CustomerDirectory).findCustomerId(testScope(p.projectId, 'sandbox'), { userId });
    const grant = await t.http
      .post(`/v1/server/customers/${customerId}/grant`)
      .set(keyHeaders(p, p.keys.skTest))
      .send({ entitlementKey: 'pro_access', duration: 'P30D', reason: 'Support goodwill grant for the outage' });
    expect(grant.status).toBe(200);
    const res = await resolve({ anonymousId, userId, idToken: await token({ sub: userId }) });
    expect(res.body.trustTier).toBe(3);
    expect(res.body.entitlements).toEqual(['pro_access']);
  });

  it('an invalid, expired or foreign token never errors and never elevates: falls back to the device binding', async () => {
    const userId = uid();
    const anonymousId = aid();
    await identify({ userId, anonymousId });
    const bad = [
      await token({ sub: userId }, { key: kit.stranger }),
      await token({ sub: userId }, { exp: t.clock.nowSeconds() - 600 }),
      await token({ sub: userId }, { aud: 'another-app' }),
      await token({ sub: 'someone_else' }),
      'garbage',
    ];
    for (const idToken of bad) {
      const res = await resolve({ anonymousId, userId, idToken });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'recognized', trustTier: 1, recommendedAction: 'welcome_back', entitlements: null });
    }
    const unknownDevice = await resolve({ anonymousId: aid(), userId, idToken: bad[0] });
    expect(unknownDevice.body).toMatchObject({ trustTier: 0, status: 'anonymous', user: null });
    // No device at all: anonymous, with an empty anonymousId.
    const noDevice = await resolve({ userId, idToken: bad[1] });
    expect(noDevice.status).toBe(200);
    expect(noDevice.body).toEqual({
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
    });
    // None of them recorded a binding.
    expect(await t.dataSource.query(`SELECT 1 FROM device_bindings WHERE anonymous_id = $1`, [anonymousId])).toEqual([]);
  });

  it('server-to-server: a secret key with a verified pair and no anonymousId is tier 3', async () => {
    const userId = uid();
    const res = await resolve({ userId, idToken: await token({ sub: userId }) }, p.keys.skTest);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: 'authenticated',
      trustTier: 3,
      user: { id: userId },
      entitlements: [],
      recommendedAction: 'enter',
      anonymousId: '',
    });
  });

  it('bindings stay in their environment', async () => {
    const userId = uid();
    const anonymousId = aid();
    await resolve({ anonymousId, userId, idToken: await token({ sub: userId }) });
    expect((await resolve({ anonymousId })).body.trustTier).toBe(2);
    expect((await resolve({ anonymousId }, p.keys.pubLive)).body.trustTier).toBe(0);
  });

  it('a forgotten customer is unknown at once; the erasure removes its device bindings', async () => {
    const userId = uid();
    const anonymousId = aid();
    await resolve({ anonymousId, userId, idToken: await token({ sub: userId }) });
    expect((await resolve({ anonymousId })).body.trustTier).toBe(2);
    const forgot = await t.http.post('/v1/identity/forget').set(keyHeaders(p, p.keys.skTest)).send({ userId });
    expect(forgot.status).toBe(200);
    expect((await resolve({ anonymousId })).body).toMatchObject({ trustTier: 0, user: null });
    await advance(DAY);
    await t.app.get(ErasureWorker).runOnce({ projectId: p.projectId });
    expect(await t.dataSource.query(`SELECT 1 FROM device_bindings WHERE anonymous_id = $1`, [anonymousId])).toEqual([]);
  });

  describe('hot queries use indexes', () => {
    let pid = '';
    beforeAll(async () => {
      pid = await loadIdentityVolume(t);
    }, 60_000);

    const plan = (sql: string, params: unknown[]) => explain(t, sql, params);

    it('device binding by (project, env, anonymousId); customer profile by id and its aliases by customer', async () => {
      // The repositories' own statements, not copies.
      const bindingPlan = await plan(FIND_DEVICE_BINDING_SQL, [pid, 'sandbox', 'd']);
      expect(bindingPlan).toMatch(/Index Scan using device_bindings_pk/);
      expect(bindingPlan).not.toMatch(/Seq Scan/);
      const profilePlan = await plan(CUSTOMER_PROFILE_SQL, [pid, 'sandbox', 'cdcust_x', 'developer']);
      expect(profilePlan).toMatch(/Index Scan using customers_(pkey|scope_id_uq)/);
      expect(profilePlan).toMatch(/Index (Only )?Scan using customer_aliases_customer_idx/);
      expect(profilePlan).not.toMatch(/Seq Scan/);
    });
  });
});
