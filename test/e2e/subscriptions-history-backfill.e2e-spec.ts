import { SubscriptionHistoryBackfill1790000003900 } from '../../libs/rails/src/migrations/1790000003900-subscription-history-backfill.migration.js';
import { createProjectWithApp, keyHeaders } from '../support/fixtures.js';
import { operatorAuth } from '../support/test-app.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';

const DAY = 86_400;

/**
 * The customer history of the time before it was kept is filled from the outbound events then
 * recorded: card subscriptions go through their lifecycle in a project with a webhook endpoint,
 * their history entries are removed (as before the history existed) and the migration brings
 * them back as they were read, plus an event of the time before the lifecycle (its audit entry
 * named as `railEventId`). Running it again adds nothing; an event of another project that
 * names the same subscription and customer ids lands nowhere.
 */
describe('subscriptions: the customer history is filled from the events recorded before it', () => {
  const h = cardWebhookHarness({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123456789' }, { ownDatabase: true });
  const { now } = h;
  beforeAll(async () => {
    const res = await h.t.http
      .post(`/admin/v1/projects/${h.fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: 'http://127.0.0.1:9/hooks/history', env: 'sandbox' });
    expect(res.status).toBe(201);
  });

  const history = async (customerId: string) => {
    const res = await h.t.http.get(`/v1/server/customers/${customerId}/history`).query({ limit: '100' }).set(keyHeaders(h.fx, h.fx.keys.skTest));
    expect(res.status).toBe(200);
    return (res.body.data as any[]).map(({ id: _id, ...entry }) => entry);
  };
  const historyRows = async (projectId: string) =>
    (await h.t.dataSource.query(`SELECT count(*)::int AS n FROM subscription_history WHERE project_id = $1`, [projectId]))[0].n as number;
  const runMigration = async () => {
    const runner = h.t.dataSource.createQueryRunner();
    try {
      await new SubscriptionHistoryBackfill1790000003900().up(runner);
    } finally {
      await runner.release();
    }
  };

  const lifecycle = h.productChangeLifecycle;

  it('brings back every entry as it was, fills an event of the time before the lifecycle, and adds nothing when run again', async () => {
    const first = await lifecycle();
    const second = await lifecycle();
    const kept = { first: await history(first.customerId), second: await history(second.customerId) };
    expect(kept.first.map((e: any) => e.type)).toEqual([
      'subscription.expired',
      'subscription.product_changed',
      'subscription.uncanceled',
      'subscription.canceled',
      'subscription.started',
    ]);
    const [{ n: recorded }] = await h.t.dataSource.query(
      `SELECT count(*)::int AS n FROM webhook_events WHERE project_id = $1 AND customer_id = ANY($2::text[]) AND type LIKE 'subscription.%'`,
      [h.fx.projectId, [first.customerId, second.customerId]],
    );
    expect(recorded).toBe(10);

    // Before the history was kept: none of it in the table.
    await h.t.dataSource.query(`DELETE FROM subscription_history WHERE project_id = $1`, [h.fx.projectId]);
    expect(await history(first.customerId)).toEqual([]);
    // An event of the time before the lifecycle: the flat fields only, its audit entry as `railEventId`.
    const renewedAudit = first.answers[1].auditEventId;
    const oldData = {
      serviceCustomerId: first.customerId,
      rail: 'card_payments',
      subscriptionId: first.sub.id,
      productId: 'prod_pro',
      state: 'active',
      validUntil: now() + 30 * DAY,
      willRenew: true,
      priceMicros: null,
      currency: null,
      railEventId: renewedAudit,
    };
    const insertEvent = (projectId: string, customerId: string, data: object) =>
      h.t.dataSource.query(
        `INSERT INTO webhook_events (id, project_id, env, customer_id, type, body, created_at_ms) VALUES ($1, $2, 'sandbox', $3, 'subscription.renewed', $4, $5)`,
        [
          `evt_${uid('old')}`,
          projectId,
          customerId,
          JSON.stringify({ id: 'evt_x', object: 'event', type: 'subscription.renewed', createdAt: now(), data }),
          h.t.clock.nowMs(),
        ],
      );
    await insertEvent(h.fx.projectId, first.customerId, oldData);
    // Another project's event naming the same ids: its customer is not one of that project's.
    const other = await createProjectWithApp(h.t);
    await insertEvent(other.projectId, first.customerId, oldData);

    await runMigration();
    const renewed = {
      type: 'subscription.renewed',
      occurredAt: expect.any(Number),
      rail: 'card_payments',
      subscriptionId: first.sub.id,
      productId: 'prod_pro',
      auditEventId: renewedAudit,
      railEventId: first.steps[1].id,
      details: {},
    };
    const filled = await history(first.customerId);
    expect(filled.filter((e: any) => e.type !== 'subscription.renewed')).toEqual(kept.first);
    expect(filled.filter((e: any) => e.type === 'subscription.renewed')).toEqual([renewed]);
    // At its audit entry's rail time (the second step's event time).
    expect(filled.find((e: any) => e.type === 'subscription.renewed').occurredAt).toBe(kept.first[3].occurredAt);
    expect(await history(second.customerId)).toEqual(kept.second);
    expect(await historyRows(other.projectId)).toBe(0);

    const rows = await historyRows(h.fx.projectId);
    expect(rows).toBe(11);
    await runMigration();
    expect(await historyRows(h.fx.projectId)).toBe(rows);
    // Entries written since are not written again either.
    const third = await lifecycle();
    await runMigration();
    expect(await history(third.customerId)).toHaveLength(5);
  });
});
