// Two changes of one customer at once: each read the customer's state before the other
// committed, and the sequence counter puts them in an order. The event with the higher
// `sequence` is the one a receiver keeps, so it must carry the whole active set after both,
// while each event's `changes` say what changed since the event numbered before it.
import pg from 'pg';
import { JobQueue, JobWorker } from '#platform';
import { WebhookDispatcher } from '#webhooks';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { cardWebhookHarness } from '../support/harness/webhooks-card.js';
import { queuedBehind, untilWaiting } from '../support/lock-queue.js';
import { operatorAuth } from '../support/test-app.js';
import { testScope } from '../support/scopes.js';
import { subscriptionHeldBy } from '../support/factories/identity.js';
import { type ReceivedWebhook, type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';

const REASON = 'Support credit after an outage';

describe('outbound webhooks: the highest sequence carries the whole state', () => {
  const h = cardWebhookHarness({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123456789' }, { ownDatabase: true });
  let receiver: WebhookReceiver;
  let holder: pg.Client;
  let counter = 0;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    holder = new pg.Client({ connectionString: h.t.config.databaseUrl });
    // The harness's afterAll, which runs before this file's, drops the database under this connection.
    holder.on('error', () => undefined);
    await holder.connect();
  });
  afterAll(async () => {
    await holder?.end();
    await receiver?.close();
  });

  async function endpointFor(fx: ProjectFixture): Promise<string> {
    const hook = `/sequence/${++counter}`;
    const endpoint = await h.t.http
      .post(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(hook), env: 'sandbox' });
    expect(endpoint.status).toBe(201);
    return hook;
  }

  async function customerWithEndpoint(): Promise<{ fx: ProjectFixture; customerId: string; hook: string }> {
    const fx = await createProjectWithApp(h.t);
    const hook = await endpointFor(fx);
    const identified = await h.t.http
      .post('/v1/identify')
      .set(keyHeaders(fx, fx.keys.skTest))
      .send({ userId: `user_${counter}`, anonymousId: `anon_${counter}` });
    expect(identified.status).toBe(200);
    return { fx, customerId: identified.body.serviceCustomerId, hook };
  }

  const write = (fx: ProjectFixture, customerId: string, action: 'grant' | 'revoke', entitlementKey: string) =>
    h.t.http
      .post(`/v1/server/customers/${customerId}/${action}`)
      .set(keyHeaders(fx, fx.keys.skTest))
      .send(action === 'grant' ? { entitlementKey, duration: 'P30D', reason: REASON } : { entitlementKey, reason: REASON });

  /**
   * Runs the writes while the holder keeps the rows `lock` selects locked, so each gets as far
   * as those rows before any commits; each starts once the one before waits (so they take the
   * rows in this order), and the rows are let go once all wait.
   */
  async function whileHeld(lock: { text: string; values: unknown[] }, writes: (() => PromiseLike<{ status: number }>)[]): Promise<void> {
    for (const res of await queuedBehind(holder, h.t.dataSource, lock, writes)) expect(res.status).toBe(200);
  }

  /** The writes while the customer's sequence counter is held: each reads its state before any commits. */
  const atOnce = (customerId: string, writes: (() => PromiseLike<{ status: number }>)[]) =>
    whileHeld({ text: 'SELECT last_sequence FROM webhook_customer_sequences WHERE customer_id = $1 FOR UPDATE', values: [customerId] }, writes);

  async function updates(hook: string, count: number): Promise<Record<string, any>[]> {
    await h.t.app.get(WebhookDispatcher).drain();
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
    const read = await h.t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(keyHeaders(fx, fx.keys.skTest));
    expect(read.status).toBe(200);
    expect(read.body.data.filter((e: { isActive: boolean }) => e.isActive).map((e: { key: string }) => e.key)).toEqual(['pro_access']);
  });

  it('a revoke and a grant of the same key at once: the grant, after the revoke, announces the key again', async () => {
    const { fx, customerId, hook } = await customerWithEndpoint();
    const lifetime = await h.t.http
      .post(`/v1/server/customers/${customerId}/grant`)
      .set(keyHeaders(fx, fx.keys.skTest))
      .send({ entitlementKey: 'pro_access', duration: 'lifetime', reason: REASON });
    expect(lifetime.status).toBe(200);
    await updates(hook, 1);
    const grantAgain = () =>
      h.t.http
        .post(`/v1/server/customers/${customerId}/grant`)
        .set(keyHeaders(fx, fx.keys.skTest))
        .send({ entitlementKey: 'pro_access', duration: 'lifetime', reason: REASON });
    // Both wait for the manual row; the revoke takes it first.
    await whileHeld(
      { text: `SELECT 1 FROM entitlements WHERE customer_id = $1 AND entitlement_key = 'pro_access' AND rail = 'manual' FOR UPDATE`, values: [customerId] },
      [() => write(fx, customerId, 'revoke', 'pro_access'), grantAgain],
    );

    const [, revoked, granted] = await updates(hook, 3);
    expect([revoked.changes, granted.changes]).toEqual([
      [expect.objectContaining({ key: 'pro_access', change: 'deactivated', cause: 'revoke' })],
      [expect.objectContaining({ key: 'pro_access', change: 'activated', cause: 'grant', validUntil: null })],
    ]);
    expect(keys(granted)).toEqual(['pro_access']);
  });

  describe('a change that leaves the set as it was, at once with one that changes it', () => {
    // The card row of `pro` runs 90 days; a 30-day manual grant of `pro` under it changes no
    // announced entitlement by itself. The card subscription ends at the same moment: after
    // both, `pro` is active until the grant's end.
    const endCard = (sub: Record<string, unknown>) => () =>
      h.send(h.event('customer.subscription.deleted', { ...sub, status: 'canceled' }, { created: h.now() + 1 }));
    const grantPro = (customerId: string) => () => write(h.fx, customerId, 'grant', 'pro');

    async function lastUpdate(customerId: string, hook: string, count: number): Promise<Record<string, any>> {
      const all = await updates(hook, count);
      expect(all.every((data) => data.serviceCustomerId === customerId)).toBe(true);
      return all.at(-1)!;
    }

    it.each([['the grant first'], ['the card first']])('%s: the last number lists `pro` until the grant ends', async (order) => {
      const sub = h.subscription({ periodEnd: h.now() + 90 * 86400 });
      const hook = await endpointFor(h.fx);
      const created = await h.send(h.event('customer.subscription.created', sub));
      expect(created.status).toBe(200);
      const customerId = created.body.serviceCustomerId;
      await updates(hook, 1);

      const writes = order === 'the grant first' ? [grantPro(customerId), endCard(sub)] : [endCard(sub), grantPro(customerId)];
      await atOnce(customerId, writes);

      const read = await h.t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(keyHeaders(h.fx, h.fx.keys.skTest));
      const pro = read.body.data.find((e: { key: string; isActive: boolean }) => e.key === 'pro' && e.isActive);
      expect(pro).toEqual(expect.objectContaining({ source: expect.objectContaining({ rail: 'manual' }) }));

      // The grant first: the card's event is announced against the set with the grant (`pro` moves to
      // the grant's end). The card first: its event says `pro` ended, and the grant announces `pro` again.
      const last = await lastUpdate(customerId, hook, order === 'the grant first' ? 2 : 3);
      expect(last.entitlements.map((e: { key: string; validUntil: number }) => [e.key, e.validUntil])).toEqual([['pro', pro.validUntil]]);
      const change = last.changes.find((c: { key: string }) => c.key === 'pro');
      expect(change).toEqual(
        expect.objectContaining({ change: order === 'the grant first' ? 'extended' : 'activated', rail: 'manual', validUntil: pro.validUntil }),
      );
    });
  });

  describe('an update announced since the state was read', () => {
    /** Past the margin after an endpoint's enabling: from here on every change of the scope is announced, so the kept set is vouched for. */
    const listening = () => new Promise((resolve) => setTimeout(resolve, 1_100));

    it('an approved merge racing a grant of the receiving customer announces only the rows it moved', async () => {
      const fx = await createProjectWithApp(h.t);
      const hook = await endpointFor(fx);
      await listening();
      const identify = (body: object) => h.t.http.post('/v1/identify').set(keyHeaders(fx, fx.keys.pubTest)).send(body);
      const [a, b] = [1, 2].map((n) => ({ userId: `merge_user_${counter}_${n}`, anonymousId: `merge_anon_${counter}_${n}` }));
      const canonical: string = (await identify(a)).body.serviceCustomerId;
      const other: string = (await identify(b)).body.serviceCustomerId;
      // The other customer's card subscription and the `pro` row it grants.
      const subscriptionId = `sub_merge_${counter}`;
      await subscriptionHeldBy(h.t.dataSource, testScope(fx.projectId), other, { subscriptionId, grants: 'pro' });
      expect((await write(fx, canonical, 'grant', 'base')).status).toBe(200);
      expect((await identify({ userId: a.userId, anonymousId: b.anonymousId })).body.mergePending).toBe(true);
      const reviews = await h.t.http.get(`/admin/v1/projects/${fx.projectId}/merge-reviews?env=sandbox`).set(operatorAuth());
      const reviewId: string = reviews.body.data.find((r: { otherCustomerId: string }) => r.otherCustomerId === other).id;

      // The merge reads both customers' states, then waits to move the held subscription; the
      // grant commits meanwhile, announcing its key; then the merge moves the rows and reads again.
      await holder.query('BEGIN');
      try {
        await holder.query(`SELECT 1 FROM rail_subscriptions WHERE project_id = $1 AND subscription_id = $2 FOR UPDATE`, [fx.projectId, subscriptionId]);
        const merging = Promise.resolve(h.t.http.post(`/admin/v1/projects/${fx.projectId}/merge-reviews/${reviewId}/approve`).set(operatorAuth()));
        await untilWaiting(h.t.dataSource, 1);
        expect((await write(fx, canonical, 'grant', 'cloud_sync')).status).toBe(200);
        await holder.query('COMMIT');
        expect((await merging).status).toBe(200);
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
      }

      const mine = (await updates(hook, 4)).filter((data) => data.serviceCustomerId === canonical);
      expect(mine.map((data) => data.sequence)).toEqual([1, 2, 3]);
      const [, granted, merged] = mine;
      expect(granted.changes).toEqual([expect.objectContaining({ key: 'cloud_sync', change: 'activated', cause: 'grant' })]);
      expect(keys(merged)).toEqual(['base', 'cloud_sync', 'pro']);
      expect(merged.changes).toEqual([expect.objectContaining({ key: 'pro', change: 'activated', cause: 'purchase', rail: 'card_payments' })]);
    });

    it('a change after an end that passed unannounced announces the end (cause expiration); the scan then has nothing to add', async () => {
      const { fx, customerId, hook } = await customerWithEndpoint();
      await listening();
      const advance = (seconds: number) => h.t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds });
      const worker = h.t.app.get(JobWorker);
      const scan = async () => {
        await h.t.app.get(JobQueue).enqueue('webhooks.report_expirations', {}, { dedupeKey: 'recurring' });
        await worker.runDue({ types: ['webhooks.report_expirations'] });
      };
      await scan();
      expect((await write(fx, customerId, 'grant', 'trial')).status).toBe(200);
      await updates(hook, 1);
      expect((await advance(31 * 86_400)).status).toBe(200);
      // Before the scan reports the end: the next change's update lists the set without `trial`.
      expect((await write(fx, customerId, 'grant', 'pro_access')).status).toBe(200);
      await scan();
      await scan();

      const all = await updates(hook, 2);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(all).toHaveLength(2);
      const [, next] = all;
      expect(next.sequence).toBe(2);
      expect(keys(next)).toEqual(['pro_access']);
      expect(next.changes).toEqual([
        expect.objectContaining({ key: 'pro_access', change: 'activated', cause: 'grant' }),
        expect.objectContaining({ key: 'trial', change: 'deactivated', cause: 'expiration' }),
      ]);
    });
  });
});
