import { Sql } from '#platform';
import { RailCustomers } from '#identity';
import { RailStateApplier, RAIL_ALIAS_TYPES, type RailEventContext, type RailStateChange } from '#rails';
import { RailSubscriptionsRepository } from '../../libs/rails/src/model/rail-subscriptions.repository.js';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { testScope } from '../support/scopes.js';

/** The shared rail model, driven directly (the rails' HTTP paths have their own specs). */
describe('rails: shared rail model (subscription records, newest rail time wins, catalogue, audit)', () => {
  let t: TestApp;
  let fx: ProjectFixture;
  let applier: RailStateApplier;
  let identity: RailCustomers;
  let subscriptions: RailSubscriptionsRepository;
  let sql: Sql;
  const scope = () => testScope(fx.projectId, 'sandbox');
  let counter = 0;

  beforeAll(async () => {
    t = await createTestApp();
    fx = await createProjectWithApp(t);
    applier = t.app.get(RailStateApplier);
    identity = t.app.get(RailCustomers);
    subscriptions = t.app.get(RailSubscriptionsRepository);
    sql = t.app.get(Sql);
    const res = await t.http
      .put(`/admin/v1/projects/${fx.projectId}/products`)
      .set(operatorAuth())
      .send({
        products: [
          { rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro', 'cloud_sync'] },
          { rail: 'card_payments', productId: 'prod_basic', entitlementKeys: ['basic'] },
        ],
      });
    expect(res.status).toBe(200);
  });
  afterAll(() => t?.close());

  const event = (over: Partial<RailEventContext> = {}): RailEventContext => ({
    eventType: 'customer.subscription.updated',
    signatureVerified: true,
    reconciledWithProvider: false,
    rawEventReceivedAt: t.clock.nowMs(),
    actor: 'rail:card_payments',
    requestId: null,
    ...over,
  });

  async function railCustomer(): Promise<{ customerId: string; subscriptionId: string }> {
    counter += 1;
    const subscriptionId = `sub_${counter}_${Math.random().toString(36).slice(2, 10)}`;
    const customerId = await sql.transaction(() =>
      identity.createRailCustomer(scope(), { type: RAIL_ALIAS_TYPES.cardCustomerId, value: `cus_${subscriptionId}` }),
    );
    return { customerId, subscriptionId };
  }

  const apply = (change: RailStateChange, ev = event()) => sql.transaction(() => applier.apply(scope(), change, ev));

  it('applies a state: subscription record, one entitlement per catalogue key, one audit entry with the rail fields', async () => {
    const { customerId, subscriptionId } = await railCustomer();
    const validUntil = t.clock.nowSeconds() + 3600;
    const railTimeMs = t.clock.nowMs();
    const result = await apply({
      rail: 'card_payments',
      subscriptionId,
      customerId,
      productId: 'prod_pro',
      state: 'active',
      validUntil,
      railTimeMs,
      rawStatus: 'active',
    });
    expect(result.decision).toBe('applied');
    expect(result.entitlements.map((e) => e.key).sort()).toEqual(['cloud_sync', 'pro']);
    expect(result.entitlements[0]).toMatchObject({ isActive: true, validUntil, source: { rail: 'card_payments', productId: 'prod_pro', subscriptionId } });

    const read = await t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(keyHeaders(fx, fx.keys.skTest));
    expect(read.status).toBe(200);
    expect(read.body.data.map((e: { key: string }) => e.key)).toEqual(['cloud_sync', 'pro']);

    const audit = await t.http.get(`/v1/server/audit/${result.auditEventId}`).set(keyHeaders(fx, fx.keys.skTest));
    expect(audit.status).toBe(200);
    expect(audit.body.data).toMatchObject({
      rail: 'card_payments',
      env: 'sandbox',
      eventType: 'customer.subscription.updated',
      decision: 'applied',
      customerId,
      signatureVerified: true,
      reconciledWithProvider: false,
    });
    expect(typeof audit.body.data.rawEventReceivedAt).toBe('number');
    expect(typeof audit.body.data.processedAt).toBe('number');

    expect(await subscriptions.customerStatus(scope(), customerId, 'card_payments', t.clock.nowMs())).toBe('live');
    expect(await subscriptions.customerStatus(scope(), customerId, 'card_payments', (validUntil + 1) * 1000)).toBe('lapsed');
    expect(await subscriptions.customerStatus(scope(), customerId, 'ios_store', t.clock.nowMs())).toBe('none');
  });

  it('newest rail time wins: an older state is a no_op; the same state again is a no_op; a newer one applies', async () => {
    const { customerId, subscriptionId } = await railCustomer();
    const base = { rail: 'card_payments' as const, subscriptionId, customerId, productId: 'prod_basic', rawStatus: 'active' };
    const t0 = t.clock.nowMs();
    // Read once: "the same state again" must carry the very same validUntil, even across a second boundary.
    const validUntil = t.clock.nowSeconds() + 100;
    expect((await apply({ ...base, state: 'active', validUntil, railTimeMs: t0 })).decision).toBe('applied');
    const older = await apply({ ...base, state: 'inactive', validUntil: null, railTimeMs: t0 - 1000, rawStatus: 'canceled' });
    expect(older.decision).toBe('no_op');
    expect((await subscriptions.find(scope(), 'card_payments', subscriptionId))?.state).toBe('active');
    expect((await apply({ ...base, state: 'active', validUntil, railTimeMs: t0 })).decision).toBe('no_op');
    const newer = await apply({ ...base, state: 'inactive', endedBy: 'revoked', validUntil: null, railTimeMs: t0 + 1000, rawStatus: 'canceled' });
    expect(newer.decision).toBe('applied');
    expect(newer.entitlements[0].isActive).toBe(false);
    expect(await subscriptions.customerStatus(scope(), customerId, 'card_payments', t.clock.nowMs())).toBe('lapsed');
  });

  it('a product missing from the catalogue is rejected and changes nothing', async () => {
    const { customerId, subscriptionId } = await railCustomer();
    const result = await apply({
      rail: 'card_payments',
      subscriptionId,
      customerId,
      productId: 'prod_unknown',
      state: 'active',
      validUntil: null,
      railTimeMs: t.clock.nowMs(),
      rawStatus: 'active',
    });
    expect(result.decision).toBe('rejected');
    expect(await subscriptions.find(scope(), 'card_payments', subscriptionId)).toBeNull();
    const audit = await t.http.get(`/v1/server/audit/${result.auditEventId}`).set(keyHeaders(fx, fx.keys.skTest));
    expect(audit.body.data).toMatchObject({ decision: 'rejected', customerId });
  });

  it('a product change ends the keys the previous product granted', async () => {
    const { customerId, subscriptionId } = await railCustomer();
    const base = { rail: 'card_payments' as const, subscriptionId, customerId, state: 'active' as const, validUntil: null, rawStatus: 'active' };
    await apply({ ...base, productId: 'prod_pro', railTimeMs: t.clock.nowMs() });
    await apply({ ...base, productId: 'prod_basic', railTimeMs: t.clock.nowMs() + 1 });
    const read = await t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(keyHeaders(fx, fx.keys.skTest));
    expect(read.body.data.map((e: { key: string }) => e.key)).toEqual(['basic']);
  });

  it('one entitlement row aggregates the live subscriptions of a customer on a rail: ending one keeps the key from the other', async () => {
    const { customerId, subscriptionId: first } = await railCustomer();
    const second = `${first}_b`;
    const t0 = t.clock.nowMs();
    const base = { rail: 'card_payments' as const, customerId, productId: 'prod_pro', state: 'active' as const, rawStatus: 'active' };
    const longer = t.clock.nowSeconds() + 7200;
    await apply({ ...base, subscriptionId: first, validUntil: t.clock.nowSeconds() + 3600, railTimeMs: t0 });
    const b = await apply({ ...base, subscriptionId: second, validUntil: longer, railTimeMs: t0 });
    expect(b.entitlements.map((e) => e.validUntil)).toEqual([longer, longer]);
    // a shorter renewal of the first does not shorten the key
    const a = await apply({ ...base, subscriptionId: first, validUntil: t.clock.nowSeconds() + 3700, railTimeMs: t0 + 1 });
    expect(a.entitlements.map((e) => ({ until: e.validUntil, sub: e.source.subscriptionId }))).toEqual([
      { until: longer, sub: second },
      { until: longer, sub: second },
    ]);
    // cancelling the second falls back to the first
    const cancelled = await apply({ ...base, subscriptionId: second, state: 'inactive', validUntil: null, railTimeMs: t0 + 2, rawStatus: 'canceled' });
    expect(cancelled.decision).toBe('applied');
    expect(cancelled.entitlements.map((e) => ({ active: e.isActive, sub: e.source.subscriptionId }))).toEqual([
      { active: true, sub: first },
      { active: true, sub: first },
    ]);
    // cancelling both ends it
    const ended = await apply({ ...base, subscriptionId: first, state: 'inactive', validUntil: null, railTimeMs: t0 + 3, rawStatus: 'canceled' });
    expect(ended.entitlements.map((e) => e.isActive)).toEqual([false, false]);
    const read = await t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(keyHeaders(fx, fx.keys.skTest));
    expect(read.body.data).toEqual([]);
  });

  it('notifications and transactions are claimed once', async () => {
    const { customerId, subscriptionId } = await railCustomer();
    const record = {
      rail: 'card_payments' as const,
      notificationId: `evt_${subscriptionId}`,
      eventType: 'invoice.paid',
      decision: 'no_op' as const,
      customerId,
      auditEventId: 'rail_evt_x',
      receivedAt: t.clock.nowMs(),
      processedAt: t.clock.nowMs(),
    };
    expect(await sql.transaction(() => subscriptions.claimNotification(scope(), record))).toBeNull();
    const again = await sql.transaction(() => subscriptions.claimNotification(scope(), { ...record, decision: 'applied' }));
    expect(again).toMatchObject({ decision: 'no_op', auditEventId: 'rail_evt_x', env: 'sandbox' });
    const tx = {
      rail: 'card_payments' as const,
      transactionId: `tx_${subscriptionId}`,
      subscriptionId,
      customerId,
      decision: 'applied' as const,
      auditEventId: null,
    };
    expect(await sql.transaction(() => subscriptions.claimTransaction(scope(), tx, t.clock.now()))).toBeNull();
    expect(await sql.transaction(() => subscriptions.claimTransaction(scope(), tx, t.clock.now()))).toMatchObject({
      transactionId: tx.transactionId,
    });
  });
});
