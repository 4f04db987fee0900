// Two changes of one customer at once: each read the customer's state before the other
// committed, and the sequence counter puts them in an order. The event with the higher
// `sequence` is the one a receiver keeps, so it must carry the whole active set after both,
// while each event's `changes` stay its own.
import pg from 'pg';
import { WebhookDispatcher } from '#webhooks';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { type ReceivedWebhook, type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';

const ENV = { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123456789' };
const REASON = 'Support credit after an outage';

describe('outbound webhooks: the highest sequence carries the whole state', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let holder: pg.Client;
  let counter = 0;

  beforeAll(async () => {
    t = await createTestApp(ENV, { ownDatabase: true });
    receiver = await startWebhookReceiver();
    holder = new pg.Client({ connectionString: t.config.databaseUrl });
    await holder.connect();
  });
  afterAll(async () => {
    await holder?.end();
    await receiver?.close();
    await t?.close();
  });

  async function customerWithEndpoint(): Promise<{ fx: ProjectFixture; customerId: string; hook: string }> {
    const fx = await createProjectWithApp(t);
    const hook = `/sequence/${++counter}`;
    const endpoint = await t.http
      .post(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(hook), env: 'sandbox' });
    expect(endpoint.status).toBe(201);
    const identified = await t.http
      .post('/v1/identify')
      .set(keyHeaders(fx, fx.keys.skTest))
      .send({ userId: `user_${counter}`, anonymousId: `anon_${counter}` });
    expect(identified.status).toBe(200);
    return { fx, customerId: identified.body.serviceCustomerId, hook };
  }

  const write = (fx: ProjectFixture, customerId: string, action: 'grant' | 'revoke', entitlementKey: string) =>
    t.http
      .post(`/v1/server/customers/${customerId}/${action}`)
      .set(keyHeaders(fx, fx.keys.skTest))
      .send(action === 'grant' ? { entitlementKey, duration: 'P30D', reason: REASON } : { entitlementKey, reason: REASON });

  /**
   * Runs both writes while the customer's sequence counter is held, so each reads the state
   * before either commits; lets go once both wait for the counter.
   */
  async function atOnce(customerId: string, writes: (() => Promise<{ status: number }>)[]): Promise<void> {
    await holder.query('BEGIN');
    try {
      await holder.query('SELECT last_sequence FROM webhook_customer_sequences WHERE customer_id = $1 FOR UPDATE', [customerId]);
      // A supertest request starts when it is awaited: start each now.
      const pending = writes.map((w) => Promise.resolve(w()));
      const until = Date.now() + 10_000;
      for (;;) {
        // Asked outside the holder's transaction, which sees pg_stat_activity as of its first look.
        const rows: { waiting: number }[] = await t.dataSource.query(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%webhook_customer_sequences%'`,
        );
        if (rows[0].waiting === writes.length) break;
        if (Date.now() > until) throw new Error(`${rows[0].waiting} of ${writes.length} writes wait for the sequence counter`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await holder.query('COMMIT');
      for (const res of await Promise.all(pending)) expect(res.status).toBe(200);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
    }
  }

  async function updates(hook: string, count: number): Promise<Record<string, any>[]> {
    await t.app.get(WebhookDispatcher).drain();
    const of = (hooks: ReceivedWebhook[]) => hooks.filter((h) => h.path === hook && h.json.type === 'customer.entitlements.updated');
    await receiver.waitFor((hooks) => of(hooks).length >= count);
    return of(receiver.received)
      .map((h) => h.json.data)
      .sort((a, b) => a.sequence - b.sequence);
  }

  const keys = (data: Record<string, any>) => data.entitlements.map((e: { key: string }) => e.key).sort();

  it('two grants at once: the later number lists both keys, each event its own change', async () => {
    const { fx, customerId, hook } = await customerWithEndpoint();
    expect((await write(fx, customerId, 'grant', 'base')).status).toBe(200);
    await atOnce(customerId, [() => write(fx, customerId, 'grant', 'pro_access'), () => write(fx, customerId, 'grant', 'cloud_sync')]);

    const [first, second, third] = await updates(hook, 3);
    expect([first.sequence, second.sequence, third.sequence]).toEqual([1, 2, 3]);
    expect(keys(third)).toEqual(['base', 'cloud_sync', 'pro_access']);
    expect(
      [second.changes, third.changes]
        .map((c) => c.map((x: { key: string }) => x.key))
        .flat()
        .sort(),
    ).toEqual(['cloud_sync', 'pro_access']);
    for (const data of [second, third]) expect(data.changes).toEqual([expect.objectContaining({ change: 'activated', cause: 'grant' })]);
    // The state of the earlier number is its own change on what was committed before it.
    expect(keys(second)).toEqual(['base', second.changes[0].key].sort());
  });

  it('a grant and a revoke at once: the later number lists exactly what is left', async () => {
    const { fx, customerId, hook } = await customerWithEndpoint();
    expect((await write(fx, customerId, 'grant', 'base')).status).toBe(200);
    await atOnce(customerId, [() => write(fx, customerId, 'grant', 'pro_access'), () => write(fx, customerId, 'revoke', 'base')]);

    const last = (await updates(hook, 3))[2];
    expect(last.sequence).toBe(3);
    expect(keys(last)).toEqual(['pro_access']);

    // What the receiver got is what the service reads now.
    const read = await t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(keyHeaders(fx, fx.keys.skTest));
    expect(read.status).toBe(200);
    expect(read.body.data.filter((e: { isActive: boolean }) => e.isActive).map((e: { key: string }) => e.key)).toEqual(['pro_access']);
  });
});
