import { keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { type TestApp } from '../support/test-app.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';

describe('webhooks: card payments, subscription events', () => {
  const h = cardWebhookHarness();
  let t: TestApp;
  let fx: ProjectFixture;
  beforeAll(() => {
    ({ t, fx } = h);
  });
  const { now, subscription, event, send, entitlements, activeKeys, audit } = h;

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
  });
});
