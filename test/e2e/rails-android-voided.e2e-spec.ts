import { PACKAGE, PUSH_TOKEN, railReadHarness, uid } from '../support/harness/rails-read.js';

const DAY = 86_400;

/**
 * A voided Play purchase token never gives access again: after a VOIDED_PURCHASE or
 * SUBSCRIPTION_REVOKED notification, or an entry of the voided-purchases list (read hourly), a
 * notification, a refresh, a read at expiry or the migration gate's read that finds
 * SUBSCRIPTION_STATE_ACTIVE in subscriptionsv2 leaves it refunded.
 */
describe('rails: voided Android purchases', () => {
  const h = railReadHarness({}, { ownDatabase: true });
  const { now, androidCustomer, googleReports, refresh, pro } = h;
  async function push(data: Record<string, unknown>) {
    const notification = { version: '1.0', packageName: PACKAGE, eventTimeMillis: String(h.t.clock.nowMs()), ...data };
    const res = await h.t.http.post(`/v1/webhooks/android_store/${h.fx.projectId}?token=${PUSH_TOKEN}`).send({
      message: { data: Buffer.from(JSON.stringify(notification)).toString('base64'), messageId: uid('m') },
      subscription: 'projects/x/subscriptions/rtdn',
    });
    expect(res.status).toBe(200);
    return res.body;
  }
  const voidedNotification = (token: string, orderId = uid('GPA')) =>
    push({ voidedPurchaseNotification: { purchaseToken: token, orderId, productType: 1, refundType: 1 } });
  const subscriptionNotification = (token: string, notificationType: number) =>
    push({ subscriptionNotification: { version: '1.0', notificationType, purchaseToken: token, subscriptionId: 'pro_monthly' } });
  const voidedRow = async (token: string) =>
    (
      await h.t.dataSource.query(
        `SELECT env, order_id AS "orderId", voided_reason AS "voidedReason", voided_source AS "voidedSource", (extract(epoch FROM voided_at) * 1000)::float8 AS "voidedAtMs"
           FROM android_voided_purchases WHERE project_id = $1 AND purchase_token = $2`,
        [h.fx.projectId, token],
      )
    )[0] ?? null;
  const stored = async (token: string) =>
    (
      await h.t.dataSource.query(
        `SELECT state, raw_status AS "rawStatus" FROM rail_subscriptions WHERE project_id = $1 AND rail = 'android_store' AND subscription_id = $2`,
        [h.fx.projectId, token],
      )
    )[0] ?? null;
  it('VOIDED_PURCHASE ends access at once, and a refresh that reads ACTIVE does not grant again', async () => {
    const { customerId, token } = await androidCustomer();
    expect(await pro(customerId)).toEqual(expect.objectContaining({ isActive: true }));
    const orderId = uid('GPA');
    const voided = await voidedNotification(token, orderId);
    expect(voided.decision).toBe('applied');
    expect(await pro(customerId)).toBeUndefined();
    expect(await voidedRow(token)).toEqual(expect.objectContaining({ env: 'sandbox', orderId, voidedReason: null, voidedSource: 'notification' }));

    // The Publisher API still says ACTIVE (googleReports left it so): the refresh keeps it refunded.
    googleReports(token, { expiry: now() + 30 * DAY });
    const res = await refresh(customerId);
    expect(res.status).toBe(200);
    expect(res.body.refreshed).toEqual([expect.objectContaining({ rail: 'android_store', id: token, decision: 'no_change' })]);
    expect(res.body.data).toEqual([]);
    expect(await pro(customerId)).toBeUndefined();

    // A later notification of the token (a renewal read ACTIVE) changes nothing either.
    expect((await subscriptionNotification(token, 2)).decision).toBe('no_op');
    expect(await pro(customerId)).toBeUndefined();
    expect((await stored(token)).state).toBe('inactive');
  });

  it('SUBSCRIPTION_REVOKED is recorded as voided: a later ACTIVE read never grants again', async () => {
    const { customerId, token } = await androidCustomer();
    expect((await subscriptionNotification(token, 12)).decision).toBe('applied');
    expect(await pro(customerId)).toBeUndefined();
    expect(await voidedRow(token)).toEqual(expect.objectContaining({ env: 'sandbox', voidedSource: 'notification' }));
    const res = await refresh(customerId);
    expect(res.body.refreshed).toEqual([expect.objectContaining({ decision: 'no_change' })]);
    expect(res.body.data).toEqual([]);
    expect((await subscriptionNotification(token, 7)).decision).toBe('no_op');
    expect(await pro(customerId)).toBeUndefined();
  });
});
