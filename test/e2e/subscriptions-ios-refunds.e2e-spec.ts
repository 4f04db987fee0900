import { ExpiryReadsJob } from '#rails';
import { keyHeaders } from '../support/fixtures.js';
import { BUNDLE, railReadHarness } from '../support/harness/rails-read.js';
import { type TransactionFields, notificationPayload, signStoreJws } from '../support/store-signing.js';
import { operatorAuth } from '../support/test-app.js';

const DAY_MS = 86_400_000;
/** 9.99 USD a month, as the App Store states it (milliunits). */
const PRICED = { price: 9990, currency: 'USD' };

/**
 * An App Store refund counts once in the revenue ledger whichever the service learns first: a
 * read (refresh) or a purchase sync that finds the transaction revoked books it under the
 * transaction's key, and the store's REFUND notification that follows finds it booked (and the
 * other way round). `/v1/revenue` nets it to the cent.
 */
describe('subscriptions: an App Store refund found by a read or a purchase sync before its notification', () => {
  const h = railReadHarness({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123456789' }, { ownDatabase: true });
  // Outbound events are recorded only where an endpoint is enabled: one (never reached) listens to the sandbox.
  beforeAll(async () => {
    const res = await h.t.http
      .post(`/admin/v1/projects/${h.fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: 'http://127.0.0.1:9/hooks/ios-refunds', env: 'sandbox' });
    expect(res.status).toBe(201);
  });

  const sk = () => keyHeaders(h.fx, h.fx.keys.skTest);
  const revenue = async () => {
    const res = await h.t.http.get('/v1/revenue').set(sk());
    expect(res.status).toBe(200);
    return res.body.data;
  };
  /** Today's point of the revenue read's daily series. */
  const todayOfSeries = async () => {
    const res = await h.t.http.get('/v1/revenue').query({ granularity: 'day', days: '1' }).set(sk());
    expect(res.status).toBe(200);
    return res.body.data.series.at(-1) as { refundsCents: number };
  };
  const revenueChart = async () => {
    const res = await h.t.http.get('/v1/charts/revenue').set(sk());
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const refundRows = (originalTransactionId: string) =>
    h.t.dataSource.query(
      `SELECT kind, fact_id AS "factId", amount_minor::int AS amount, currency FROM revenue_refunds WHERE project_id = $1 AND subscription_id = $2`,
      [h.fx.projectId, originalTransactionId],
    );
  const refundEvents = async (customerId: string) =>
    (await h.t.dataSource.query(`SELECT type FROM webhook_events WHERE customer_id = $1 AND type = 'subscription.refunded'`, [customerId])).length as number;
  /** The store's REFUND notification of the revoked transaction. */
  async function refundNotification(revoked: TransactionFields) {
    const payload = notificationPayload({
      notificationType: 'REFUND',
      signedDate: h.t.clock.nowMs(),
      bundleId: BUNDLE,
      environment: 'Sandbox',
      signedTransactionInfo: signStoreJws(h.chain, { ...revoked, environment: 'Sandbox' }),
    });
    const res = await h.t.http.post(`/v1/webhooks/ios_store/${h.fx.projectId}`).send({ signedPayload: signStoreJws(h.chain, payload) });
    expect(res.status).toBe(200);
    return res.body as { decision: string };
  }

  it('a refresh finds the refund first: booked under the transaction; the REFUND notification after it books nothing more', async () => {
    const before = await revenue();
    const beforeSeries = await todayOfSeries();
    const beforeChart = (await revenueChart()).series.at(-1).values;
    const { customerId, tx } = await h.iosCustomer({ expiresMs: h.t.clock.nowMs() + 30 * DAY_MS, fields: PRICED });
    const paid = await revenue();
    expect(paid.recognisedCashThisMonthCents).toBe(before.recognisedCashThisMonthCents + 999);

    const revoked = { ...tx, revocationDate: h.t.clock.nowMs() - 1000, revocationReason: 0 };
    h.appleReports(tx, 5, revoked);
    const read = await h.refresh(customerId);
    expect(read.body.refreshed).toEqual([expect.objectContaining({ rail: 'ios_store', decision: 'applied' })]);
    expect(await refundRows(tx.originalTransactionId)).toEqual([{ kind: 'refund', factId: `refund:${tx.transactionId}`, amount: 999, currency: 'USD' }]);
    const afterRead = await revenue();
    expect(afterRead.refundsCents).toBe(before.refundsCents + 999);
    expect(afterRead.current.refundsCents).toBe(afterRead.refundsCents);
    expect(afterRead.netCashCents).toBe(afterRead.recognisedCashThisMonthCents - afterRead.refundsCents);
    expect(afterRead.netCashCents).toBe(before.netCashCents);

    expect(await refundEvents(customerId)).toBe(1);
    await refundNotification(revoked);
    expect(await refundRows(tx.originalTransactionId)).toHaveLength(1);
    // Announced once, by the read that found it.
    expect(await refundEvents(customerId)).toBe(1);
    const afterNotification = await revenue();
    expect(afterNotification.refundsCents).toBe(afterRead.refundsCents);
    expect(afterNotification.netCashCents).toBe(afterRead.netCashCents);

    // The daily series and the revenue chart carry it once too.
    expect((await todayOfSeries()).refundsCents - beforeSeries.refundsCents).toBe(999);
    const chart = (await revenueChart()).series.at(-1).values;
    expect(chart.refundsCents - beforeChart.refundsCents).toBe(999);
    expect(chart.netCents).toBe(chart.grossCents - chart.refundsCents);
  });

  it('the REFUND notification first: booked once; a refresh after it finds the subscription refunded and books nothing', async () => {
    const before = await revenue();
    const { customerId, tx } = await h.iosCustomer({ expiresMs: h.t.clock.nowMs() + 30 * DAY_MS, fields: PRICED });
    const revoked = { ...tx, revocationDate: h.t.clock.nowMs() - 1000, revocationReason: 0 };
    expect((await refundNotification(revoked)).decision).toBe('applied');
    expect(await refundRows(tx.originalTransactionId)).toEqual([{ kind: 'refund', factId: `refund:${tx.transactionId}`, amount: 999, currency: 'USD' }]);
    h.appleReports(tx, 5, revoked);
    const read = await h.refresh(customerId);
    expect(read.body.refreshed).toEqual([expect.objectContaining({ rail: 'ios_store', decision: 'no_change' })]);
    expect(await refundRows(tx.originalTransactionId)).toHaveLength(1);
    expect(await refundEvents(customerId)).toBe(1);
    expect((await revenue()).refundsCents).toBe(before.refundsCents + 999);
  });

  it('a purchase sync of the revoked transaction first: booked once with the notification that follows', async () => {
    const before = await revenue();
    const { customerId, tx } = await h.iosCustomer({ expiresMs: h.t.clock.nowMs() + 30 * DAY_MS, fields: PRICED });
    const revoked = { ...tx, revocationDate: h.t.clock.nowMs() - 1000, revocationReason: 0, signedDate: h.t.clock.nowMs() };
    const synced = await h.t.http
      .post('/v1/purchases/sync')
      .set(keyHeaders(h.fx, h.fx.keys.pubTest))
      .send({ rail: 'ios_store', signedTransactionInfo: signStoreJws(h.chain, { ...revoked, environment: 'Sandbox' }) });
    expect(synced.status).toBe(200);
    expect(synced.body.serviceCustomerId).toBe(customerId);
    expect(await refundRows(tx.originalTransactionId)).toEqual([{ kind: 'refund', factId: `refund:${tx.transactionId}`, amount: 999, currency: 'USD' }]);
    await refundNotification(revoked);
    expect(await refundRows(tx.originalTransactionId)).toHaveLength(1);
    expect(await refundEvents(customerId)).toBe(1);
    const after = await revenue();
    expect(after.refundsCents).toBe(before.refundsCents + 999);
    expect(after.netCashCents).toBe(after.recognisedCashThisMonthCents - after.refundsCents);
  });
  it('a read at expiry finds the refund first: booked once, the notification after it adds nothing', async () => {
    const before = await revenue();
    const { customerId, tx } = await h.iosCustomer({ expiresMs: h.t.clock.nowMs() + 60_000, fields: PRICED });
    const revoked = { ...tx, revocationDate: h.t.clock.nowMs() + 30_000, revocationReason: 0 };
    h.appleReports(tx, 5, revoked);
    expect((await h.t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 120 })).status).toBe(200);
    await h.t.app.get(ExpiryReadsJob).sweepOnce();
    expect(await refundRows(tx.originalTransactionId)).toEqual([{ kind: 'refund', factId: `refund:${tx.transactionId}`, amount: 999, currency: 'USD' }]);
    expect(await refundEvents(customerId)).toBe(1);
    await refundNotification(revoked);
    expect(await refundRows(tx.originalTransactionId)).toHaveLength(1);
    expect(await refundEvents(customerId)).toBe(1);
    const after = await revenue();
    expect(after.refundsCents).toBe(before.refundsCents + 999);
    expect(after.netCashCents).toBe(after.recognisedCashThisMonthCents - after.refundsCents);
  });
});
