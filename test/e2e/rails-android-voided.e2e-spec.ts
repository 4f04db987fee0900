import { ANDROID_VOIDED_READ_OVERLAP_MS, AndroidVoidedReadsJob, RailReader } from '#rails';
import { TenantScopes } from '#platform';
import { keyHeaders } from '../support/fixtures.js';
import { PACKAGE, PUSH_TOKEN, railReadHarness, uid } from '../support/harness/rails-read.js';
import { operatorAuth } from '../support/test-app.js';

const DAY = 86_400;

/**
 * A voided Play purchase token never gives access again: after a VOIDED_PURCHASE or
 * SUBSCRIPTION_REVOKED notification, or an entry of the voided-purchases list (read hourly), a
 * notification, a refresh, a read at expiry or the migration gate's read that finds
 * SUBSCRIPTION_STATE_ACTIVE in subscriptionsv2 leaves it refunded.
 */
describe('rails: voided Android purchases', () => {
  const h = railReadHarness({}, { ownDatabase: true });
  const { now, google, androidCustomer, googleReports, refresh, pro } = h;
  const readVoided = () => h.t.app.get(AndroidVoidedReadsJob).readDue();
  const advance = async (seconds: number) =>
    expect((await h.t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds })).status).toBe(200);

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
  const auditEntries = async (customerId: string) =>
    (await h.t.dataSource.query(`SELECT count(*)::int AS n FROM audit_entries WHERE project_id = $1 AND customer_id = $2`, [h.fx.projectId, customerId]))[0]
      .n as number;

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

  it('the voided-purchases list, read hourly and paged, ends access; entries seen again change nothing', async () => {
    const { customerId, token } = await androidCustomer();
    const chargeback = await androidCustomer();
    const voidedAt = h.t.clock.nowMs() - 60_000;
    const unknownToken = uid('tok');
    google.voided.set(PACKAGE, [
      {
        purchaseToken: token,
        orderId: 'GPA.1111-voided',
        voidedTimeMillis: String(voidedAt),
        voidedSource: 0,
        voidedReason: 1,
        purchaseTimeMillis: String(voidedAt - DAY * 1000),
      },
      { purchaseToken: unknownToken, orderId: 'GPA.2222-voided', voidedTimeMillis: String(voidedAt), voidedSource: 1, voidedReason: 0 },
      { purchaseToken: chargeback.token, orderId: 'GPA.3333-voided', voidedTimeMillis: String(voidedAt), voidedSource: 2, voidedReason: 7 },
      // Outside the window (older than 30 days): never asked for.
      { purchaseToken: uid('tok'), orderId: 'GPA.4444-old', voidedTimeMillis: String(h.t.clock.nowMs() - 31 * DAY * 1000), voidedSource: 0, voidedReason: 0 },
    ]);
    google.voidedPageSize = 2;
    const before = google.voidedQueries.length;
    const summary = await readVoided();
    expect(summary).toEqual(expect.objectContaining({ projects: 1, entries: 3, outcomes: { read: 1 } }));
    // Two pages of two, type 1, 30 days back.
    const queries = google.voidedQueries.slice(before);
    expect(queries).toHaveLength(2);
    expect(queries[0]).toEqual({ packageName: PACKAGE, query: expect.objectContaining({ type: '1', maxResults: '1000' }) });
    expect(Number(queries[0].query.endTime)).toBeLessThanOrEqual(h.t.clock.nowMs());
    expect(Number(queries[0].query.endTime) - Number(queries[0].query.startTime)).toBe(30 * DAY * 1000);
    expect(queries[1].query).toEqual(expect.objectContaining({ startTime: queries[0].query.startTime, endTime: queries[0].query.endTime }));
    expect(queries[0].query.token).toBeUndefined();
    expect(queries[1].query.token).toEqual(expect.any(String));

    expect(await pro(customerId)).toBeUndefined();
    expect(await pro(chargeback.customerId)).toBeUndefined();
    expect(await voidedRow(token)).toEqual({ env: 'sandbox', orderId: 'GPA.1111-voided', voidedReason: 1, voidedSource: 'list', voidedAtMs: voidedAt });
    expect(await voidedRow(chargeback.token)).toEqual(expect.objectContaining({ voidedReason: 7, voidedSource: 'list' }));
    // A token the service holds no record of is recorded all the same; its environment is not known yet.
    expect(await voidedRow(unknownToken)).toEqual(expect.objectContaining({ env: null, voidedSource: 'list' }));
    const refundEntry = (
      await h.t.dataSource.query(`SELECT details FROM audit_entries WHERE project_id = $1 AND customer_id = $2 AND event_type = 'VOIDED_PURCHASE'`, [
        h.fx.projectId,
        chargeback.customerId,
      ])
    )[0];
    expect(JSON.stringify(refundEntry?.details ?? {})).toContain('chargeback');

    // A refresh whose read says ACTIVE keeps it refunded.
    const res = await refresh(customerId);
    expect(res.body.refreshed).toEqual([expect.objectContaining({ decision: 'no_change' })]);
    expect(res.body.data).toEqual([]);

    // Not due again within the hour.
    expect((await readVoided()).projects).toBe(0);
    expect(google.voidedQueries.length).toBe(before + 2);

    // An hour later: read from the last read's end; the entries seen again change nothing.
    const lastEnd = Number(queries[0].query.endTime);
    const entriesBefore = await auditEntries(customerId);
    google.voided.set(PACKAGE, [
      ...google.voided.get(PACKAGE)!,
      { purchaseToken: token, orderId: 'GPA.1111-voided', voidedTimeMillis: String(h.t.clock.nowMs() + 60_000), voidedSource: 0, voidedReason: 1 },
    ]);
    await advance(3600 + 5);
    const again = await readVoided();
    expect(again).toEqual(expect.objectContaining({ projects: 1, outcomes: { read: 1 } }));
    // From the last read's end, less a short overlap for voidings the store lists late.
    expect(Number(google.voidedQueries.at(-1)!.query.startTime)).toBe(lastEnd - ANDROID_VOIDED_READ_OVERLAP_MS);
    expect(await auditEntries(customerId)).toBe(entriesBefore);
    expect(await voidedRow(token)).toEqual(expect.objectContaining({ voidedAtMs: voidedAt }));
    expect(await pro(customerId)).toBeUndefined();
  });

  it('a token voided before the service knew it never grants: its purchase notification, a read at expiry, the migration gate', async () => {
    // The list names a token no notification brought yet.
    const lateToken = uid('tok');
    const migratedToken = uid('tok');
    await advance(3600 + 5);
    google.voided.set(PACKAGE, [
      { purchaseToken: lateToken, orderId: uid('GPA'), voidedTimeMillis: String(h.t.clock.nowMs() - 1000), voidedSource: 0, voidedReason: 0 },
      { purchaseToken: migratedToken, orderId: uid('GPA'), voidedTimeMillis: String(h.t.clock.nowMs() - 1000), voidedSource: 0, voidedReason: 0 },
    ]);
    expect(await readVoided()).toEqual(expect.objectContaining({ projects: 1, entries: 2 }));

    // Its purchase notification arrives later and reads ACTIVE: refunded, no access.
    googleReports(lateToken, { expiry: now() + 30 * DAY });
    const purchased = await subscriptionNotification(lateToken, 4);
    expect(purchased.decision).toBe('applied');
    expect(await pro(purchased.serviceCustomerId)).toBeUndefined();
    expect((await stored(lateToken)).state).toBe('inactive');
    expect(await voidedRow(lateToken)).toEqual(expect.objectContaining({ env: 'sandbox' }));

    // A read at expiry of the token: ended, nothing changed.
    const read = await h.t.app.get(RailReader).readRailId(TenantScopes.ofVerifiedRailPayload(h.fx.projectId, 'sandbox'), 'android_store', lateToken, 'expiry');
    expect(read).toEqual(expect.objectContaining({ found: 'ended', decision: 'no_change' }));
    expect(await pro(purchased.serviceCustomerId)).toBeUndefined();

    // The migration gate reads the token (ACTIVE on the store): lapsed, not rail-backed, no grant.
    googleReports(migratedToken, { expiry: now() + 30 * DAY });
    const developerUserId = uid('u');
    const migrated = await h.t.http
      .post('/v1/migration/users')
      .set(keyHeaders(h.fx, h.fx.keys.skTest))
      .send({ users: [{ developerUserId, androidPurchaseToken: migratedToken, entitlements: { pro: true } }] });
    expect(migrated.status).toBe(200);
    expect(migrated.body).toMatchObject({ entitlementsGranted: 0, entitlementsSkippedRailBacked: 0, entitlementsSkippedLapsed: 1 });
    const ents = await h.t.http.get(`/v1/server/customers/${encodeURIComponent(developerUserId)}/entitlements`).set(keyHeaders(h.fx, h.fx.keys.skTest));
    expect((ents.body.data ?? []).filter((e: { key: string }) => e.key === 'pro')).toEqual([]);
  });
});
