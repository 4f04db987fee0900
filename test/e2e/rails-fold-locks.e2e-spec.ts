// A rail-only customer folded into a named one while another card subscription of the named
// customer changes: both take the named customer's locks in one order, so neither waits for the
// other in a cycle (PostgreSQL would abort one with a deadlock).
import pg from 'pg';
import { keyHeaders } from '../support/fixtures.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';

describe('card rail: a fold and a change of the receiving customer at once', () => {
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

  async function waitingForLocks(): Promise<number> {
    const rows: { waiting: number }[] = await h.t.dataSource.query(
      `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
    );
    return rows[0].waiting;
  }

  async function untilWaiting(count: number): Promise<void> {
    const until = Date.now() + 10_000;
    while ((await waitingForLocks()) < count) {
      if (Date.now() > until) throw new Error(`${await waitingForLocks()} of ${count} notifications wait`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** Deadlocks PostgreSQL detected in this file's database (each backend reports its own once it goes idle, at least 1 s after its last report). */
  async function deadlocks(): Promise<number> {
    const rows: { n: number }[] = await h.t.dataSource.query(`SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()`);
    return rows[0].n;
  }

  it('the fold of a subscription naming the customer and the end of its other subscription both apply', async () => {
    const userId = uid('user');
    const identified = await h.t.http
      .post('/v1/identify')
      .set(keyHeaders(h.fx, h.fx.keys.pubTest))
      .send({ userId, anonymousId: uid('anon') });
    const named: string = identified.body.serviceCustomerId;
    // The named customer's own subscription (basic), and a rail-only customer's (pro).
    const own = h.subscription({ product: 'prod_basic', metadata: { developerUserId: userId } });
    expect((await h.send(h.event('customer.subscription.created', own))).body.serviceCustomerId).toBe(named);
    const other = h.subscription({ product: 'prod_pro' });
    const railOnly: string = (await h.send(h.event('customer.subscription.created', other))).body.serviceCustomerId;
    expect(railOnly).not.toBe(named);

    // Hold the named customer's revenue lock: the fold (the rail-only customer's subscription now
    // naming the user) waits for it first, then the end of the named customer's own subscription.
    const deadlocksBefore = await deadlocks();
    await holder.query('BEGIN');
    let responses: { status: number; body: Record<string, any> }[];
    try {
      await holder.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`revenue|${h.fx.projectId}|sandbox|${named}`]);
      const fold = Promise.resolve(
        h.send(h.event('customer.subscription.updated', { ...other, metadata: { developerUserId: userId } }, { created: h.now() + 1 })),
      );
      await untilWaiting(1);
      const end = Promise.resolve(h.send(h.event('customer.subscription.deleted', { ...own, status: 'canceled' }, { created: h.now() + 1 })));
      await untilWaiting(2);
      await holder.query('COMMIT');
      responses = await Promise.all([fold, end]);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
    }
    expect(responses.map((r) => r.status)).toEqual([200, 200]);
    // Both applied at once, neither aborted for a deadlock and retried (the notification processor retries one).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await deadlocks()).toBe(deadlocksBefore);
    expect(responses.map((r) => r.body.serviceCustomerId)).toEqual([named, named]);
    expect(await h.activeKeys(named)).toEqual(['cloud_sync', 'pro']);
    expect(await h.activeKeys(railOnly)).toEqual([]);
  });
});
