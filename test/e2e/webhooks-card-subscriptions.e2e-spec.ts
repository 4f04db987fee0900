import { keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';

describe('webhooks: card payments, subscription events', () => {
  const h = cardWebhookHarness();
  let t: TestApp;
  let fx: ProjectFixture;
  beforeAll(() => {
    ({ t, fx } = h);
  });
  const { now, subscription, event, send, entitlements, activeKeys, audit, counts } = h;

  describe('subscription events', () => {
    it('created: a rail-only customer, entitlements until the period end, one audit entry with the rail fields', async () => {
      const periodEnd = now() + 30 * 86400;
      const sub = subscription({ periodEnd });
      const body = event('customer.subscription.created', sub);
      const res = await send(body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        expect.objectContaining({ rail: 'card_payments', notificationId: body.id, env: 'sandbox', decision: 'applied', duplicate: false }),
      );
      const customerId = res.body.serviceCustomerId;
      expect(customerId).toMatch(/^cdcust_/);
      const read = await entitlements(customerId);
      expect(read.body.data).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            key: 'pro',
            isActive: true,
            validUntil: periodEnd,
            source: { rail: 'card_payments', productId: 'prod_pro', subscriptionId: sub.id },
          }),
          expect.objectContaining({ key: 'cloud_sync', isActive: true, validUntil: periodEnd }),
        ]),
      );
      const entry = await audit(res.body.auditEventId);
      expect(entry.status).toBe(200);
      expect(entry.body.data).toEqual(
        expect.objectContaining({
          eventId: res.body.auditEventId,
          rail: 'card_payments',
          env: 'sandbox',
          eventType: 'customer.subscription.created',
          projectId: fx.projectId,
          customerId,
          decision: 'applied',
          reason: expect.any(String),
          signatureVerified: true,
          reconciledWithProvider: false,
          rawEventReceivedAt: expect.any(Number),
          processedAt: expect.any(Number),
        }),
      );
      // The audit entry belongs to the notification's environment.
      expect((await audit(res.body.auditEventId, fx.keys.skLive)).status).toBe(400);
      // The card customer id is now an alias of the customer.
      const [alias] = await t.dataSource.query(`SELECT customer_id FROM customer_aliases WHERE project_id = $1 AND type = 'card_customer_id' AND value = $2`, [
        fx.projectId,
        sub.customer,
      ]);
      expect(alias.customer_id).toBe(customerId);
    });

    it('livemode true lands in production', async () => {
      const res = await send(event('customer.subscription.created', subscription(), { livemode: true }));
      expect(res.body).toEqual(expect.objectContaining({ env: 'production', decision: 'applied' }));
      expect(await activeKeys(res.body.serviceCustomerId, fx.keys.skLive)).toEqual(['cloud_sync', 'pro']);
      expect((await entitlements(res.body.serviceCustomerId, fx.keys.skTest)).status).not.toBe(200);
    });

    it('a duplicate is answered from the first processing and writes nothing', async () => {
      const body = event('customer.subscription.created', subscription());
      const first = await send(body);
      const before = await counts();
      const again = await send(body);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ ...first.body, duplicate: true });
      expect(await counts()).toEqual(before);
    });

    it('concurrent deliveries of one event are applied once', async () => {
      const body = event('customer.subscription.created', subscription());
      const before = await counts();
      const answers = await Promise.all(Array.from({ length: 20 }, () => send(body)));
      expect(answers.map((res) => res.status)).toEqual(Array(20).fill(200));
      expect(answers.filter((res) => !res.body.duplicate)).toHaveLength(1);
      expect(new Set(answers.map((res) => res.body.auditEventId)).size).toBe(1);
      const after = await counts();
      expect(after.entries - before.entries).toBe(1);
      expect(after.notifications - before.notifications).toBe(1);
    });

    it('out of order: an older event after a newer one is no_op (newest rail time wins)', async () => {
      const sub = subscription();
      const t0 = now();
      const created = await send(event('customer.subscription.created', sub, { created: t0 }));
      const customerId = created.body.serviceCustomerId;
      const canceled = await send(event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: t0 + 20 }));
      expect(canceled.body.decision).toBe('applied');
      const late = await send(event('customer.subscription.updated', { ...sub, status: 'active' }, { created: t0 + 10 }));
      expect(late.body).toEqual(expect.objectContaining({ decision: 'no_op', serviceCustomerId: customerId }));
      expect(await activeKeys(customerId)).toEqual([]);
      expect((await audit(late.body.auditEventId)).body.data.reason).toMatch(/Older than the stored state/);
    });

    it.each([
      ['trialing', true],
      ['past_due', true],
      ['canceled', false],
      ['unpaid', false],
      ['incomplete', false],
      ['incomplete_expired', false],
      ['paused', false],
    ])('status %s: active %s', async (status, active) => {
      const sub = subscription({ status });
      const res = await send(event('customer.subscription.updated', sub));
      expect(res.body.decision).toBe('applied');
      expect(await activeKeys(res.body.serviceCustomerId)).toEqual(active ? ['cloud_sync', 'pro'] : []);
    });

    it('cancel_at_period_end stays active until the period end, then lapses on the clock', async () => {
      const periodEnd = now() + 3600;
      const sub = subscription({ cancelAtPeriodEnd: true, periodEnd });
      const res = await send(event('customer.subscription.updated', sub));
      expect(await activeKeys(res.body.serviceCustomerId)).toEqual(['cloud_sync', 'pro']);
      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 3601 });
      expect(await activeKeys(res.body.serviceCustomerId)).toEqual([]);
    });

    it('deleted (the processor ends the subscription after a refund or cancellation) turns entitlements off', async () => {
      const sub = subscription();
      const t0 = now();
      const created = await send(event('customer.subscription.created', sub, { created: t0 }));
      expect(await activeKeys(created.body.serviceCustomerId)).toEqual(['cloud_sync', 'pro']);
      const refund = await send(event('charge.refunded', { id: uid('ch'), object: 'charge', customer: sub.customer }, { created: t0 + 1 }));
      expect(refund.body.decision).toBe('no_op');
      expect(await activeKeys(created.body.serviceCustomerId)).toEqual(['cloud_sync', 'pro']);
      const deleted = await send(event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: t0 + 2 }));
      expect(deleted.body).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: created.body.serviceCustomerId }));
      expect(await activeKeys(created.body.serviceCustomerId)).toEqual([]);
      // Manual revoke of a rail-derived entitlement stays refused.
      const revoke = await t.http
        .post(`/v1/server/customers/${created.body.serviceCustomerId}/revoke`)
        .set(keyHeaders(fx, fx.keys.skTest))
        .send({ entitlementKey: 'pro' });
      expect(revoke.status).toBe(400);
    });

    it('a plan change ends the keys of the previous product', async () => {
      const sub = subscription();
      const t0 = now();
      const created = await send(event('customer.subscription.created', sub, { created: t0 }));
      const changed = subscription({ id: sub.id, customer: sub.customer, product: 'prod_basic' });
      const res = await send(event('customer.subscription.updated', changed, { created: t0 + 1 }));
      expect(res.body.decision).toBe('applied');
      expect(await activeKeys(created.body.serviceCustomerId)).toEqual(['basic']);
    });

    it('a product missing from the catalogue is rejected and changes nothing', async () => {
      const before = await t.dataSource.query(`SELECT count(*)::int AS n FROM customers WHERE project_id = $1`, [fx.projectId]);
      const res = await send(event('customer.subscription.created', subscription({ product: 'prod_unknown' })));
      expect(res.body).toEqual(expect.objectContaining({ decision: 'rejected', serviceCustomerId: null }));
      const after = await t.dataSource.query(`SELECT count(*)::int AS n FROM customers WHERE project_id = $1`, [fx.projectId]);
      expect(after[0].n).toBe(before[0].n);
      expect((await audit(res.body.auditEventId)).body.data).toEqual(expect.objectContaining({ decision: 'rejected', customerId: '' }));
    });

    it('ignored types are no_op with one audit entry', async () => {
      for (const type of ['invoice.paid', 'invoice.payment_failed', 'charge.refunded', 'customer.created']) {
        const res = await send(event(type, { id: uid('obj'), object: 'whatever' }));
        expect(res.body).toEqual(expect.objectContaining({ decision: 'no_op', serviceCustomerId: null }));
        expect((await audit(res.body.auditEventId)).body.data.eventType).toBe(type);
      }
    });
  });
});
