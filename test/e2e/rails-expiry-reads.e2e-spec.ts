import { ExpiryReadsJob } from '#rails';
import { type ProjectFixture } from '../support/fixtures.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';

const MIN = 60;

/**
 * Reads at expiry where the rail cannot be read (the project has no card API key): the
 * stored state governs and the read is retried with back-off on the service clock.
 */
describe('rails: reads at expiry of an unreadable rail', () => {
  const h = cardWebhookHarness({}, { ownDatabase: true });
  let t: TestApp;
  let fx: ProjectFixture;
  const { now, subscription, event, send, activeKeys } = h;
  const sweep = () => t.app.get(ExpiryReadsJob).sweepOnce();

  beforeAll(async () => {
    ({ t, fx } = h);
    // One key per product, so that a subscription's keys read as ['pro'].
    const products = await t.http
      .put(`/admin/v1/projects/${fx.projectId}/products`)
      .set(operatorAuth())
      .send({ products: [{ rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro'] }] });
    expect(products.status).toBe(200);
  });

  const advance = async (seconds: number) => expect((await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds })).status).toBe(200);

  /** A card subscription event signed like the processor does, through the real webhook. */
  async function cardSubscription(subscriptionId: string, customer: string, periodEnd: number): Promise<string> {
    const res = await send(event('customer.subscription.updated', subscription({ id: subscriptionId, customer, product: 'prod_pro', periodEnd })));
    expect(res.status).toBe(200);
    expect(res.body.decision).toBe('applied');
    return res.body.serviceCustomerId as string;
  }

  const readRow = async (subscriptionId: string) => {
    const rows = await t.dataSource.query(
      `SELECT status, attempts, next_read_at_ms::float8 AS "nextReadAtMs", last_outcome AS "lastOutcome", leased_by AS "leasedBy",
              extract(epoch FROM due_valid_until)::float8 AS "dueValidUntil"
         FROM rail_expiry_reads WHERE project_id = $1 AND env = 'sandbox' AND rail = 'card_payments' AND subscription_id = $2`,
      [fx.projectId, subscriptionId],
    );
    return rows[0] ?? null;
  };
  it('the stored state governs and the rail is read again after 5 min, 30 min, 2 h, then every 12 h; a renewal starts over', async () => {
    const subscriptionId = uid('sub');
    const customer = uid('cus');
    const end = now() + 60;
    const customerId = await cardSubscription(subscriptionId, customer, end);
    expect(await activeKeys(customerId)).toEqual(['pro']);

    // Before the end nothing is due.
    await sweep();
    expect(await readRow(subscriptionId)).toBeNull();

    await advance(120);
    await sweep();
    const first = await readRow(subscriptionId);
    expect(first).toMatchObject({ status: 'pending', attempts: 1, lastOutcome: 'unavailable', leasedBy: null, dueValidUntil: end });
    expect(first.nextReadAtMs).toBeGreaterThan(t.clock.nowMs() + 4 * MIN * 1000);
    expect(first.nextReadAtMs).toBeLessThanOrEqual(t.clock.nowMs() + 5 * MIN * 1000);
    // The stored state governs: the entitlement ended at validUntil.
    expect(await activeKeys(customerId)).toEqual([]);

    // Not read again before its back-off passes.
    await sweep();
    expect((await readRow(subscriptionId)).attempts).toBe(1);

    const backoffMinutes = [5, 30, 120, 720, 720];
    for (const [index, minutes] of backoffMinutes.entries()) {
      await advance(minutes * MIN - 30);
      await sweep();
      expect((await readRow(subscriptionId)).attempts).toBe(index + 1);
      await advance(31);
      await sweep();
      const row = await readRow(subscriptionId);
      expect(row.attempts).toBe(index + 2);
      const next = backoffMinutes[index + 1] ?? 720;
      expect(row.nextReadAtMs - t.clock.nowMs()).toBeGreaterThan((next - 1) * MIN * 1000);
    }

    // A renewal moves the end; when the new end passes, the read starts over at the first back-off.
    const renewedEnd = now() + 60;
    await cardSubscription(subscriptionId, customer, renewedEnd);
    await advance(120);
    await sweep();
    const renewed = await readRow(subscriptionId);
    expect(renewed).toMatchObject({ status: 'pending', attempts: 1, dueValidUntil: renewedEnd });
  });

  it('a notification that renews a subscription before its read supersedes the read', async () => {
    const subscriptionId = uid('sub');
    const customer = uid('cus');
    const customerId = await cardSubscription(subscriptionId, customer, now() + 60);
    await advance(120);
    await sweep();
    expect(await readRow(subscriptionId)).toMatchObject({ status: 'pending', attempts: 1 });

    await cardSubscription(subscriptionId, customer, now() + 30 * 86400);
    expect(await activeKeys(customerId)).toEqual(['pro']);
    await advance(6 * MIN);
    await sweep();
    expect(await readRow(subscriptionId)).toMatchObject({ status: 'done', attempts: 1, lastOutcome: 'superseded' });
  });

  it('two sweeps at once lease each due row to one of them', async () => {
    const ids = Array.from({ length: 12 }, () => uid('sub'));
    for (const id of ids) await cardSubscription(id, uid('cus'), now() + 60);
    await advance(120);
    const job = t.app.get(ExpiryReadsJob);
    const [a, b] = await Promise.all([job.sweepOnce(), job.sweepOnce()]);
    expect(a.read + b.read).toBeGreaterThanOrEqual(ids.length);
    for (const id of ids) expect(await readRow(id)).toMatchObject({ attempts: 1, lastOutcome: 'unavailable' });
  });
});
