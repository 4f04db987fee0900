// Which changes are tracked: a scope without an enabled endpoint writes nothing for webhooks,
// and an endpoint enabled on one replica receives the changes another replica commits right
// after the answer (each replica caches "no endpoint" briefly; the enabling call waits it out).
import { WebhookDispatcher } from '#webhooks';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';

const ENV = { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123456789' };

describe('outbound webhooks: tracking only where an endpoint is enabled', () => {
  let a: TestApp;
  let b: TestApp;
  let receiver: WebhookReceiver;
  let counter = 0;

  beforeAll(async () => {
    a = await createTestApp(ENV, { ownDatabase: true });
    b = await createTestApp({ ...ENV, DATABASE_URL: a.config.databaseUrl });
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await b?.close();
    await a?.close();
  });

  const drain = async () => {
    await a.app.get(WebhookDispatcher).drain();
    await b.app.get(WebhookDispatcher).drain();
  };

  async function newCustomer(t: TestApp, fx: ProjectFixture): Promise<string> {
    const res = await t.http
      .post('/v1/identify')
      .set(keyHeaders(fx, fx.keys.skTest))
      .send({ userId: `user_${++counter}`, anonymousId: `anon_${counter}` });
    expect(res.status).toBe(200);
    return res.body.serviceCustomerId;
  }

  async function grant(t: TestApp, fx: ProjectFixture, customerId: string, entitlementKey: string): Promise<void> {
    const res = await t.http
      .post(`/v1/server/customers/${customerId}/grant`)
      .set(keyHeaders(fx, fx.keys.skTest))
      .send({ entitlementKey, duration: 'P30D', reason: 'Support credit after an outage' });
    expect(res.status).toBe(200);
  }

  async function written(projectId: string): Promise<{ events: number; sequences: number }> {
    const [{ events }] = await a.dataSource.query(`SELECT count(*)::int AS events FROM webhook_events WHERE project_id = $1`, [projectId]);
    const [{ sequences }] = await a.dataSource.query(`SELECT count(*)::int AS sequences FROM webhook_customer_sequences WHERE project_id = $1`, [projectId]);
    return { events, sequences };
  }

  it('a change in a scope without an enabled endpoint writes no event, sequence or delivery', async () => {
    const fx = await createProjectWithApp(a);
    const customerId = await newCustomer(a, fx);
    await grant(a, fx, customerId, 'pro_access');
    await grant(b, fx, customerId, 'cloud_sync');
    expect(await written(fx.projectId)).toEqual({ events: 0, sequences: 0 });

    // A disabled endpoint is no enabled endpoint; the other environment's endpoint is not this one's.
    const hook = `/tracking/${++counter}`;
    const disabled = await a.http
      .post(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(hook), env: 'sandbox' });
    expect(disabled.status).toBe(201);
    expect((await a.http.patch(`/admin/v1/webhook-endpoints/${disabled.body.id}`).set(operatorAuth()).send({ status: 'disabled' })).status).toBe(200);
    const production = await a.http
      .post(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(hook), env: 'production' });
    expect(production.status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 150));
    await grant(b, fx, customerId, 'team');
    expect(await written(fx.projectId)).toEqual({ events: 0, sequences: 0 });
    await drain();
    expect(receiver.of(hook)).toEqual([]);
  });

  it('an endpoint created or enabled on one replica receives what another commits right after the answer', async () => {
    const fx = await createProjectWithApp(a);
    const customerId = await newCustomer(a, fx);
    // Replica b has just read "no endpoint" for the scope (and keeps that answer a moment).
    await grant(b, fx, customerId, 'pro_access');
    const hook = `/tracking/${++counter}`;
    const created = await a.http
      .post(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(hook), env: 'sandbox', eventTypes: ['customer.entitlements.updated'] });
    expect(created.status).toBe(201);
    await grant(b, fx, customerId, 'cloud_sync');
    await drain();
    const first = receiver.of(hook);
    expect(first).toHaveLength(1);
    expect(first[0].json.data).toEqual(expect.objectContaining({ serviceCustomerId: customerId, sequence: 1 }));
    expect(first[0].json.data.changes.map((c: { key: string }) => c.key)).toEqual(['cloud_sync']);
    // Without tracing no trace context is stored or sent.
    expect(first[0].headers.traceparent).toBeUndefined();

    // Disabled: nothing recorded for it; enabled again on a: b's next change is delivered.
    expect((await a.http.patch(`/admin/v1/webhook-endpoints/${created.body.id}`).set(operatorAuth()).send({ status: 'disabled' })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 150));
    await grant(b, fx, customerId, 'team');
    expect((await a.http.patch(`/admin/v1/webhook-endpoints/${created.body.id}`).set(operatorAuth()).send({ status: 'enabled' })).status).toBe(200);
    await grant(b, fx, customerId, 'extra');
    await drain();
    const all = receiver.of(hook);
    expect(all).toHaveLength(2);
    expect(all[1].json.data.changes.map((c: { key: string }) => c.key)).toEqual(['extra']);
    // The sequence counts only the tracked updates, and still only grows.
    expect(all[1].json.data.sequence).toBe(2);
  });

  it('one change of several customers records every event in one statement, each customer with its own sequence', async () => {
    const fx = await createProjectWithApp(a);
    const hook = `/tracking/${++counter}`;
    expect(
      (
        await a.http
          .post(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`)
          .set(operatorAuth())
          .send({ url: receiver.url(hook), env: 'sandbox' })
      ).status,
    ).toBe(201);
    const customerId = await newCustomer(a, fx);
    await grant(a, fx, customerId, 'pro_access');
    await grant(b, fx, customerId, 'cloud_sync');
    await drain();
    const updates = receiver.of(hook).filter((r) => r.json.type === 'customer.entitlements.updated');
    expect(updates.map((r) => r.json.data.sequence).sort()).toEqual([1, 2]);
    const manual = receiver.of(hook).filter((r) => r.json.type === 'entitlement.granted_manually');
    expect(manual).toHaveLength(2);
    // Bodies are stored as sent: the sequence written into the body is the delivered one.
    const stored = await a.dataSource.query(`SELECT body FROM webhook_events WHERE project_id = $1 AND type = 'customer.entitlements.updated'`, [fx.projectId]);
    expect(stored.map((r: { body: string }) => JSON.parse(r.body).data.sequence).sort()).toEqual([1, 2]);
    expect(stored.every((r: { body: string }) => !r.body.includes('"sequence":0'))).toBe(true);
  });
});
