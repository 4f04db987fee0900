import { RailSubscriptionsRepository } from '../../libs/rails/src/model/rail-subscriptions.repository.js';
import { unique } from '../support/medium.js';
import { cardRail, type CardRail } from './card-rail.js';

/**
 * The shared rail model's rules, driven through the card notification entry on the rails'
 * modules alone (no HTTP): subscription records and audit entries, newest rail time wins, the
 * catalogue gate, a product change ending keys, one entitlement row aggregating the live
 * subscriptions, notifications and transactions claimed once, the processor's statuses, and
 * subscriptions of several items. Signatures, paths and answers over HTTP stay in
 * test/e2e/webhooks-card-*.e2e-spec.ts.
 */
describe('medium: rail model through the card notification entry', () => {
  let c: CardRail;
  let subscriptions: RailSubscriptionsRepository;

  beforeAll(async () => {
    c = await cardRail();
    subscriptions = c.m.get(RailSubscriptionsRepository);
  });
  afterAll(() => c?.close());

  // What a delivery left in storage: the notifications recorded and the card audit entries, and the customers created.
  const counts = async () => {
    const [{ n: notifications }] = await c.m.dataSource.query(`SELECT count(*)::int AS n FROM rail_notifications WHERE project_id = $1`, [c.projectId]);
    const [{ n: entries }] = await c.m.dataSource.query(`SELECT count(*)::int AS n FROM audit_entries WHERE project_id = $1 AND rail = 'card_payments'`, [
      c.projectId,
    ]);
    return { notifications, entries };
  };
  const customerCount = async (): Promise<number> =>
    (await c.m.dataSource.query(`SELECT count(*)::int AS n FROM customers WHERE project_id = $1`, [c.projectId]))[0].n;

  it('applies a state: subscription record, one entitlement per catalogue key, one audit entry with the rail fields', async () => {
    const validUntil = c.now() + 3600;
    const sub = c.subscription({ periodEnd: validUntil });
    const result = await c.send(c.event('customer.subscription.updated', sub));
    expect(result.decision).toBe('applied');
    const customerId = result.serviceCustomerId!;
    const read = await c.entitlements(customerId);
    expect(read.map((e) => e.key)).toEqual(['cloud_sync', 'pro']);
    expect(read[0]).toMatchObject({ isActive: true, validUntil, source: { rail: 'card_payments', productId: 'prod_pro', subscriptionId: sub.id } });

    const audit = await c.audit(result.auditEventId);
    expect(audit).toMatchObject({
      rail: 'card_payments',
      env: 'sandbox',
      eventType: 'customer.subscription.updated',
      decision: 'applied',
      customerId,
      signatureVerified: true,
      reconciledWithProvider: false,
    });
    expect(typeof audit!.rawEventReceivedAt).toBe('number');
    expect(typeof audit!.processedAt).toBe('number');

    expect(await subscriptions.customerStatus(c.sandbox, customerId, 'card_payments', c.m.clock.nowMs())).toBe('live');
    expect(await subscriptions.customerStatus(c.sandbox, customerId, 'card_payments', (validUntil + 1) * 1000)).toBe('lapsed');
    expect(await subscriptions.customerStatus(c.sandbox, customerId, 'ios_store', c.m.clock.nowMs())).toBe('none');
  });

  it('newest rail time wins: an older state is a no_op; the same state again is a no_op; a newer one applies', async () => {
    const sub = c.subscription({ product: 'prod_basic', periodEnd: c.now() + 100 });
    const t0 = c.now();
    const created = await c.send(c.event('customer.subscription.created', sub, { created: t0 }));
    expect(created.decision).toBe('applied');
    const customerId = created.serviceCustomerId!;
    const older = await c.send(c.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: t0 - 1 }));
    expect(older.decision).toBe('no_op');
    expect((await subscriptions.find(c.sandbox, 'card_payments', sub.id))?.state).toBe('active');
    expect((await c.send(c.event('customer.subscription.updated', sub, { created: t0 }))).decision).toBe('no_op');
    const newer = await c.send(c.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: t0 + 20 }));
    expect(newer.decision).toBe('applied');
    expect(await c.activeKeys(customerId)).toEqual([]);
    expect(await c.states(customerId)).toEqual({ basic: 'expired' });
    expect(await subscriptions.customerStatus(c.sandbox, customerId, 'card_payments', c.m.clock.nowMs())).toBe('lapsed');

    // Out of order: an active state older than the cancellation changes nothing.
    const late = await c.send(c.event('customer.subscription.updated', { ...sub, status: 'active' }, { created: t0 + 10 }));
    expect(late).toEqual(expect.objectContaining({ decision: 'no_op', serviceCustomerId: customerId }));
    expect(await c.activeKeys(customerId)).toEqual([]);
    expect((await c.audit(late.auditEventId))?.reason).toMatch(/Older than the stored state/);
  });

  it('a product missing from the catalogue is rejected and changes nothing', async () => {
    // A known card customer: the rejection is journaled on it.
    const known = await c.send(c.event('customer.subscription.created', c.subscription({ product: 'prod_basic' })));
    const customer = (
      await c.m.dataSource.query(`SELECT value FROM customer_aliases WHERE customer_id = $1 AND type = 'card_customer_id'`, [known.serviceCustomerId])
    )[0].value;
    const sub = c.subscription({ customer, product: 'prod_unknown' });
    const result = await c.send(c.event('customer.subscription.created', sub));
    expect(result.decision).toBe('rejected');
    expect(await subscriptions.find(c.sandbox, 'card_payments', sub.id)).toBeNull();
    expect(await c.audit(result.auditEventId)).toMatchObject({ decision: 'rejected', customerId: known.serviceCustomerId });

    // An unknown card customer: no customer is created for it.
    const before = await customerCount();
    const stranger = await c.send(c.event('customer.subscription.created', c.subscription({ product: 'prod_unknown' })));
    expect(stranger).toEqual(expect.objectContaining({ decision: 'rejected', serviceCustomerId: null }));
    expect(await customerCount()).toBe(before);
    expect(await c.audit(stranger.auditEventId)).toEqual(expect.objectContaining({ decision: 'rejected', customerId: '' }));
  });

  it('a product change (plan change) ends the keys the previous product granted', async () => {
    const sub = c.subscription();
    const t0 = c.now();
    const created = await c.send(c.event('customer.subscription.created', sub, { created: t0 }));
    const changed = c.subscription({ id: sub.id, customer: sub.customer, product: 'prod_basic' });
    const result = await c.send(c.event('customer.subscription.updated', changed, { created: t0 + 1 }));
    expect(result.decision).toBe('applied');
    expect(await c.activeKeys(created.serviceCustomerId!)).toEqual(['basic']);
    expect((await c.entitlements(created.serviceCustomerId!)).map((e) => e.key)).toEqual(['basic']);
  });

  it('one entitlement row aggregates the live subscriptions of a customer on a rail: ending one keeps the key from the other', async () => {
    const customer = unique('cus');
    const t0 = c.now();
    const longer = c.now() + 7200;
    const first = c.subscription({ customer, periodEnd: c.now() + 3600 });
    const second = c.subscription({ customer, periodEnd: longer });
    const a = await c.send(c.event('customer.subscription.created', first, { created: t0 }));
    const customerId = a.serviceCustomerId!;
    expect((await c.send(c.event('customer.subscription.created', second, { created: t0 }))).serviceCustomerId).toBe(customerId);
    expect((await c.entitlements(customerId)).map((e) => e.validUntil)).toEqual([longer, longer]);
    const keys = async () => (await c.entitlements(customerId)).map((e) => ({ until: e.validUntil, sub: e.source.subscriptionId, active: e.isActive }));
    // a shorter renewal of the first does not shorten the key
    const renewed = c.subscription({ id: first.id, customer, periodEnd: c.now() + 3700 });
    await c.send(c.event('customer.subscription.updated', renewed, { created: t0 + 1 }));
    expect(await keys()).toEqual([
      { until: longer, sub: second.id, active: true },
      { until: longer, sub: second.id, active: true },
    ]);
    // cancelling the second falls back to the first
    const cancelled = await c.send(c.event('customer.subscription.deleted', { ...second, status: 'canceled' }, { created: t0 + 2 }));
    expect(cancelled.decision).toBe('applied');
    expect((await keys()).map(({ active, sub }) => ({ active, sub }))).toEqual([
      { active: true, sub: first.id },
      { active: true, sub: first.id },
    ]);
    // cancelling both ends it
    await c.send(c.event('customer.subscription.deleted', { ...renewed, status: 'canceled' }, { created: t0 + 3 }));
    expect(await c.states(customerId)).toEqual({ cloud_sync: 'expired', pro: 'expired' });
    expect(await c.entitlements(customerId)).toEqual([]);
  });

  describe('notifications and transactions are claimed once', () => {
    it('a transaction is claimed once: the second claim answers the first record', async () => {
      const customerId = await c.m.newCustomer(c.sandbox);
      const tx = {
        rail: 'card_payments' as const,
        transactionId: unique('tx'),
        subscriptionId: unique('sub'),
        customerId,
        decision: 'applied' as const,
        auditEventId: null,
      };
      expect(await c.m.sql.transaction(() => subscriptions.claimTransaction(c.sandbox, tx, c.m.clock.now()))).toBeNull();
      expect(await c.m.sql.transaction(() => subscriptions.claimTransaction(c.sandbox, tx, c.m.clock.now()))).toMatchObject({
        transactionId: tx.transactionId,
      });
    });

    it('a duplicate is answered from the first processing and writes nothing', async () => {
      const body = c.event('customer.subscription.created', c.subscription());
      const first = await c.send(body);
      const before = await counts();
      const again = await c.send(body);
      expect(again).toEqual({ ...first, duplicate: true });
      expect(await counts()).toEqual(before);
    });

    it('concurrent deliveries of one event are applied once', async () => {
      const body = c.event('customer.subscription.created', c.subscription());
      const before = await counts();
      const answers = await Promise.all(Array.from({ length: 20 }, () => c.send(body)));
      expect(answers.filter((answer) => !answer.duplicate)).toHaveLength(1);
      expect(new Set(answers.map((answer) => answer.auditEventId)).size).toBe(1);
      const after = await counts();
      expect(after.entries - before.entries).toBe(1);
      expect(after.notifications - before.notifications).toBe(1);
    });
  });

  describe("the processor's subscription statuses", () => {
    // Access follows the subscription's state: past_due without a grace period (the rail's
    // default) ends access at the unpaid period's start; a pause keeps it until the paid period's end.
    it.each([
      ['trialing', true],
      ['past_due', false],
      ['canceled', false],
      ['unpaid', false],
      ['incomplete', false],
      ['incomplete_expired', false],
      ['paused', true],
    ])('status %s: active %s', async (status, active) => {
      const result = await c.send(c.event('customer.subscription.updated', c.subscription({ status })));
      expect(result.decision).toBe('applied');
      expect(await c.activeKeys(result.serviceCustomerId!)).toEqual(active ? ['cloud_sync', 'pro'] : []);
    });

    it('cancel_at_period_end stays active until the period end, then lapses on the clock', async () => {
      const result = await c.send(c.event('customer.subscription.updated', c.subscription({ cancelAtPeriodEnd: true, periodEnd: c.now() + 3600 })));
      expect(await c.activeKeys(result.serviceCustomerId!)).toEqual(['cloud_sync', 'pro']);
      c.m.clock.advance(3601);
      expect(await c.activeKeys(result.serviceCustomerId!)).toEqual([]);
    });

    it('ignored types are no_op with one audit entry', async () => {
      for (const type of ['invoice.paid', 'invoice.payment_failed', 'charge.refunded', 'customer.created']) {
        const result = await c.send(c.event(type, { id: unique('obj'), object: 'whatever' }));
        expect(result).toEqual(expect.objectContaining({ decision: 'no_op', serviceCustomerId: null }));
        expect((await c.audit(result.auditEventId))?.eventType).toBe(type);
      }
    });
  });

  describe('subscriptions with several items', () => {
    const rows = async (customerId: string) => Object.fromEntries((await c.entitlements(customerId)).map((e) => [e.key, e]));
    /** The stored entitlement row of a key (inactive rows are not in the read). */
    const entitlementRow = async (customerId: string, key: string) =>
      (
        await c.m.dataSource.query(
          `SELECT state, product_id, subscription_id, last_event_id FROM entitlements WHERE project_id = $1 AND customer_id = $2 AND entitlement_key = $3 AND rail = 'card_payments'`,
          [c.projectId, customerId, key],
        )
      )[0];
    const record = async (subscriptionId: string) =>
      (
        await c.m.dataSource.query(`SELECT product_id, valid_until, raw_status FROM rail_subscriptions WHERE project_id = $1 AND subscription_id = $2`, [
          c.projectId,
          subscriptionId,
        ])
      )[0];

    it("two items grant both products' keys, each until its own item's period end; one audit entry", async () => {
      const proEnd = c.now() + 3600;
      const basicEnd = c.now() + 30 * 86400;
      const sub = c.subscription({
        items: [
          { product: 'prod_pro', periodEnd: proEnd },
          { product: 'prod_basic', periodEnd: basicEnd },
        ],
      });
      const before = await counts();
      const result = await c.send(c.event('customer.subscription.created', sub));
      expect(result).toEqual(expect.objectContaining({ decision: 'applied', duplicate: false }));
      expect(await counts()).toEqual({ notifications: before.notifications + 1, entries: before.entries + 1 });
      const customerId = result.serviceCustomerId!;
      expect(await c.activeKeys(customerId)).toEqual(['basic', 'cloud_sync', 'pro']);
      const read = await rows(customerId);
      expect(read.pro).toEqual(
        expect.objectContaining({ isActive: true, validUntil: proEnd, source: { rail: 'card_payments', productId: 'prod_pro', subscriptionId: sub.id } }),
      );
      expect(read.cloud_sync).toEqual(expect.objectContaining({ isActive: true, validUntil: proEnd }));
      expect(read.basic).toEqual(
        expect.objectContaining({ isActive: true, validUntil: basicEnd, source: { rail: 'card_payments', productId: 'prod_basic', subscriptionId: sub.id } }),
      );
      const entry = await c.audit(result.auditEventId);
      expect(entry).toEqual(expect.objectContaining({ decision: 'applied', customerId }));
      expect(entry?.reason).toContain('prod_pro, prod_basic');
      // The record: the first product in product_id, the subscription's end, every item after the status word.
      const stored = await record(sub.id);
      expect(stored.product_id).toBe('prod_pro');
      expect(new Date(stored.valid_until).getTime()).toBe(basicEnd * 1000);
      expect(stored.raw_status).toMatch(/^active items=\[/);
      // The same state again changes nothing.
      expect((await c.send(c.event('customer.subscription.updated', sub))).decision).toBe('no_op');
      // The first item's period ends: its keys lapse on the clock, the other item's stay.
      c.m.clock.advance(3601);
      expect(await c.activeKeys(customerId)).toEqual(['basic']);
    });

    it('an update removing one item turns off only its keys; an older event does not bring it back', async () => {
      const sub = c.subscription({ items: [{ product: 'prod_pro' }, { product: 'prod_basic' }] });
      const t0 = c.now();
      const created = await c.send(c.event('customer.subscription.created', sub, { created: t0 }));
      const customerId = created.serviceCustomerId!;
      expect(await c.activeKeys(customerId)).toEqual(['basic', 'cloud_sync', 'pro']);
      const removed = { ...sub, items: { ...sub.items, data: [sub.items.data[0]] } };
      const update = await c.send(c.event('customer.subscription.updated', removed, { created: t0 + 2 }));
      expect(update).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: customerId }));
      expect(await c.activeKeys(customerId)).toEqual(['cloud_sync', 'pro']);
      expect(await entitlementRow(customerId, 'basic')).toEqual({
        state: 'expired',
        product_id: 'prod_basic',
        subscription_id: sub.id,
        last_event_id: update.auditEventId,
      });
      // The single remaining item: the record is a plain one-product record again.
      expect((await record(sub.id)).raw_status).toBe('active');
      expect((await c.send(c.event('customer.subscription.updated', sub, { created: t0 + 1 }))).decision).toBe('no_op');
      expect(await c.activeKeys(customerId)).toEqual(['cloud_sync', 'pro']);
      // Cancelling ends every remaining item's keys.
      const deleted = await c.send(c.event('customer.subscription.deleted', { ...removed, status: 'canceled' }, { created: t0 + 3 }));
      expect(deleted.decision).toBe('applied');
      expect(await c.activeKeys(customerId)).toEqual([]);
    });

    it('keys the removed items share with another item or another subscription stay on', async () => {
      const customer = unique('cus');
      const teamEnd = c.now() + 10 * 86400;
      const other = await c.send(c.event('customer.subscription.created', c.subscription({ customer, product: 'prod_basic' })));
      const customerId = other.serviceCustomerId!;
      const sub = c.subscription({
        customer,
        items: [{ product: 'prod_pro' }, { product: 'prod_team', periodEnd: teamEnd }, { product: 'prod_basic' }],
      });
      const t0 = c.now();
      const created = await c.send(c.event('customer.subscription.created', sub, { created: t0 }));
      expect(created.serviceCustomerId).toBe(customerId);
      expect(await c.activeKeys(customerId)).toEqual(['basic', 'cloud_sync', 'pro', 'team']);
      // prod_pro grants pro longer than prod_team does.
      expect((await rows(customerId)).pro.source.productId).toBe('prod_pro');
      const onlyTeam = { ...sub, items: { ...sub.items, data: [sub.items.data[1]] } };
      const update = await c.send(c.event('customer.subscription.updated', onlyTeam, { created: t0 + 1 }));
      expect(update.decision).toBe('applied');
      // cloud_sync was only prod_pro's; pro is still prod_team's; basic is still the other subscription's.
      expect(await c.activeKeys(customerId)).toEqual(['basic', 'pro', 'team']);
      const read = await rows(customerId);
      expect(read.pro).toEqual(
        expect.objectContaining({ isActive: true, validUntil: teamEnd, source: { rail: 'card_payments', productId: 'prod_team', subscriptionId: sub.id } }),
      );
      expect(read.basic.source.subscriptionId).not.toBe(sub.id);
      expect(read.cloud_sync).toBeUndefined();
      expect(await entitlementRow(customerId, 'cloud_sync')).toEqual(expect.objectContaining({ state: 'expired', product_id: 'prod_pro' }));
    });

    it('an item with a product missing from the catalogue beside a known one: the known one applies', async () => {
      const sub = c.subscription({ items: [{ product: 'prod_unknown' }, { product: 'prod_basic' }] });
      const result = await c.send(c.event('customer.subscription.created', sub));
      expect(result).toEqual(expect.objectContaining({ decision: 'applied' }));
      expect(await c.activeKeys(result.serviceCustomerId!)).toEqual(['basic']);
      expect((await rows(result.serviceCustomerId!)).basic.source.productId).toBe('prod_basic');
      // The record keeps the products that grant.
      const stored = await record(sub.id);
      expect({ product: stored.product_id, raw: stored.raw_status }).toEqual({ product: 'prod_basic', raw: 'active' });
    });

    it('every product missing from the catalogue: rejected, nothing stored', async () => {
      const before = await customerCount();
      const sub = c.subscription({ items: [{ product: 'prod_unknown' }, { product: 'prod_gone' }] });
      const result = await c.send(c.event('customer.subscription.created', sub));
      expect(result).toEqual(expect.objectContaining({ decision: 'rejected', serviceCustomerId: null }));
      expect((await c.audit(result.auditEventId))?.reason).toContain('prod_unknown, prod_gone');
      expect(await record(sub.id)).toBeUndefined();
      expect(await customerCount()).toBe(before);
    });
  });
});
