import { keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { cardWebhookHarness } from '../support/harness/webhooks-card.js';
import { dropStoredLifecycle } from '../support/factories/subscriptions.js';
import { testScope } from '../support/scopes.js';

describe('subscriptions: reads (GET /v1/subscriptions, server and operator customer subscriptions)', () => {
  const h = cardWebhookHarness();
  let t: TestApp;
  let fx: ProjectFixture;
  beforeAll(() => {
    ({ t, fx } = h);
  });
  const { now, subscription, event, send } = h;
  const sk = () => keyHeaders(fx, fx.keys.skTest);
  const pub = () => keyHeaders(fx, fx.keys.pubTest);
  const serverRead = (customerId: string) => t.http.get(`/v1/server/customers/${customerId}/subscriptions`).set(sk());
  const operatorRead = (customerId: string, env = 'sandbox', projectId = fx.projectId) =>
    t.http.get(`/admin/v1/projects/${projectId}/customers/${customerId}/subscriptions`).query({ env }).set(operatorAuth());

  async function created(o: { periodEnd?: number; product?: string; customer?: string } = {}) {
    const sub = subscription(o);
    const res = await send(event('customer.subscription.created', sub));
    expect(res.body.decision).toBe('applied');
    return { sub, customerId: res.body.serviceCustomerId as string };
  }

  it('a record applied before the lifecycle was stored answers the object its record knows', async () => {
    const periodEnd = now() + 30 * 86400;
    const { sub, customerId } = await created({ periodEnd });
    await dropStoredLifecycle(t.dataSource, testScope(fx.projectId), sub.id);
    const res = await serverRead(customerId);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.body).toEqual({
      object: 'list',
      serviceCustomerId: customerId,
      env: 'sandbox',
      data: [
        {
          object: 'subscription',
          id: sub.id,
          rail: 'card_payments',
          productId: 'prod_pro',
          entitlementKeys: expect.arrayContaining(['pro', 'cloud_sync']),
          kind: 'auto_renewing',
          state: 'active',
          periodType: 'normal',
          willRenew: true,
          isActive: true,
          purchasedAt: expect.any(Number),
          originalPurchasedAt: expect.any(Number),
          currentPeriodStartsAt: null,
          currentPeriodEndsAt: periodEnd,
          accessEndsAt: periodEnd,
          unsubscribeDetectedAt: null,
          billingIssueDetectedAt: null,
          gracePeriodEndsAt: null,
          pausedAt: null,
          autoResumeAt: null,
          expiredAt: null,
          expirationReason: null,
          refundedAt: null,
          ownershipType: 'purchased',
          pendingProductId: null,
          offer: null,
          price: null,
          priceChange: null,
          storeEnvironment: 'sandbox',
          updatedAt: expect.any(Number),
        },
      ],
    });
  });

  it('public read: one customer hint as the entitlements read, either key kind; unknown customer is an empty list and ""', async () => {
    const { sub, customerId } = await created();
    for (const headers of [pub(), sk()]) {
      for (const query of [{ customerId }, { serviceCustomerId: customerId }, { crossdeckCustomerId: customerId }]) {
        const res = await t.http.get('/v1/subscriptions').query(query).set(headers);
        expect(res.status).toBe(200);
        expect(res.headers['cache-control']).toBe('private, no-store');
        expect(res.body).toEqual(expect.objectContaining({ object: 'list', serviceCustomerId: customerId, env: 'sandbox' }));
        expect(res.body.data.map((s: any) => s.id)).toEqual([sub.id]);
      }
    }
    const unknown = await t.http.get('/v1/subscriptions').query({ userId: 'nobody-here' }).set(pub());
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ object: 'list', data: [], serviceCustomerId: '', env: 'sandbox' });
    expectError(await t.http.get('/v1/subscriptions').set(pub()), 400, 'missing_customer');
    expectError(await t.http.get('/v1/subscriptions').query({ customerId: 'nope' }).set(pub()), 400, 'invalid_customer');
    expectError(await t.http.get('/v1/subscriptions').query({ customerId, serviceCustomerId: 'cdcust_other' }).set(pub()), 400, 'invalid_param_value');
    // Another environment's key sees nothing of this customer.
    const live = await t.http.get('/v1/subscriptions').query({ customerId }).set(keyHeaders(fx, fx.keys.pubLive));
    expect(live.body).toEqual({ object: 'list', data: [], serviceCustomerId: '', env: 'production' });
    expectError(await t.http.get('/v1/subscriptions').query({ customerId }), 401, 'missing_api_key');
  });

  it('server read: secret key only; unknown customer is 400 invalid_customer', async () => {
    const { customerId } = await created();
    expect((await serverRead(customerId)).body.data).toHaveLength(1);
    expectError(await serverRead('cdcust_doesnotexist'), 400, 'invalid_customer');
    expectError(await serverRead('nope'), 400, 'invalid_customer');
    expect((await t.http.get(`/v1/server/customers/${customerId}/subscriptions`).set(pub())).status).toBe(401);
  });

  it('operator read: env required, unknown project or customer is 404', async () => {
    const { sub, customerId } = await created();
    const res = await operatorRead(customerId);
    expect(res.status).toBe(200);
    expect(res.body.data.map((s: any) => s.id)).toEqual([sub.id]);
    expectError(await operatorRead(customerId, 'staging'), 400, 'invalid_param_value');
    expectError(await operatorRead(customerId, 'production'), 404, 'resource_missing');
    expectError(await operatorRead(customerId, 'sandbox', 'proj_doesnotexist'), 404, 'resource_missing');
    expect((await t.http.get(`/admin/v1/projects/${fx.projectId}/customers/${customerId}/subscriptions?env=sandbox`)).status).toBe(401);
  });

  it('live subscriptions first, then the latest change first', async () => {
    const first = await created({ product: 'prod_basic' });
    const customer = first.sub.customer;
    const second = subscription({ customer, product: 'prod_team' });
    expect((await send(event('customer.subscription.created', second))).body.serviceCustomerId).toBe(first.customerId);
    const third = subscription({ customer, product: 'prod_pro' });
    await send(event('customer.subscription.created', third));
    // The first ends; the third changes last.
    t.clock.advance(2);
    await send(event('customer.subscription.deleted', { ...first.sub, status: 'canceled' }));
    t.clock.advance(2);
    await send(event('customer.subscription.updated', { ...third, cancel_at_period_end: true }));
    const res = await serverRead(first.customerId);
    expect(res.body.data.map((s: any) => [s.id, s.isActive])).toEqual([
      [third.id, true],
      [second.id, true],
      [first.sub.id, false],
    ]);
    expect(res.body.data[2].state).toBe('expired');
  });
});
