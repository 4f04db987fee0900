import { type ProjectFixture } from '../support/fixtures.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';

describe('webhooks: card payments, subscriptions with several items', () => {
  const h = cardWebhookHarness();
  let t: TestApp;
  let fx: ProjectFixture;
  beforeAll(() => {
    ({ t, fx } = h);
  });
  const { now, subscription, event, send, entitlements, activeKeys, audit, counts } = h;

  describe('subscriptions with several items', () => {
    const rows = async (customerId: string) => {
      const res = await entitlements(customerId);
      expect(res.status).toBe(200);
      return Object.fromEntries(res.body.data.map((e: any) => [e.key, e]));
    };
    /** The stored entitlement row of a key (inactive rows are not in the public read). */
    const entitlementRow = async (customerId: string, key: string) =>
      (
        await t.dataSource.query(
          `SELECT state, product_id, subscription_id, last_event_id FROM entitlements WHERE project_id = $1 AND customer_id = $2 AND entitlement_key = $3 AND rail = 'card_payments'`,
          [fx.projectId, customerId, key],
        )
      )[0];
    const record = async (subscriptionId: string) =>
      (
        await t.dataSource.query(`SELECT product_id, valid_until, raw_status FROM rail_subscriptions WHERE project_id = $1 AND subscription_id = $2`, [
          fx.projectId,
          subscriptionId,
        ])
      )[0];

    it("two items grant both products' keys, each until its own item's period end; one audit entry", async () => {
      const proEnd = now() + 3600;
      const basicEnd = now() + 30 * 86400;
      const sub = subscription({
        items: [
          { product: 'prod_pro', periodEnd: proEnd },
          { product: 'prod_basic', periodEnd: basicEnd },
        ],
      });
      const before = await counts();
      const res = await send(event('customer.subscription.created', sub));
      expect(res.body).toEqual(expect.objectContaining({ decision: 'applied', duplicate: false }));
      expect(await counts()).toEqual({ notifications: before.notifications + 1, entries: before.entries + 1 });
      const customerId = res.body.serviceCustomerId;
      expect(await activeKeys(customerId)).toEqual(['basic', 'cloud_sync', 'pro']);
      const read = await rows(customerId);
      expect(read.pro).toEqual(
        expect.objectContaining({ isActive: true, validUntil: proEnd, source: { rail: 'card_payments', productId: 'prod_pro', subscriptionId: sub.id } }),
      );
      expect(read.cloud_sync).toEqual(expect.objectContaining({ isActive: true, validUntil: proEnd }));
      expect(read.basic).toEqual(
        expect.objectContaining({ isActive: true, validUntil: basicEnd, source: { rail: 'card_payments', productId: 'prod_basic', subscriptionId: sub.id } }),
      );
      const entry = (await audit(res.body.auditEventId)).body.data;
      expect(entry).toEqual(expect.objectContaining({ decision: 'applied', customerId }));
      expect(entry.reason).toContain('prod_pro, prod_basic');
      // The record: the first product in product_id, the subscription's end, every item after the status word.
      const stored = await record(sub.id);
      expect(stored.product_id).toBe('prod_pro');
      expect(new Date(stored.valid_until).getTime()).toBe(basicEnd * 1000);
      expect(stored.raw_status).toMatch(/^active items=\[/);
      // The same state again changes nothing.
      const again = await send(event('customer.subscription.updated', sub));
      expect(again.body.decision).toBe('no_op');
      // The first item's period ends: its keys lapse on the clock, the other item's stay.
      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 3601 });
      expect(await activeKeys(customerId)).toEqual(['basic']);
    });

    it('an update removing one item turns off only its keys; an older event does not bring it back', async () => {
      const sub = subscription({ items: [{ product: 'prod_pro' }, { product: 'prod_basic' }] });
      const t0 = now();
      const created = await send(event('customer.subscription.created', sub, { created: t0 }));
      const customerId = created.body.serviceCustomerId;
      expect(await activeKeys(customerId)).toEqual(['basic', 'cloud_sync', 'pro']);
      const removed = { ...sub, items: { ...sub.items, data: [sub.items.data[0]] } };
      const update = await send(event('customer.subscription.updated', removed, { created: t0 + 2 }));
      expect(update.body).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: customerId }));
      expect(await activeKeys(customerId)).toEqual(['cloud_sync', 'pro']);
      expect(await entitlementRow(customerId, 'basic')).toEqual({
        state: 'expired',
        product_id: 'prod_basic',
        subscription_id: sub.id,
        last_event_id: update.body.auditEventId,
      });
      // The single remaining item: the record is a plain one-product record again.
      expect((await record(sub.id)).raw_status).toBe('active');
      const late = await send(event('customer.subscription.updated', sub, { created: t0 + 1 }));
      expect(late.body.decision).toBe('no_op');
      expect(await activeKeys(customerId)).toEqual(['cloud_sync', 'pro']);
      // Cancelling ends every remaining item's keys.
      const deleted = await send(event('customer.subscription.deleted', { ...removed, status: 'canceled' }, { created: t0 + 3 }));
      expect(deleted.body.decision).toBe('applied');
      expect(await activeKeys(customerId)).toEqual([]);
    });

    it('keys the removed items share with another item or another subscription stay on', async () => {
      const customer = uid('cus');
      const teamEnd = now() + 10 * 86400;
      const other = await send(event('customer.subscription.created', subscription({ customer, product: 'prod_basic' })));
      const customerId = other.body.serviceCustomerId;
      const sub = subscription({
        customer,
        items: [{ product: 'prod_pro' }, { product: 'prod_team', periodEnd: teamEnd }, { product: 'prod_basic' }],
      });
      const t0 = now();
      const created = await send(event('customer.subscription.created', sub, { created: t0 }));
      expect(created.body.serviceCustomerId).toBe(customerId);
      expect(await activeKeys(customerId)).toEqual(['basic', 'cloud_sync', 'pro', 'team']);
      // prod_pro grants pro longer than prod_team does.
      expect((await rows(customerId)).pro.source.productId).toBe('prod_pro');
      const onlyTeam = { ...sub, items: { ...sub.items, data: [sub.items.data[1]] } };
      const update = await send(event('customer.subscription.updated', onlyTeam, { created: t0 + 1 }));
      expect(update.body.decision).toBe('applied');
      // cloud_sync was only prod_pro's; pro is still prod_team's; basic is still the other subscription's.
      expect(await activeKeys(customerId)).toEqual(['basic', 'pro', 'team']);
      const read = await rows(customerId);
      expect(read.pro).toEqual(
        expect.objectContaining({ isActive: true, validUntil: teamEnd, source: { rail: 'card_payments', productId: 'prod_team', subscriptionId: sub.id } }),
      );
      expect(read.basic.source.subscriptionId).not.toBe(sub.id);
      expect(read.cloud_sync).toBeUndefined();
      expect(await entitlementRow(customerId, 'cloud_sync')).toEqual(expect.objectContaining({ state: 'expired', product_id: 'prod_pro' }));
    });

    it('an item with a product missing from the catalogue beside a known one: the known one applies', async () => {
      const sub = subscription({ items: [{ product: 'prod_unknown' }, { product: 'prod_basic' }] });
      const res = await send(event('customer.subscription.created', sub));
      expect(res.body).toEqual(expect.objectContaining({ decision: 'applied' }));
      expect(await activeKeys(res.body.serviceCustomerId)).toEqual(['basic']);
      expect((await rows(res.body.serviceCustomerId)).basic.source.productId).toBe('prod_basic');
      // The record keeps the products that grant.
      const stored = await record(sub.id);
      expect({ product: stored.product_id, raw: stored.raw_status }).toEqual({ product: 'prod_basic', raw: 'active' });
    });

    it('every product missing from the catalogue: rejected, nothing stored', async () => {
      const before = await t.dataSource.query(`SELECT count(*)::int AS n FROM customers WHERE project_id = $1`, [fx.projectId]);
      const sub = subscription({ items: [{ product: 'prod_unknown' }, { product: 'prod_gone' }] });
      const res = await send(event('customer.subscription.created', sub));
      expect(res.body).toEqual(expect.objectContaining({ decision: 'rejected', serviceCustomerId: null }));
      expect((await audit(res.body.auditEventId)).body.data.reason).toContain('prod_unknown, prod_gone');
      expect(await record(sub.id)).toBeUndefined();
      const after = await t.dataSource.query(`SELECT count(*)::int AS n FROM customers WHERE project_id = $1`, [fx.projectId]);
      expect(after[0].n).toBe(before[0].n);
    });
  });
});
