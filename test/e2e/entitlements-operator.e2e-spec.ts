import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { entitlementsHarness, GRANT_ID, REASON } from '../support/harness/entitlements.js';

describe('entitlements: operator dashboard grant, key registry, product catalogue', () => {
  const h = entitlementsHarness();
  let t: TestApp;
  let fx: ProjectFixture;
  beforeAll(() => {
    ({ t, fx } = h);
  });
  const { sk, now, newCustomer, grant, revoke, publicRead, audit } = h;

  describe('operator: dashboard grant', () => {
    const path = (projectId: string, customerId: string) => `/admin/v1/projects/${projectId}/customers/${customerId}/grant`;

    it('grants in the environment named in the body, attributed to the operator, same response shape', async () => {
      const { customerId, userId } = await newCustomer();
      const res = await t.http
        .post(path(fx.projectId, customerId))
        .set(operatorAuth())
        .send({ env: 'sandbox', entitlementKey: 'dash_key', duration: 'P90D', reason: REASON });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'entitlement_mutation',
        action: 'grant',
        serviceCustomerId: customerId,
        crossdeckCustomerId: customerId,
        entitlement: expect.objectContaining({
          object: 'entitlement',
          key: 'dash_key',
          isActive: true,
          source: { rail: 'manual', productId: 'manual', subscriptionId: res.body.auditEventId },
        }),
        env: 'sandbox',
        auditEventId: expect.stringMatching(GRANT_ID),
      });
      const entry = await audit(res.body.auditEventId);
      expect(entry.body.data).toEqual(
        expect.objectContaining({ actor: 'operator', eventType: 'entitlement.granted_manually', decision: 'applied', requestId: res.headers['x-request-id'] }),
      );
      expect((await publicRead({ userId })).body.data.map((e: any) => e.key)).toEqual(['dash_key']);
      // the dashboard grant can be revoked with the secret key
      expect((await revoke(customerId, { entitlementKey: 'dash_key', reason: 'Ended' })).status).toBe(200);
    });

    it('revokes in the environment named in the body, attributed to the operator, with its reason', async () => {
      const { customerId, userId } = await newCustomer();
      const granted = await t.http
        .post(path(fx.projectId, customerId))
        .set(operatorAuth())
        .send({ env: 'sandbox', entitlementKey: 'dash_revoked', duration: 'P30D', reason: REASON });
      expect(granted.status).toBe(200);
      const revokePath = `/admin/v1/projects/${fx.projectId}/customers/${customerId}/revoke`;
      expectError(await t.http.post(revokePath).set(operatorAuth()).send({ env: 'sandbox', entitlementKey: 'dash_revoked' }), 400, 'missing_required_param');
      expectError(await t.http.post(revokePath).send({ env: 'sandbox', entitlementKey: 'dash_revoked', reason: 'Refund' }), 401, 'invalid_operator_token');
      // The customer lives in sandbox: production has no such customer.
      expectError(
        await t.http.post(revokePath).set(operatorAuth()).send({ env: 'production', entitlementKey: 'dash_revoked', reason: 'Refund' }),
        404,
        'resource_missing',
      );
      const res = await t.http.post(revokePath).set(operatorAuth()).send({ env: 'sandbox', entitlementKey: 'dash_revoked', reason: 'Refund given' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expect.objectContaining({ object: 'entitlement_mutation', action: 'revoke', serviceCustomerId: customerId, env: 'sandbox' }));
      const entry = await audit(res.body.auditEventId);
      expect(entry.body.data).toEqual(
        expect.objectContaining({
          actor: 'operator',
          eventType: 'entitlement.revoked_manually',
          reason: 'Refund given',
          requestId: res.headers['x-request-id'],
        }),
      );
      expect((await publicRead({ userId })).body.data.filter((e: any) => e.isActive)).toEqual([]);
    });

    it('the customer must exist in that environment and project: 404 resource_missing', async () => {
      const { customerId } = await newCustomer();
      const body = { env: 'production', entitlementKey: 'dash_key', duration: 'P30D', reason: REASON };
      expectError(await t.http.post(path(fx.projectId, customerId)).set(operatorAuth()).send(body), 404, 'resource_missing');
      expectError(
        await t.http
          .post(path(fx.projectId, 'cdcust_doesnotexist'))
          .set(operatorAuth())
          .send({ ...body, env: 'sandbox' }),
        404,
        'resource_missing',
      );
      expectError(
        await t.http
          .post(path('proj_doesnotexist', customerId))
          .set(operatorAuth())
          .send({ ...body, env: 'sandbox' }),
        404,
        'resource_missing',
      );
    });

    it('validates env and the grant fields; needs the operator token', async () => {
      const { customerId } = await newCustomer();
      const ok = { env: 'sandbox', entitlementKey: 'dash_key', duration: 'P30D', reason: REASON };
      expectError(
        await t.http
          .post(path(fx.projectId, customerId))
          .set(operatorAuth())
          .send({ ...ok, env: undefined }),
        400,
        'missing_required_param',
      );
      expectError(
        await t.http
          .post(path(fx.projectId, customerId))
          .set(operatorAuth())
          .send({ ...ok, env: 'staging' }),
        400,
        'invalid_param_value',
      );
      expectError(
        await t.http
          .post(path(fx.projectId, customerId))
          .set(operatorAuth())
          .send({ ...ok, reason: 'short' }),
        400,
        'invalid_param_value',
      );
      expectError(await t.http.post(path(fx.projectId, customerId)).send(ok), 401, 'invalid_operator_token');
      expectError(await t.http.post(path(fx.projectId, customerId)).set(sk()).send(ok), 401, 'invalid_operator_token');
    });
  });

  describe('operator: entitlement-key registry and product catalogue', () => {
    it('keys become registered when granted (first registration kept), per project across environments', async () => {
      const project = await createProjectWithApp(t);
      const sandboxCustomer = await newCustomer(project.keys.skTest, project);
      const liveCustomer = await newCustomer(project.keys.skLive, project);
      await grant(sandboxCustomer.customerId, { entitlementKey: 'alpha', duration: 'P30D', reason: REASON }, keyHeaders(project, project.keys.skTest));
      await grant(liveCustomer.customerId, { entitlementKey: 'beta', duration: 'P30D', reason: REASON }, keyHeaders(project, project.keys.skLive));
      await grant(liveCustomer.customerId, { entitlementKey: 'alpha', duration: 'P30D', reason: REASON }, keyHeaders(project, project.keys.skLive));
      const res = await t.http.get(`/admin/v1/projects/${project.projectId}/entitlement-keys`).set(operatorAuth());
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'list',
        data: [
          { key: 'alpha', registeredBy: 'grant', createdAt: expect.any(Number) },
          { key: 'beta', registeredBy: 'grant', createdAt: expect.any(Number) },
        ],
      });
      expect(Math.abs(res.body.data[0].createdAt - now())).toBeLessThanOrEqual(5);
      // not another project's
      const mine = await t.http.get(`/admin/v1/projects/${fx.projectId}/entitlement-keys`).set(operatorAuth());
      expect(mine.body.data.map((k: any) => k.key)).not.toContain('beta');
    });

    it('PUT products replaces the catalogue, returns it whole and registers its keys as catalog', async () => {
      const project = await createProjectWithApp(t);
      const customer = await newCustomer(project.keys.skTest, project);
      await grant(customer.customerId, { entitlementKey: 'pro_access', duration: 'P30D', reason: REASON }, keyHeaders(project, project.keys.skTest));
      const products = [
        { rail: 'ios_store', productId: 'com.example.pro.monthly', entitlementKeys: ['pro_access', 'pro_extras'] },
        { rail: 'card_payments', productId: 'price_123', entitlementKeys: ['pro_access'] },
        { rail: 'android_store', productId: 'pro_yearly', entitlementKeys: ['Premium-Tier', 'pro_access', 'pro_access'] },
      ];
      const res = await t.http.put(`/admin/v1/projects/${project.projectId}/products`).set(operatorAuth()).send({ products });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'product_catalog',
        projectId: project.projectId,
        products: [products[0], products[1], { ...products[2], entitlementKeys: ['Premium-Tier', 'pro_access'] }],
      });
      const keys = await t.http.get(`/admin/v1/projects/${project.projectId}/entitlement-keys`).set(operatorAuth());
      const byKey = Object.fromEntries(keys.body.data.map((k: any) => [k.key, k.registeredBy]));
      expect(byKey).toEqual({ pro_access: 'grant', pro_extras: 'catalog', 'Premium-Tier': 'catalog' });

      // replace: the old products are gone, registered keys stay
      const second = await t.http
        .put(`/admin/v1/projects/${project.projectId}/products`)
        .set(operatorAuth())
        .send({ products: [{ rail: 'card_payments', productId: 'price_999', entitlementKeys: ['team'] }] });
      expect(second.status).toBe(200);
      const read = await t.http.get(`/admin/v1/projects/${project.projectId}/products`).set(operatorAuth());
      expect(read.body.products).toEqual([{ rail: 'card_payments', productId: 'price_999', entitlementKeys: ['team'] }]);
      const keysAfter = await t.http.get(`/admin/v1/projects/${project.projectId}/entitlement-keys`).set(operatorAuth());
      expect(keysAfter.body.data.map((k: any) => k.key).sort()).toEqual(['Premium-Tier', 'pro_access', 'pro_extras', 'team']);

      const cleared = await t.http.put(`/admin/v1/projects/${project.projectId}/products`).set(operatorAuth()).send({ products: [] });
      expect(cleared.body.products).toEqual([]);
    });

    it('validates the catalogue', async () => {
      const url = `/admin/v1/projects/${fx.projectId}/products`;
      const put = (body: unknown) =>
        t.http
          .put(url)
          .set(operatorAuth())
          .send(body as object);
      expectError(await put({}), 400, 'missing_required_param');
      expectError(await put({ products: 'x' }), 400, 'invalid_param_value');
      expectError(await put({ products: [{ rail: 'manual', productId: 'p', entitlementKeys: ['a'] }] }), 400, 'invalid_param_value');
      expectError(await put({ products: [{ rail: 'ios_store', entitlementKeys: ['a'] }] }), 400, 'missing_required_param');
      expectError(await put({ products: [{ rail: 'ios_store', productId: 'p', entitlementKeys: ['has space'] }] }), 400, 'invalid_param_value');
      const dup = await put({
        products: [
          { rail: 'ios_store', productId: 'p', entitlementKeys: ['a'] },
          { rail: 'ios_store', productId: 'p', entitlementKeys: ['b'] },
        ],
      });
      expectError(dup, 400, 'invalid_param_value');
      expect(dup.body.error.message).toContain('products[1]');
      expectError(await t.http.put(url).send({ products: [] }), 401, 'invalid_operator_token');
    });

    it('unknown project: 404 resource_missing', async () => {
      expectError(await t.http.get('/admin/v1/projects/proj_doesnotexist/entitlement-keys').set(operatorAuth()), 404, 'resource_missing');
      expectError(await t.http.put('/admin/v1/projects/proj_doesnotexist/products').set(operatorAuth()).send({ products: [] }), 404, 'resource_missing');
      expectError(await t.http.get('/admin/v1/projects/proj_doesnotexist/products').set(operatorAuth()), 404, 'resource_missing');
    });
  });
});
