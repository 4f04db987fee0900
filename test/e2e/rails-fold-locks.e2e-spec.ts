// A rail-only customer folded into a named one while other notifications of the same customers
// run: the fold and the rail applier take their locks in one order, so neither waits for the
// other in a cycle (PostgreSQL would abort one for a deadlock and the notification processor
// would retry it after the deadlock timeout), and no record stays with the folded customer.
import pg from 'pg';
import { keyHeaders } from '../support/fixtures.js';
import { queuedBehind } from '../support/lock-queue.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';

describe('card rail: a fold and other changes of the same customers at once', () => {
  const h = cardWebhookHarness({}, { ownDatabase: true });
  let holder: pg.Client;

  beforeAll(async () => {
    holder = new pg.Client({ connectionString: h.t.config.databaseUrl });
    // The harness's afterAll, which runs before this file's, drops the database under this connection.
    holder.on('error', () => undefined);
    await holder.connect();
  });
  afterAll(async () => {
    await holder?.end();
  });

  /**
   * Deadlocks PostgreSQL detected in this file's database. A transaction aborted for one has
   * waited the deadlock timeout (1 s), so its backend's last statistics report is older than
   * that and it reports at the rollback, before the processor retries.
   */
  async function deadlocks(): Promise<number> {
    const rows: { n: number }[] = await h.t.dataSource.query(`SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()`);
    return rows[0].n;
  }

  /**
   * Sends the notifications while the holder keeps the customer's revenue lock, each once the
   * ones before it wait for a lock (so they queue in this order), then lets go; answers the
   * responses, and checks that no transaction was aborted for a deadlock.
   */
  async function whileRevenueHeld(customerId: string, sends: (() => PromiseLike<{ status: number; body: any }>)[]) {
    const before = await deadlocks();
    const lock = { text: `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, values: [`revenue|${h.fx.projectId}|sandbox|${customerId}`] };
    const responses = await queuedBehind(holder, h.t.dataSource, lock, sends);
    expect(responses.map((r) => r.status)).toEqual(sends.map(() => 200));
    expect(await deadlocks()).toBe(before);
    return responses;
  }

  /** A named customer (identified) and a rail-only one (a card subscription without hints) on its own card customer. */
  async function customers() {
    const userId = uid('user');
    const identified = await h.t.http
      .post('/v1/identify')
      .set(keyHeaders(h.fx, h.fx.keys.pubTest))
      .send({ userId, anonymousId: uid('anon') });
    const cardCustomer = uid('cus');
    const first = h.subscription({ customer: cardCustomer, product: 'prod_pro' });
    const railOnly: string = (await h.send(h.event('customer.subscription.created', first))).body.serviceCustomerId;
    expect(railOnly).not.toBe(identified.body.serviceCustomerId);
    return { userId, named: identified.body.serviceCustomerId as string, railOnly, cardCustomer, first };
  }

  const naming = (userId: string) => ({ metadata: { developerUserId: userId } });
  const subscriptionRows = async (customerId: string): Promise<string[]> =>
    (
      await h.t.dataSource.query(`SELECT subscription_id AS id FROM rail_subscriptions WHERE project_id = $1 AND customer_id = $2 ORDER BY 1`, [
        h.fx.projectId,
        customerId,
      ])
    ).map((r: { id: string }) => r.id);

  it('the fold, and the end of another subscription of the receiving customer', async () => {
    const c = await customers();
    const own = h.subscription({ product: 'prod_basic', ...naming(c.userId) });
    expect((await h.send(h.event('customer.subscription.created', own))).body.serviceCustomerId).toBe(c.named);

    // The fold waits for the receiving customer's revenue lock; the end of its own subscription then waits behind it.
    const responses = await whileRevenueHeld(c.named, [
      () => h.send(h.event('customer.subscription.updated', { ...c.first, ...naming(c.userId) }, { created: h.now() + 1 })),
      () => h.send(h.event('customer.subscription.deleted', { ...own, status: 'canceled' }, { created: h.now() + 1 })),
    ]);
    expect(responses.map((r) => r.body.serviceCustomerId)).toEqual([c.named, c.named]);
    expect(await h.activeKeys(c.named)).toEqual(['cloud_sync', 'pro']);
    expect(await h.activeKeys(c.railOnly)).toEqual([]);
  });

  it('the fold, and a second notification of the same new subscription without the hint', async () => {
    const c = await customers();
    const fresh = h.subscription({ customer: c.cardCustomer, product: 'prod_team' });
    // The fold (the new subscription naming the user) waits for the rail-only customer's revenue
    // lock; the plain notification of the same subscription then waits too.
    await whileRevenueHeld(c.railOnly, [
      () => h.send(h.event('customer.subscription.created', { ...fresh, ...naming(c.userId) })),
      () => h.send(h.event('customer.subscription.updated', fresh, { created: h.now() + 1 })),
    ]);
    expect(await subscriptionRows(c.railOnly)).toEqual([]);
    expect(await subscriptionRows(c.named)).toEqual([c.first.id, fresh.id].sort());
    expect(await h.activeKeys(c.named)).toEqual(['cloud_sync', 'pro', 'team']);
  });

  it('the fold, and a new subscription of the folded customer recorded while the fold waits', async () => {
    const c = await customers();
    const fresh = h.subscription({ customer: c.cardCustomer, product: 'prod_basic' });
    // The new subscription (no hint: the rail-only customer's) waits for that customer's revenue
    // lock, holding its rail lock and its new record; the fold then moves the customer's records.
    await whileRevenueHeld(c.railOnly, [
      () => h.send(h.event('customer.subscription.created', fresh)),
      () => h.send(h.event('customer.subscription.updated', { ...c.first, ...naming(c.userId) }, { created: h.now() + 1 })),
    ]);
    expect(await subscriptionRows(c.railOnly)).toEqual([]);
    expect(await subscriptionRows(c.named)).toEqual([c.first.id, fresh.id].sort());
    expect(await h.activeKeys(c.named)).toEqual(['basic', 'cloud_sync', 'pro']);
    expect(await h.activeKeys(c.railOnly)).toEqual([]);
  });
});
