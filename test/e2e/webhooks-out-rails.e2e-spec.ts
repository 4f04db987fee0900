import { WebhookDispatcher } from '#webhooks';
import { keyHeaders } from '../support/fixtures.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';
import { operatorAuth } from '../support/test-app.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';

/** Outbound events of card subscription changes: auto-renew off and on, and a rail-only customer folded into a named one. */
describe('outbound webhooks: card subscription renewal and customer folds', () => {
  const h = cardWebhookHarness({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123456789' }, { ownDatabase: true });
  const { now, subscription, event, send } = h;
  let receiver: WebhookReceiver;
  let hookPath: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    hookPath = `/rails/${uid('hook')}`;
    const res = await h.t.http
      .post(`/admin/v1/projects/${h.fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(hookPath), env: 'sandbox' });
    expect(res.status).toBe(201);
  });
  afterAll(async () => {
    await receiver.close();
  });

  const drain = () => h.t.app.get(WebhookDispatcher).drain();
  const eventsOf = (customerId: string) => receiver.of(hookPath).filter((r) => r.json.data.serviceCustomerId === customerId);
  const typesOf = (customerId: string) => eventsOf(customerId).map((r) => r.json.type as string);

  it('cancel_at_period_end on and off: subscription.canceled, then subscription.uncanceled; a repeat yields nothing', async () => {
    const sub = subscription();
    const created = await send(event('customer.subscription.created', sub));
    expect(created.status).toBe(200);
    const customerId = created.body.serviceCustomerId;
    await drain();
    expect(typesOf(customerId).sort()).toEqual(['customer.entitlements.updated', 'subscription.started']);

    const canceled = { ...sub, cancel_at_period_end: true };
    expect((await send(event('customer.subscription.updated', canceled, { created: now() + 1 }))).status).toBe(200);
    await drain();
    const cancel = eventsOf(customerId).filter((r) => r.json.type === 'subscription.canceled');
    expect(cancel).toHaveLength(1);
    expect(cancel[0].json.data).toEqual(
      expect.objectContaining({ serviceCustomerId: customerId, rail: 'card_payments', subscriptionId: sub.id, state: 'active', willRenew: false }),
    );
    // Entitlements did not change: no customer.entitlements.updated for it.
    expect(typesOf(customerId).filter((type) => type === 'customer.entitlements.updated')).toHaveLength(1);

    // The same state again (a retried notification) changes nothing.
    expect((await send(event('customer.subscription.updated', canceled, { created: now() + 2 }))).status).toBe(200);
    expect((await send(event('customer.subscription.updated', sub, { created: now() + 3 }))).status).toBe(200);
    await drain();
    const uncancel = eventsOf(customerId).filter((r) => r.json.type === 'subscription.uncanceled');
    expect(uncancel).toHaveLength(1);
    expect(uncancel[0].json.data).toEqual(expect.objectContaining({ subscriptionId: sub.id, state: 'active', willRenew: true }));
    expect(typesOf(customerId).sort()).toEqual(['customer.entitlements.updated', 'subscription.canceled', 'subscription.started', 'subscription.uncanceled']);
  });

  it('a rail-only customer folded into a named one: both customers get customer.entitlements.updated', async () => {
    const customer = uid('cus');
    const sub = subscription({ customer });
    const created = await send(event('customer.subscription.created', sub));
    const railOnly = created.body.serviceCustomerId;
    const userId = uid('user');
    const checkout = await send(
      event('checkout.session.completed', {
        id: uid('cs'),
        object: 'checkout.session',
        customer,
        subscription: sub.id,
        client_reference_id: userId,
        metadata: {},
      }),
    );
    expect(checkout.status).toBe(200);
    const named = checkout.body.serviceCustomerId;
    expect(named).not.toBe(railOnly);
    await drain();

    const left = eventsOf(railOnly).filter((r) => r.json.type === 'customer.entitlements.updated');
    expect(left).toHaveLength(2);
    const last = left.sort((a, b) => a.json.data.sequence - b.json.data.sequence)[1].json.data;
    expect(last.entitlements).toEqual([]);
    expect(last.changes.map((c: { key: string; change: string; cause: string }) => [c.key, c.change, c.cause]).sort()).toEqual([
      ['cloud_sync', 'deactivated', 'revoke'],
      ['pro', 'deactivated', 'revoke'],
    ]);

    const arrived = eventsOf(named).filter((r) => r.json.type === 'customer.entitlements.updated');
    expect(arrived).toHaveLength(1);
    expect(arrived[0].json.data.developerUserId).toBe(userId);
    expect(arrived[0].json.data.entitlements.map((e: { key: string }) => e.key).sort()).toEqual(['cloud_sync', 'pro']);
    expect(arrived[0].json.data.changes.map((c: { change: string; cause: string }) => `${c.change}/${c.cause}`)).toEqual([
      'activated/purchase',
      'activated/purchase',
    ]);
    const read = await h.t.http.get(`/v1/server/customers/${named}/entitlements`).set(keyHeaders(h.fx, h.fx.keys.skTest));
    expect(read.body.data.filter((e: { isActive: boolean }) => e.isActive)).toHaveLength(2);
  });

  it('the moved subscription is announced once to its new customer: subscription.transferred with fromServiceCustomerId and the subscription', async () => {
    const customer = uid('cus');
    const sub = subscription({ customer });
    const created = await send(event('customer.subscription.created', sub));
    const railOnly = created.body.serviceCustomerId;
    const userId = uid('user');
    const checkout = await send(
      event('checkout.session.completed', {
        id: uid('cs'),
        object: 'checkout.session',
        customer,
        subscription: sub.id,
        client_reference_id: userId,
        metadata: {},
      }),
    );
    const named = checkout.body.serviceCustomerId;
    await drain();
    const transferred = eventsOf(named).filter((r) => r.json.type === 'subscription.transferred');
    expect(transferred).toHaveLength(1);
    expect(transferred[0].json.data).toEqual(
      expect.objectContaining({
        serviceCustomerId: named,
        developerUserId: userId,
        fromServiceCustomerId: railOnly,
        rail: 'card_payments',
        subscriptionId: sub.id,
        productId: 'prod_pro',
        state: 'active',
        willRenew: true,
        railEventId: null,
        auditEventId: expect.stringMatching(/^rail_evt_/),
        subscription: expect.objectContaining({ object: 'subscription', id: sub.id, state: 'active', isActive: true }),
      }),
    );
    expect(typesOf(railOnly)).not.toContain('subscription.transferred');
    const audit = await h.t.http.get(`/v1/server/audit/${transferred[0].json.data.auditEventId}`).set(keyHeaders(h.fx, h.fx.keys.skTest));
    expect(audit.body.data).toEqual(expect.objectContaining({ eventType: 'subscription_transferred', customerId: named, decision: 'applied' }));
    // A later event of the same subscription moves nothing: no second transfer.
    expect((await send(event('customer.subscription.updated', sub, { created: now() + 5 }))).status).toBe(200);
    await drain();
    expect(eventsOf(named).filter((r) => r.json.type === 'subscription.transferred')).toHaveLength(1);
  });

  it('a merge approved moves each subscription of the other customer: one subscription.transferred per subscription', async () => {
    const identify = (body: object) => h.t.http.post('/v1/identify').set(keyHeaders(h.fx, h.fx.keys.pubTest)).send(body);
    const a = { userId: uid('user'), anonymousId: uid('anon') };
    const b = { userId: uid('user'), anonymousId: uid('anon') };
    const canonical: string = (await identify(a)).body.serviceCustomerId;
    const other: string = (await identify(b)).body.serviceCustomerId;
    const subs = [subscription({ metadata: { serviceCustomerId: other } }), subscription({ metadata: { serviceCustomerId: other } })];
    for (const sub of subs) expect((await send(event('customer.subscription.created', sub))).body.serviceCustomerId).toBe(other);
    expect((await identify({ userId: a.userId, anonymousId: b.anonymousId })).body.mergePending).toBe(true);
    const reviews = await h.t.http.get(`/admin/v1/projects/${h.fx.projectId}/merge-reviews?env=sandbox`).set(operatorAuth());
    const review = reviews.body.data.find((r: { otherCustomerId: string }) => r.otherCustomerId === other);
    const approved = await h.t.http.post(`/admin/v1/projects/${h.fx.projectId}/merge-reviews/${review.id}/approve`).set(operatorAuth());
    expect(approved.status).toBe(200);
    await drain();
    const transferred = eventsOf(canonical).filter((r) => r.json.type === 'subscription.transferred');
    expect(transferred.map((r) => r.json.data.subscriptionId).sort()).toEqual(subs.map((sub) => sub.id).sort());
    for (const r of transferred) {
      expect(r.json.data).toEqual(
        expect.objectContaining({ fromServiceCustomerId: other, railEventId: null, subscription: expect.objectContaining({ state: 'active' }) }),
      );
      // The merged customer holds both developer user ids.
      expect([a.userId, b.userId]).toContain(r.json.data.developerUserId);
    }
  });
});
