import { createProjectWithApp, keyHeaders, type ProjectFixture, setRateLimits } from '../support/fixtures.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { entitlementsHarness, GRANT_ID, REASON, DAY } from '../support/harness/entitlements.js';

describe('entitlements: reads (GET /v1/entitlements, GET /v1/server/customers/{customerId}/entitlements), isolation, expiry', () => {
  const h = entitlementsHarness();
  let t: TestApp;
  let fx: ProjectFixture;
  beforeAll(() => {
    ({ t, fx } = h);
  });
  const { sk, pub, now, newCustomer, grant, revoke, serverRead, publicRead, audit, writeRail } = h;

  describe('GET /v1/entitlements', () => {
    it('reads the calling customer by userId or anonymousId with a publishable key, private no-store', async () => {
      const { customerId, userId, anonymousId } = await newCustomer(fx.keys.pubTest);
      await grant(customerId, { entitlementKey: 'pro_access', duration: 'lifetime', reason: REASON });
      for (const query of [{ userId }, { anonymousId }]) {
        const res = await publicRead(query);
        expect(res.status).toBe(200);
        expect(res.headers['cache-control']).toBe('private, no-store');
        expect(res.body).toEqual({
          object: 'list',
          data: [
            {
              object: 'entitlement',
              key: 'pro_access',
              isActive: true,
              validUntil: null,
              source: { rail: 'manual', productId: 'manual', subscriptionId: expect.stringMatching(GRANT_ID) },
              updatedAt: expect.any(Number),
            },
          ],
          serviceCustomerId: customerId,
          crossdeckCustomerId: customerId,
          env: 'sandbox',
        });
      }
    });

    it('reads any customer by customerId, userId or anonymousId with a secret key; also without the /v1 prefix', async () => {
      const { customerId, userId } = await newCustomer();
      await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON });
      for (const query of [{ customerId }, { userId }]) {
        const res = await publicRead(query, sk());
        expect(res.status).toBe(200);
        expect(res.body.serviceCustomerId).toBe(customerId);
        expect(res.body.data.map((e: any) => e.key)).toEqual(['pro_access']);
      }
      const bare = await t.http.get('/entitlements').query({ customerId }).set(sk());
      expect(bare.status).toBe(200);
      expect(bare.body.data).toHaveLength(1);
    });

    it('returns active entitlements only', async () => {
      const { customerId, userId } = await newCustomer();
      await grant(customerId, { entitlementKey: 'kept', duration: 'P30D', reason: REASON });
      await grant(customerId, { entitlementKey: 'dropped', duration: 'P30D', reason: REASON });
      await revoke(customerId, { entitlementKey: 'dropped', reason: 'Refunded' });
      await writeRail(customerId, 'lapsed_rail', 'android_store', now() - 60);
      const res = await publicRead({ userId });
      expect(res.body.data.map((e: any) => e.key)).toEqual(['kept']);
    });

    it('no hint: 400 missing_customer; several hints read the customer they resolve to; a repeated hint: 400 invalid_param_value', async () => {
      expectError(await publicRead({}), 400, 'missing_customer');
      expectError(await publicRead({ userId: '' }), 400, 'missing_customer');
      expectError(await publicRead({}, sk()), 400, 'missing_customer');
      // userId with anonymousId (the public Node client sends both): the customer they resolve to.
      const two = await publicRead({ userId: 'u1', anonymousId: 'a1' });
      expect(two.status).toBe(200);
      expect(two.body).toMatchObject({ data: [], serviceCustomerId: '', crossdeckCustomerId: '' });
      // A customer id beside them wins (unknown here: an empty list, not the user's).
      const named = await publicRead({ customerId: 'cdcust_x', userId: 'u1' }, sk());
      expect(named.status).toBe(200);
      expect(named.body.serviceCustomerId).toBe('');
      const repeated = await t.http.get('/v1/entitlements?userId=a&userId=b').set(pub());
      expectError(repeated, 400, 'invalid_param_value');
      expect(repeated.body.error.message).toBe('userId must be a string');
    });

    it('a NUL character (%00) in a hint, a path id or a reason is 400 invalid_param_value, never a 500', async () => {
      expectError(await t.http.get('/v1/entitlements?userId=u%00').set(pub()), 400, 'invalid_param_value');
      expectError(await t.http.get('/v1/entitlements?customerId=cdcust_%00').set(sk()), 400, 'invalid_param_value');
      expectError(await t.http.get('/v1/server/customers/cdcust_%00/entitlements').set(sk()), 400, 'invalid_param_value');
      const { customerId } = await newCustomer();
      expectError(await grant(customerId, { entitlementKey: 'nul_reason', duration: 'P30D', reason: `${REASON}\u0000` }), 400, 'invalid_param_value');
      expect((await serverRead(customerId)).body.data).toEqual([]);
      expectError(await revoke(customerId, { entitlementKey: 'nul_reason', reason: 'a\u0000' }), 400, 'invalid_param_value');
    });

    it('customerId without cdcust_: 400 invalid_customer, with either key kind', async () => {
      expectError(await publicRead({ customerId: 'cust_123' }, sk()), 400, 'invalid_customer');
      expectError(await publicRead({ customerId: 'cust_123' }), 400, 'invalid_customer');
    });

    // Either key kind may name a customerId: a cdcust_ id is what identify handed the client.
    it('a publishable key reads by the cdcust_ id identify returned', async () => {
      const { customerId } = await newCustomer();
      await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON });
      const res = await publicRead({ customerId });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'list',
        data: [expect.objectContaining({ object: 'entitlement', key: 'pro_access', isActive: true })],
        serviceCustomerId: customerId,
        crossdeckCustomerId: customerId,
        env: 'sandbox',
      });
    });

    it('unknown customer: 200 with data [] and serviceCustomerId ""', async () => {
      const empty = { object: 'list', data: [], serviceCustomerId: '', crossdeckCustomerId: '', env: 'sandbox' };
      for (const [query, headers] of [
        [{ userId: 'nobody_here' }, pub()],
        [{ anonymousId: 'no_device' }, pub()],
        [{ customerId: 'cdcust_doesnotexist' }, sk()],
      ] as const) {
        const res = await publicRead(query, headers);
        expect(res.status).toBe(200);
        expect(res.headers['cache-control']).toBe('private, no-store');
        expect(res.body).toEqual(empty);
      }
      const live = await publicRead({ userId: 'nobody_here' }, pub(fx.keys.pubLive));
      expect(live.body).toEqual({ ...empty, env: 'production' });
    });

    it('a forgotten customer reads as unknown', async () => {
      const { customerId, userId } = await newCustomer();
      await grant(customerId, { entitlementKey: 'pro_access', duration: 'lifetime', reason: REASON });
      const forget = await t.http.post('/v1/identity/forget').set(sk()).send({ customerId });
      expect(forget.status).toBe(200);
      expect((await publicRead({ userId })).body).toEqual({ object: 'list', data: [], serviceCustomerId: '', crossdeckCustomerId: '', env: 'sandbox' });
      expect((await publicRead({ customerId }, sk())).body.serviceCustomerId).toBe('');
      expectError(await serverRead(customerId), 400, 'invalid_customer');
      expectError(await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON }), 400, 'invalid_customer');
    });

    it('needs a key: 401 missing_api_key', async () => {
      expectError(await t.http.get('/v1/entitlements').query({ userId: 'x' }), 401, 'missing_api_key');
    });

    it('the entitlements bucket: 429 rate_limited with Retry-After and X-Service-Sample-Rate past the override', async () => {
      const small = await createProjectWithApp(t);
      await setRateLimits(t, small.projectId, { entitlements: { sustained: 1, burst: 2 } });
      const headers = keyHeaders(small, small.keys.pubTest);
      const first = await t.http.get('/v1/entitlements').query({ userId: 'someone' }).set(headers);
      const second = await t.http.get('/v1/entitlements').query({ userId: 'someone' }).set(headers);
      expect([first.status, second.status]).toEqual([200, 200]);
      const third = await t.http.get('/v1/entitlements').query({ userId: 'someone' }).set(headers);
      expectError(third, 429, 'rate_limited');
      expect(third.body.error.type).toBe('rate_limit_error');
      expect(Number(third.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(third.headers['x-service-sample-rate'])).toBeGreaterThanOrEqual(0);
      expect(Number(third.headers['x-service-sample-rate'])).toBeLessThanOrEqual(1);
      // the server read spends the same bucket; production has its own bucket
      expectError(await t.http.get('/v1/server/customers/cdcust_x/entitlements').set(keyHeaders(small, small.keys.skTest)), 429, 'rate_limited');
      expect((await t.http.get('/v1/entitlements').query({ userId: 'someone' }).set(keyHeaders(small, small.keys.pubLive))).status).toBe(200);
      // another project is not affected
      expect((await publicRead({ userId: 'someone' })).status).toBe(200);
    });
  });

  describe('GET /v1/server/customers/{customerId}/entitlements', () => {
    it('same envelope as the public read, private no-store', async () => {
      const { customerId } = await newCustomer();
      await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON });
      const res = await serverRead(customerId);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.body).toEqual({
        object: 'list',
        data: [expect.objectContaining({ object: 'entitlement', key: 'pro_access', isActive: true })],
        serviceCustomerId: customerId,
        crossdeckCustomerId: customerId,
        env: 'sandbox',
      });
      const noGrants = await newCustomer();
      expect((await serverRead(noGrants.customerId)).body).toEqual({
        object: 'list',
        data: [],
        serviceCustomerId: noGrants.customerId,
        crossdeckCustomerId: noGrants.customerId,
        env: 'sandbox',
      });
    });

    it('unknown customer or bad prefix: 400 invalid_customer', async () => {
      expectError(await serverRead('cdcust_doesnotexist'), 400, 'invalid_customer');
      expectError(await serverRead('cust_abc'), 400, 'invalid_customer');
    });
  });

  describe('server endpoints refuse publishable keys', () => {
    it('401 invalid_api_key on read, grant and revoke', async () => {
      const { customerId } = await newCustomer();
      expectError(await serverRead(customerId, pub()), 401, 'invalid_api_key');
      expectError(await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON }, pub()), 401, 'invalid_api_key');
      expectError(await revoke(customerId, { entitlementKey: 'pro_access', reason: 'x' }, pub()), 401, 'invalid_api_key');
      expectError(await grant(customerId, {}, { Authorization: `Bearer ${fx.keys.pubLive}` }), 401, 'invalid_api_key');
      expectError(await t.http.post(`/v1/server/customers/${customerId}/grant`).send({}), 401, 'missing_api_key');
      expect((await serverRead(customerId)).body.data).toEqual([]);
    });
  });

  describe('environment isolation', () => {
    it('a sandbox grant is invisible to production keys, and production keys cannot touch the sandbox customer', async () => {
      const { customerId, userId, anonymousId } = await newCustomer();
      const g = await grant(customerId, { entitlementKey: 'sandbox_only', duration: 'lifetime', reason: REASON });
      expect(g.body.env).toBe('sandbox');
      // the same person in production is another customer, with no entitlements
      const live = await t.http.post('/v1/identify').set(sk(fx.keys.skLive)).send({ userId, anonymousId });
      expect(live.status).toBe(200);
      expect(live.body.serviceCustomerId).not.toBe(customerId);
      const liveRead = await publicRead({ userId }, pub(fx.keys.pubLive));
      expect(liveRead.body).toEqual({
        object: 'list',
        data: [],
        serviceCustomerId: live.body.serviceCustomerId,
        crossdeckCustomerId: live.body.serviceCustomerId,
        env: 'production',
      });
      expect((await publicRead({ customerId }, sk(fx.keys.skLive))).body).toEqual({
        object: 'list',
        data: [],
        serviceCustomerId: '',
        crossdeckCustomerId: '',
        env: 'production',
      });
      expectError(await serverRead(customerId, sk(fx.keys.skLive)), 400, 'invalid_customer');
      expectError(await grant(customerId, { entitlementKey: 'x_live', duration: 'P30D', reason: REASON }, sk(fx.keys.skLive)), 400, 'invalid_customer');
      expectError(await revoke(customerId, { entitlementKey: 'sandbox_only', reason: 'x' }, sk(fx.keys.skLive)), 400, 'invalid_customer');
      expectError(await audit(g.body.auditEventId, sk(fx.keys.skLive)), 400, 'invalid_param_value');
      // a production grant to the production customer stays in production
      const liveGrant = await grant(live.body.serviceCustomerId, { entitlementKey: 'live_only', duration: 'P30D', reason: REASON }, sk(fx.keys.skLive));
      expect(liveGrant.body.env).toBe('production');
      expect((await publicRead({ userId }, pub(fx.keys.pubLive))).body.data.map((e: any) => e.key)).toEqual(['live_only']);
      expect((await publicRead({ userId })).body.data.map((e: any) => e.key)).toEqual(['sandbox_only']);
    });

    it("another project cannot read or grant to this project's customers", async () => {
      const other = await createProjectWithApp(t);
      const { customerId, userId } = await newCustomer();
      await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON });
      expectError(await serverRead(customerId, keyHeaders(other, other.keys.skTest)), 400, 'invalid_customer');
      expect((await publicRead({ userId }, keyHeaders(other, other.keys.pubTest))).body.serviceCustomerId).toBe('');
      expectError(
        await grant(customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON }, keyHeaders(other, other.keys.skTest)),
        400,
        'invalid_customer',
      );
    });
  });

  describe('expiry (test clock)', () => {
    it('a P30D grant stops being active once the clock passes validUntil; lifetime grants stay', async () => {
      const { customerId, userId } = await newCustomer();
      const dated = await grant(customerId, { entitlementKey: 'month_pass', duration: 'P30D', reason: REASON });
      await grant(customerId, { entitlementKey: 'forever_pass', duration: 'lifetime', reason: REASON });
      expect((await publicRead({ userId })).body.data.map((e: any) => e.key)).toEqual(['forever_pass', 'month_pass']);

      const toEnd = dated.body.entitlement.validUntil - now();
      const almost = await t.http
        .post('/admin/v1/test-clock/advance')
        .set(operatorAuth())
        .send({ seconds: toEnd - 5 });
      expect(almost.status).toBe(200);
      expect((await publicRead({ userId })).body.data.map((e: any) => e.key)).toEqual(['forever_pass', 'month_pass']);

      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 10 });
      const after = await publicRead({ userId });
      expect(after.body.data.map((e: any) => e.key)).toEqual(['forever_pass']);
      expect((await serverRead(customerId)).body.data.map((e: any) => e.key)).toEqual(['forever_pass']);

      // revoking an expired grant: 400 saying it expired
      const res = await revoke(customerId, { entitlementKey: 'month_pass', reason: 'Cleanup' });
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toMatch(/expired/);

      // a new grant starts from now, not from the old end
      const renewed = await grant(customerId, { entitlementKey: 'month_pass', duration: 'P30D', reason: REASON });
      expect(renewed.body.entitlement.validUntil).toBeGreaterThanOrEqual(now() + 30 * DAY - 2);

      // ten years on, lifetime is still active
      await t.http
        .post('/admin/v1/test-clock/advance')
        .set(operatorAuth())
        .send({ seconds: 3650 * DAY });
      expect((await publicRead({ userId })).body.data).toEqual([expect.objectContaining({ key: 'forever_pass', isActive: true, validUntil: null })]);
    });
  });
});
