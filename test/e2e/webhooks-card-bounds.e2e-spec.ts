import { operatorAuth } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { cardWebhookHarness } from '../support/harness/webhooks-card.js';

describe('webhooks: card payments, bounded fields and archived projects', () => {
  const h = cardWebhookHarness();
  const { now, subscription, event, send, counts } = h;
  const revenueRows = async () =>
    (await h.t.dataSource.query(`SELECT count(*)::int AS n FROM revenue_subscriptions WHERE project_id = $1`, [h.fx.projectId]))[0].n as number;
  const entitlementRows = async () =>
    (await h.t.dataSource.query(`SELECT count(*)::int AS n FROM entitlements WHERE project_id = $1`, [h.fx.projectId]))[0].n as number;

  it.each([
    ['created', () => event('customer.subscription.created', subscription(), { created: 1e308 })],
    ['created', () => event('customer.subscription.created', subscription(), { created: 2 ** 63 })],
    ['data.object.current_period_end', () => event('customer.subscription.created', { ...subscription(), current_period_end: 1e308 })],
    ['data.object.items.data[0].current_period_end', () => event('customer.subscription.created', subscription({ periodEnd: 2 ** 63 }))],
    ['id', () => event('customer.subscription.created', subscription(), { id: `evt_${'x'.repeat(600)}` })],
    ['data.object.id', () => event('customer.subscription.created', subscription({ id: `sub_${'x'.repeat(600)}` }))],
    ['data.object.customer', () => event('customer.subscription.created', subscription({ customer: `cus_${'x'.repeat(600)}` }))],
  ])('a validly signed event with %s out of bounds: 400 invalid_param_value naming it, nothing written', async (field, make) => {
    const before = await counts();
    const rows = await entitlementRows();
    const res = await send(make());
    expectError(res, 400, 'invalid_param_value');
    expect(res.body.error.message.startsWith(`${field}: `)).toBe(true);
    expect(await counts()).toEqual(before);
    expect(await entitlementRows()).toBe(rows);
  });

  /** A subscription whose one item has a fixed monthly price of `unitAmount` minor units, `quantity` times. */
  const priced = (unitAmount: unknown, quantity: unknown = 1) => {
    const object = subscription();
    const [item] = object.items.data as Record<string, unknown>[];
    item.price = { ...(item.price as object), unit_amount: unitAmount, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } };
    item.quantity = quantity;
    return event('customer.subscription.created', object);
  };

  it.each([
    ['unit_amount', 1e308, 1],
    ['unit_amount', 2 ** 63, 1],
    ['unit_amount', 2 ** 53 + 1, 1],
    ['unit_amount', 100_000_000_001, 1],
    ['unit_amount', -(2 ** 63), 1],
    ['unit_amount', 9.5, 1],
    ['quantity', 999, 1e308],
    ['quantity', 999, 2 ** 63],
    ['quantity', 999, 2 ** 53 + 1],
    ['quantity', 999, -1],
    ['quantity', 100_000, 1_000_001],
  ])('a signed card event with a %s out of bounds (%s × %s): 400 invalid_param_value naming it, nothing stored', async (field, unitAmount, quantity) => {
    const before = await counts();
    const rows = await entitlementRows();
    const revenue = await revenueRows();
    const res = await send(priced(unitAmount, quantity));
    expectError(res, 400, 'invalid_param_value');
    const path = field === 'unit_amount' ? 'data.object.items.data[0].price.unit_amount' : 'data.object.items.data[0].quantity';
    expect(res.body.error.message.startsWith(`${path}: `)).toBe(true);
    expect(await counts()).toEqual(before);
    expect(await entitlementRows()).toBe(rows);
    expect(await revenueRows()).toBe(revenue);
  });

  it('an invoice paid with an amount out of bounds: 400 naming data.object.amount_paid', async () => {
    const before = await counts();
    const res = await send(event('invoice.paid', { id: 'in_huge', object: 'invoice', customer: 'cus_huge', currency: 'usd', amount_paid: 1e308 }));
    expectError(res, 400, 'invalid_param_value');
    expect(res.body.error.message.startsWith('data.object.amount_paid: ')).toBe(true);
    expect(await counts()).toEqual(before);
  });

  it('the largest amount within the bound is accepted and stored as a finite monthly amount', async () => {
    const res = await send(priced(100_000_000_000, 1));
    expect(res.status).toBe(200);
    const stored = await h.t.dataSource.query(`SELECT monthly_minor::float8 AS m FROM revenue_subscriptions WHERE project_id = $1 AND monthly_minor > 0`, [
      h.fx.projectId,
    ]);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.every((row: { m: number }) => Number.isFinite(row.m) && row.m <= 100_000_000_000)).toBe(true);
  });

  // Last: it archives the spec's project.
  it('an archived project answers 404 resource_missing like an unknown one; nothing written', async () => {
    const live = await send(event('customer.subscription.created', subscription({ periodEnd: now() + 86400 })));
    expect(live.status).toBe(200);
    const archived = await h.t.http.post(`/admin/v1/projects/${h.fx.projectId}/archive`).set(operatorAuth());
    expect(archived.body).toEqual(expect.objectContaining({ archived: true }));
    const before = await counts();
    const rows = await entitlementRows();
    const res = await send(event('customer.subscription.created', subscription({ periodEnd: now() + 86400 })));
    expectError(res, 404, 'resource_missing');
    expect(res.body.error.message).toBe(`No project ${h.fx.projectId} with the card_payments rail enabled`);
    expect(await counts()).toEqual(before);
    expect(await entitlementRows()).toBe(rows);
  });
});
