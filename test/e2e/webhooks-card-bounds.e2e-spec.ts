import { operatorAuth } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { cardWebhookHarness } from '../support/harness/webhooks-card.js';

describe('webhooks: card payments, bounded fields and archived projects', () => {
  const h = cardWebhookHarness();
  const { now, subscription, event, send, counts } = h;
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
