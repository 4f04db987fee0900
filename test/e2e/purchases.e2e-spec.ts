import { RailSubscriptionsRepository } from '../../libs/rails/src/model/rail-subscriptions.repository.js';
import { createProjectWithApp, keyHeaders, type ProjectFixture, setRateLimits } from '../support/fixtures.js';
import {
  type StoreChain,
  type TransactionFields,
  createStoreChain,
  renewalInfoPayload,
  signStoreJws,
  tamperJws,
  transactionPayload,
} from '../support/store-signing.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { testScope } from '../support/scopes.js';
import { expectError } from '../support/expect-error.js';
import { createIosRailProject } from '../support/ios-rail.js';

const BUNDLE = 'com.example.app';
const HOUR_MS = 3_600_000;

describe('rails: purchase sync on the iOS store rail', () => {
  let t: TestApp;
  let fx: ProjectFixture;
  let chain: StoreChain;

  const pub = (key = fx.keys.pubTest, f = fx) => keyHeaders(f, key);
  const sk = (key = fx.keys.skTest, f = fx) => keyHeaders(f, key);
  const nowMs = () => t.clock.nowMs();

  /** A signed transaction of the fixture's app (sandbox, auto-renewable, one hour left, unless overridden). */
  function signed(fields: Partial<TransactionFields> = {}, c = chain): { jws: string; payload: TransactionFields } {
    const payload = transactionPayload({ bundleId: BUNDLE, productId: 'pro.monthly', signedDate: nowMs(), expiresDate: nowMs() + HOUR_MS, ...fields });
    return { jws: signStoreJws(c, payload), payload };
  }

  const sync = (body: Record<string, unknown>, headers = pub(), path = '/v1/purchases/sync') => t.http.post(path).set(headers).send(body);

  /** The audit timeline of one customer, as the operator reads it. */
  async function auditTimeline(customerId: string): Promise<{ eventId: string; eventType: string }[]> {
    const res = await t.http.get(`/admin/v1/projects/${fx.projectId}/customers/${customerId}/timeline?env=sandbox&limit=100`).set(operatorAuth());
    expect(res.status).toBe(200);
    return res.body.data;
  }
  /** What the customer pays, as the operator's customer page sums it. */
  async function revenueOf(customerId: string): Promise<{ paying: boolean; mrr: { amountMinor: number; currency: string } }> {
    const res = await t.http.get(`/admin/v1/projects/${fx.projectId}/customers/${customerId}?env=sandbox`).set(operatorAuth());
    expect(res.status).toBe(200);
    return { paying: res.body.summary.paying, mrr: res.body.summary.mrr };
  }

  const uuid = () => globalThis.crypto.randomUUID();

  beforeAll(async () => {
    t = await createTestApp();
    chain = createStoreChain();
    fx = await createIosRailProject(t, BUNDLE, chain.rootPem);
  });
  afterAll(() => t?.close());

  describe('operator: rail settings', () => {
    it('lists the configured rails in the store-rails shape', async () => {
      const res = await t.http.get(`/admin/v1/projects/${fx.projectId}/rails`).set(operatorAuth());
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        object: 'list',
        data: [{ rail: 'ios_store', enabled: true, bundleId: BUNDLE, trustedRootCertificates: [chain.rootPem], secretsConfigured: false }],
      });
    });

    it('validates the body and the PEMs; unknown project is 404; no operator token is 401', async () => {
      const path = `/admin/v1/projects/${fx.projectId}/rails/ios_store`;
      expectError(
        await t.http
          .put(path)
          .set(operatorAuth())
          .send({ bundleId: BUNDLE, trustedRootCertificates: ['not a pem'] }),
        400,
        'invalid_param_value',
      );
      expectError(await t.http.put(path).set(operatorAuth()).send({ bundleId: BUNDLE, appAppleId: 'x' }), 400, 'invalid_param_value');
      expectError(await t.http.put(path).set(operatorAuth()).send({}), 400, 'missing_required_param');
      expectError(await t.http.put('/admin/v1/projects/proj_missing/rails/ios_store').set(operatorAuth()).send({ bundleId: BUNDLE }), 404, 'resource_missing');
      expect((await t.http.put(path).send({ bundleId: BUNDLE })).status).toBe(401);
      expectError(await t.http.get('/admin/v1/projects/proj_missing/rails').set(operatorAuth()), 404, 'resource_missing');
    });
  });

  describe('verification', () => {
    it('applies a valid sandbox purchase: purchase_result with the catalogue keys (two keys for one product)', async () => {
      const { jws, payload } = signed();
      const res = await sync({ rail: 'ios_store', signedTransactionInfo: jws });
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toMatchObject({ object: 'purchase_result', env: 'sandbox' });
      expect(res.body.serviceCustomerId).toMatch(/^cdcust_/);
      expect(res.body.idempotent_replay).toBeUndefined();
      expect(res.body.entitlements).toEqual([
        {
          object: 'entitlement',
          key: 'cloud_sync',
          isActive: true,
          validUntil: Math.floor(payload.expiresDate! / 1000),
          source: { rail: 'ios_store', productId: 'pro.monthly', subscriptionId: payload.originalTransactionId },
          updatedAt: expect.any(Number),
        },
        expect.objectContaining({ key: 'pro_access', isActive: true }),
      ]);

      // one audit entry, readable with a secret key, with the rail fields
      const record = await t.app.get(RailSubscriptionsRepository).find(testScope(fx.projectId, 'sandbox'), 'ios_store', payload.originalTransactionId);
      expect(record).toMatchObject({ customerId: res.body.serviceCustomerId, state: 'active', productId: 'pro.monthly', railTimeMs: payload.signedDate });
      const audit = await t.http.get(`/v1/server/audit/${record!.lastEventId}`).set(sk());
      expect(audit.status).toBe(200);
      expect(audit.body.data).toMatchObject({
        rail: 'ios_store',
        env: 'sandbox',
        eventType: 'purchase_sync',
        decision: 'applied',
        customerId: res.body.serviceCustomerId,
        signatureVerified: true,
        reconciledWithProvider: false,
      });
      expect(audit.body.data.processedAt).toBeGreaterThanOrEqual(audit.body.data.rawEventReceivedAt);
    });

    it('applies a valid production purchase with a live key', async () => {
      const { jws } = signed({ environment: 'Production' });
      const res = await sync({ rail: 'ios_store', signedTransactionInfo: jws }, pub(fx.keys.pubLive));
      expect(res.status).toBe(200);
      expect(res.body.env).toBe('production');
      expect(res.body.entitlements.map((e: { key: string }) => e.key)).toEqual(['cloud_sync', 'pro_access']);
    });

    it('refuses a payload of the other environment with 403 env_mismatch', async () => {
      expectError(await sync({ rail: 'ios_store', signedTransactionInfo: signed({ environment: 'Production' }).jws }), 403, 'env_mismatch');
      expectError(await sync({ rail: 'ios_store', signedTransactionInfo: signed().jws }, sk(fx.keys.skLive)), 403, 'env_mismatch');
    });

    it('answers 401 invalid_api_key when the JWS fails under both environments: bad signature, untrusted root, missing OIDs, wrong bundle id, garbage', async () => {
      const good = signed();
      const cases = {
        badSignature: tamperJws(good.jws, { ...good.payload, productId: 'lifetime.unlock' }),
        untrustedRoot: signed({}, createStoreChain()).jws,
        wrongBundle: signed({ bundleId: 'com.other.app' }).jws,
        garbage: 'eyJhbGciOiJFUzI1NiJ9.e30.AAAA',
      };
      for (const [name, jws] of Object.entries(cases)) {
        const res = await sync({ rail: 'ios_store', signedTransactionInfo: jws });
        expectError(res, 401, 'invalid_api_key');
        expect({ name, message: res.body.error.message }).toEqual({ name, message: expect.stringContaining('signedTransactionInfo failed verification') });
      }
    });

    it('refuses chains without the marker OIDs even when their root is trusted', async () => {
      for (const options of [{ leafOid: false }, { intermediateOid: false }]) {
        const noOid = createStoreChain(options);
        const f = await createProjectWithApp(t, { platform: 'ios', bundleId: BUNDLE });
        await t.http
          .put(`/admin/v1/projects/${f.projectId}/rails/ios_store`)
          .set(operatorAuth())
          .send({ bundleId: BUNDLE, trustedRootCertificates: [noOid.rootPem] })
          .expect(200);
        expectError(await sync({ rail: 'ios_store', signedTransactionInfo: signed({}, noOid).jws }, pub(f.keys.pubTest, f)), 401, 'invalid_api_key');
      }
    });

    it('trusts the shipped store roots when no roots are configured (a test chain is then refused)', async () => {
      const f = await createProjectWithApp(t, { platform: 'ios', bundleId: BUNDLE });
      await t.http.put(`/admin/v1/projects/${f.projectId}/rails/ios_store`).set(operatorAuth()).send({ bundleId: BUNDLE }).expect(200);
      const list = await t.http.get(`/admin/v1/projects/${f.projectId}/rails`).set(operatorAuth());
      expect(list.body.data[0].trustedRootCertificates).toBeUndefined();
      expectError(await sync({ rail: 'ios_store', signedTransactionInfo: signed().jws }, pub(f.keys.pubTest, f)), 401, 'invalid_api_key');
    });

    it('a signedRenewalInfo that fails to verify is not fatal; a valid one is accepted', async () => {
      const { jws, payload } = signed();
      const res = await sync({ rail: 'ios_store', signedTransactionInfo: jws, signedRenewalInfo: 'not-a-jws' });
      expect(res.status).toBe(200);
      const renewal = signStoreJws(chain, renewalInfoPayload({ ...payload, environment: 'Sandbox' }));
      const again = await sync({
        rail: 'ios_store',
        signedTransactionInfo: signed({ originalTransactionId: payload.originalTransactionId }).jws,
        signedRenewalInfo: renewal,
      });
      expect(again.status).toBe(200);
      expect(again.body.serviceCustomerId).toBe(res.body.serviceCustomerId);
    });
  });

  describe('the subscription object', () => {
    const subscriptionsOf = async (customerId: string) => (await t.http.get(`/v1/server/customers/${customerId}/subscriptions`).set(sk())).body.data as any[];

    it('a synced purchase stores the object it derives (period, price, offer, environment); a renewal moves it; the ledger has the price', async () => {
      const purchaseMs = nowMs();
      const { jws, payload } = signed({ price: 4990, currency: 'USD', offerType: 1, offerDiscountType: 'FREE_TRIAL', purchaseDate: purchaseMs });
      const res = await sync({ rail: 'ios_store', signedTransactionInfo: jws });
      expect(res.status).toBe(200);
      const customerId = res.body.serviceCustomerId as string;
      const [first] = await subscriptionsOf(customerId);
      expect(first).toEqual(
        expect.objectContaining({
          id: payload.originalTransactionId,
          rail: 'ios_store',
          state: 'trialing',
          periodType: 'trial',
          isActive: true,
          kind: 'auto_renewing',
          currentPeriodStartsAt: Math.floor(purchaseMs / 1000),
          currentPeriodEndsAt: Math.floor(payload.expiresDate! / 1000),
          offer: { type: 'introductory', id: null, discount: 'free_trial' },
          price: { amountMicros: 4_990_000, currency: 'USD' },
          storeEnvironment: 'sandbox',
        }),
      );
      // A trial pays nothing: the customer is not paying and has no monthly revenue.
      expect(await revenueOf(customerId)).toEqual({ paying: false, mrr: expect.objectContaining({ amountMinor: 0 }) });

      // The renewal after the trial: a paid period.
      const renewed = signed({
        originalTransactionId: payload.originalTransactionId,
        price: 9990,
        currency: 'USD',
        purchaseDate: payload.expiresDate!,
        expiresDate: payload.expiresDate! + 30 * 24 * HOUR_MS,
      });
      expect((await sync({ rail: 'ios_store', signedTransactionInfo: renewed.jws })).status).toBe(200);
      const [second] = await subscriptionsOf(customerId);
      expect(second).toEqual(
        expect.objectContaining({ state: 'active', periodType: 'normal', offer: null, price: { amountMicros: 9_990_000, currency: 'USD' }, willRenew: true }),
      );
      // The paid period counts at the price the store charged.
      expect(await revenueOf(customerId)).toEqual({ paying: true, mrr: { amountMinor: 999, currency: 'USD' } });
    });

    it('a synced transaction past its end is expired; a revoked one refunded; renewal info turning auto-renew off is read', async () => {
      const past = signed({ purchaseDate: nowMs() - 2 * HOUR_MS, expiresDate: nowMs() - HOUR_MS });
      const ended = await sync({ rail: 'ios_store', signedTransactionInfo: past.jws });
      expect(ended.status).toBe(200);
      expect((await subscriptionsOf(ended.body.serviceCustomerId))[0]).toEqual(
        expect.objectContaining({ state: 'expired', isActive: false, expiredAt: Math.floor(past.payload.expiresDate! / 1000), expirationReason: 'unknown' }),
      );

      const live = signed({ price: 2990, currency: 'EUR' });
      const bought = await sync({ rail: 'ios_store', signedTransactionInfo: live.jws });
      const revokedAtMs = nowMs();
      const revoked = signed({ ...live.payload, revocationDate: revokedAtMs, revocationReason: 0, signedDate: revokedAtMs + 1000 });
      expect((await sync({ rail: 'ios_store', signedTransactionInfo: revoked.jws })).status).toBe(200);
      expect((await subscriptionsOf(bought.body.serviceCustomerId))[0]).toEqual(
        expect.objectContaining({ state: 'refunded', isActive: false, refundedAt: Math.floor(revokedAtMs / 1000), expirationReason: 'refund' }),
      );

      const other = signed();
      const renewal = signStoreJws(chain, { ...renewalInfoPayload({ ...other.payload, environment: 'Sandbox' }), autoRenewStatus: 0 });
      const off = await sync({ rail: 'ios_store', signedTransactionInfo: other.jws, signedRenewalInfo: renewal });
      expect((await subscriptionsOf(off.body.serviceCustomerId))[0]).toEqual(
        expect.objectContaining({ state: 'active', willRenew: false, unsubscribeDetectedAt: expect.any(Number), expirationReason: 'unsubscribe' }),
      );
    });
  });

  describe('request rules', () => {
    it('unsupported rails answer 400 invalid_param_value pointing to the store-notification path', async () => {
      for (const rail of ['card_payments', 'android_store']) {
        const res = await sync({ rail, signedTransactionInfo: signed().jws });
        expectError(res, 400, 'invalid_param_value');
        expect(res.body.error.message).toContain(`/v1/webhooks/${rail}/`);
      }
      expectError(await sync({ rail: 'google', signedTransactionInfo: signed().jws }), 400, 'invalid_param_value');
    });

    it('accepts rail "apple" as ios_store', async () => {
      const res = await sync({ rail: 'apple', signedTransactionInfo: signed().jws });
      expect(res.status).toBe(200);
      expect(res.body.entitlements).toHaveLength(2);
    });

    it('answers the legacy path /v1/purchases (and the unprefixed one)', async () => {
      expect((await sync({ rail: 'ios_store', signedTransactionInfo: signed().jws }, pub(), '/v1/purchases')).status).toBe(200);
      expect((await sync({ rail: 'ios_store', signedTransactionInfo: signed().jws }, pub(), '/purchases/sync')).status).toBe(200);
    });

    it('spends the purchases bucket (429 rate_limited past it)', async () => {
      const f = await createProjectWithApp(t, { platform: 'ios', bundleId: BUNDLE });
      await t.http
        .put(`/admin/v1/projects/${f.projectId}/rails/ios_store`)
        .set(operatorAuth())
        .send({ bundleId: BUNDLE, trustedRootCertificates: [chain.rootPem] })
        .expect(200);
      await setRateLimits(t, f.projectId, { purchases: { sustained: 0.001, burst: 1 } });
      expect((await sync({ rail: 'ios_store', signedTransactionInfo: signed().jws }, pub(f.keys.pubTest, f))).status).toBe(200);
      const limited = await sync({ rail: 'ios_store', signedTransactionInfo: signed().jws }, pub(f.keys.pubTest, f));
      expectError(limited, 429, 'rate_limited');
      expect(limited.headers['retry-after']).toBeDefined();
      const list = await t.http.get(`/admin/v1/projects/${(await createProjectWithApp(t)).projectId}/rails`).set(operatorAuth());
      expect(list.body).toMatchObject({ object: 'list', data: [] });
    });

    it('malformed bodies and a project without the iOS rail answer 400; no key is 401', async () => {
      expectError(await sync({ rail: 'ios_store' }), 400, 'missing_required_param');
      expectError(await sync({ rail: 'ios_store', signedTransactionInfo: 42 }), 400, 'invalid_param_value');
      expectError(await sync({ rail: 'ios_store', signedTransactionInfo: signed().jws, appAccountToken: 'nope' }), 400, 'invalid_param_value');
      const bare = await createProjectWithApp(t, { platform: 'ios', bundleId: BUNDLE });
      const res = await sync({ rail: 'ios_store', signedTransactionInfo: signed().jws }, pub(bare.keys.pubTest, bare));
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toContain('not configured');
      expectError(await t.http.post('/v1/purchases/sync').send({ rail: 'ios_store', signedTransactionInfo: signed().jws }), 401, 'missing_api_key');
    });
  });

  // What a sync does to the data (re-sends, concurrency, renewals, revocations, whose purchase it
  // is, the catalogue gate, expiry) is stated in test/medium/purchase-sync.medium-spec.ts.
  describe('effect', () => {
    it('rail-derived entitlements cannot be revoked manually', async () => {
      const a = await sync({ rail: 'ios_store', signedTransactionInfo: signed().jws });
      const res = await t.http
        .post(`/v1/server/customers/${a.body.serviceCustomerId}/revoke`)
        .set(sk())
        .send({ entitlementKey: 'pro_access', reason: 'Trying to revoke a store purchase by hand' });
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toContain('ios_store');
    });
  });

  describe('Idempotency-Key (platform idempotency)', () => {
    it('same key and same body replays the first answer with idempotent_replay and Idempotent-Replayed', async () => {
      const key = `idem_${uuid()}`;
      const body = { rail: 'ios_store', signedTransactionInfo: signed().jws };
      const first = await sync(body, { ...pub(), 'Idempotency-Key': key });
      expect(first.status).toBe(200);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const replay = await sync(body, { ...pub(), 'Idempotency-Key': key });
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual({ ...first.body, idempotent_replay: true });
    });

    it('same key with another body answers 400 idempotency_key_in_use', async () => {
      const key = `idem_${uuid()}`;
      expect((await sync({ rail: 'ios_store', signedTransactionInfo: signed().jws }, { ...pub(), 'Idempotency-Key': key })).status).toBe(200);
      expectError(await sync({ rail: 'ios_store', signedTransactionInfo: signed().jws }, { ...pub(), 'Idempotency-Key': key }), 400, 'idempotency_key_in_use');
    });

    it('20 concurrent requests with one key are executed once', async () => {
      const key = `idem_${uuid()}`;
      const { jws } = signed();
      const results = await Promise.all(
        Array.from({ length: 20 }, () => sync({ rail: 'ios_store', signedTransactionInfo: jws }, { ...pub(), 'Idempotency-Key': key })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
      // One sync of a new original transaction: one customer, one audit entry (for this transaction).
      expect(new Set(results.map((r) => r.body.serviceCustomerId)).size).toBe(1);
      const entries = await auditTimeline(results[0].body.serviceCustomerId);
      expect(entries).toEqual([expect.objectContaining({ rail: 'ios_store', eventType: 'purchase_sync' })]);
    });
  });
});
