import { WebhookDispatcher } from '#webhooks';
import { ExpiryReadsJob } from '#rails';
import { keyHeaders } from '../support/fixtures.js';
import { BUNDLE, railReadHarness, uid } from '../support/harness/rails-read.js';
import { transactionPayload } from '../support/store-signing.js';
import { operatorAuth } from '../support/test-app.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';

const DAY = 86_400;

describe('rails: reads at expiry and the migration gate, against the stores’ stand-ins', () => {
  const h = railReadHarness({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123456789' }, { ownDatabase: true });
  const { now, card, google, cardCustomer, iosCustomer, androidCustomer, appleReports, googleReports, pro, audit } = h;
  let receiver: WebhookReceiver;
  let hookPath = '';

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    hookPath = `/hooks/${uid('reconcile')}`;
    const res = await h.t.http
      .post(`/admin/v1/projects/${h.fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(hookPath), env: 'sandbox' });
    expect(res.status).toBe(201);
  });
  afterAll(async () => {
    await receiver?.close();
  });

  const sweep = () => h.t.app.get(ExpiryReadsJob).sweepOnce();
  const advance = async (seconds: number) =>
    expect((await h.t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds })).status).toBe(200);
  /** The customer's reconciliation entries, from the operator's audit timeline. */
  const reconciliations = async (customerId: string) => {
    const res = await h.t.http.get(`/admin/v1/projects/${h.fx.projectId}/customers/${customerId}/timeline?env=sandbox&limit=100`).set(operatorAuth());
    expect(res.status).toBe(200);
    const ids = (res.body.data as { eventId: string; eventType: string }[]).filter((e) => e.eventType === 'reconciliation').map((e) => e.eventId);
    return Promise.all(ids.sort().map(async (eventId) => (await audit(eventId)).body.data));
  };
  const expiryRow = async (rail: string, subscriptionId: string) =>
    (
      await h.t.dataSource.query(
        `SELECT status, attempts, last_outcome AS "lastOutcome" FROM rail_expiry_reads WHERE project_id = $1 AND env = 'sandbox' AND rail = $2 AND subscription_id = $3`,
        [h.fx.projectId, rail, subscriptionId],
      )
    )[0] ?? null;
  const storedState = async (rail: string, subscriptionId: string) =>
    (
      await h.t.dataSource.query(`SELECT state FROM rail_subscriptions WHERE project_id = $1 AND env = 'sandbox' AND rail = $2 AND subscription_id = $3`, [
        h.fx.projectId,
        rail,
        subscriptionId,
      ])
    )[0]?.state as string | undefined;

  describe('at expiry', () => {
    it('card: a renewal the notification missed keeps access (extended, audit reconciliation, outbound webhook), read once', async () => {
      const { customerId, cardCustomer: cus, sub } = await cardCustomer({ periodEnd: now() + 60 });
      const renewedEnd = now() + 30 * DAY;
      card.subscription(sub.id, cus, { productId: 'prod_pro', periodEnd: renewedEnd, livemode: false });
      await advance(120);
      expect((await pro(customerId))?.isActive ?? false).toBe(false);

      await sweep();
      expect(await pro(customerId)).toEqual(expect.objectContaining({ isActive: true, validUntil: renewedEnd }));
      expect(await expiryRow('card_payments', sub.id)).toEqual({ status: 'done', attempts: 0, lastOutcome: 'applied' });
      const [entry, ...more] = await reconciliations(customerId);
      expect(more).toEqual([]);
      expect(entry).toEqual(expect.objectContaining({ rail: 'card_payments', eventType: 'reconciliation', decision: 'applied', reconciledWithProvider: true }));

      await h.t.app.get(WebhookDispatcher).drain();
      await receiver.waitFor((hooks) => hooks.some((r) => r.path === hookPath && r.json.data?.serviceCustomerId === customerId));
      const updates = receiver.of(hookPath).filter((r) => r.json.type === 'customer.entitlements.updated' && r.json.data.serviceCustomerId === customerId);
      expect(updates.length).toBeGreaterThanOrEqual(1);
      expect(updates[updates.length - 1].json.data.entitlements).toEqual([expect.objectContaining({ key: 'pro', isActive: true })]);

      // Read once: a later sweep finds nothing due for it.
      const reads = () => card.calls.filter((call) => call.includes(sub.id) || call.includes(cus)).length;
      const before = reads();
      await advance(60);
      await sweep();
      expect(reads()).toBe(before);
    });

    it('iOS: a refund the notification missed is caught (the subscription ends, audit reconciliation)', async () => {
      const { customerId, tx } = await iosCustomer({ expiresMs: h.t.clock.nowMs() + 60_000 });
      appleReports(tx, 5, { revocationDate: h.t.clock.nowMs() - 1000, revocationReason: 0 });
      await advance(120);
      await sweep();
      expect(await storedState('ios_store', tx.originalTransactionId)).toBe('inactive');
      expect(await expiryRow('ios_store', tx.originalTransactionId)).toEqual(expect.objectContaining({ status: 'done', lastOutcome: 'applied' }));
      expect(await reconciliations(customerId)).toEqual([expect.objectContaining({ rail: 'ios_store', eventType: 'reconciliation', decision: 'applied' })]);
      expect((await pro(customerId))?.isActive ?? false).toBe(false);
    });

    it('iOS: the read at expiry stores the subscription object it derives (renewed period, price, state)', async () => {
      const { customerId, tx } = await iosCustomer({ expiresMs: h.t.clock.nowMs() + 60_000 });
      const renewedMs = h.t.clock.nowMs() + 30 * DAY * 1000;
      appleReports(tx, 1, { transactionId: uid('2000'), purchaseDate: h.t.clock.nowMs() + 60_000, expiresDate: renewedMs, price: 4990, currency: 'EUR' });
      await advance(120);
      await sweep();
      expect(await expiryRow('ios_store', tx.originalTransactionId)).toEqual(expect.objectContaining({ status: 'done', lastOutcome: 'applied' }));
      const [stored] = await h.t.dataSource.query(
        `SELECT subscription FROM rail_subscriptions WHERE project_id = $1 AND env = 'sandbox' AND rail = 'ios_store' AND subscription_id = $2`,
        [h.fx.projectId, tx.originalTransactionId],
      );
      expect(stored.subscription).toEqual(
        expect.objectContaining({
          object: 'subscription',
          id: tx.originalTransactionId,
          state: 'active',
          currentPeriodEndsAt: Math.floor(renewedMs / 1000),
          accessEndsAt: Math.floor(renewedMs / 1000),
          price: { amountMicros: 4_990_000, currency: 'EUR' },
        }),
      );
      const subscriptions = await h.t.http.get(`/v1/server/customers/${customerId}/subscriptions`).set(keyHeaders(h.fx, h.fx.keys.skTest));
      expect(subscriptions.body.data).toEqual([
        expect.objectContaining({ id: tx.originalTransactionId, isActive: true, price: { amountMicros: 4_990_000, currency: 'EUR' } }),
      ]);
      // The renewal is announced from the read: no rail event id.
      await h.t.app.get(WebhookDispatcher).drain();
      const [renewed] = receiver
        .of(hookPath)
        .map((r) => r.json)
        .filter((e) => e.type === 'subscription.renewed' && e.data.serviceCustomerId === customerId)
        .slice(-1);
      expect(renewed.data).toEqual(
        expect.objectContaining({
          railEventId: null,
          auditEventId: expect.stringMatching(/^rail_evt_/),
          subscription: expect.objectContaining({ state: 'active' }),
        }),
      );
    });

    it('Android: a renewal the notification missed keeps access', async () => {
      const { customerId, token } = await androidCustomer({ expiry: now() + 60 });
      googleReports(token, { expiry: now() + 30 * DAY });
      await advance(120);
      await sweep();
      expect(await pro(customerId)).toEqual(expect.objectContaining({ isActive: true }));
      expect(await expiryRow('android_store', token)).toEqual(expect.objectContaining({ status: 'done', lastOutcome: 'applied' }));
    });

    it('card: an unreadable rail leaves the stored state, is read again after the back-off and then applied', async () => {
      const { customerId, cardCustomer: cus, sub } = await cardCustomer({ periodEnd: now() + 60 });
      card.fault = { status: 500 };
      try {
        await advance(120);
        await sweep();
        expect(await expiryRow('card_payments', sub.id)).toEqual({ status: 'pending', attempts: 1, lastOutcome: 'unavailable' });
        expect((await pro(customerId))?.isActive ?? false).toBe(false);
      } finally {
        card.fault = null;
      }
      const renewedEnd = now() + 30 * DAY;
      card.subscription(sub.id, cus, { productId: 'prod_pro', periodEnd: renewedEnd, livemode: false });
      // Not before the first back-off (5 min).
      await advance(4 * 60);
      await sweep();
      expect(await expiryRow('card_payments', sub.id)).toEqual(expect.objectContaining({ status: 'pending', attempts: 1 }));
      await advance(61);
      await sweep();
      expect(await expiryRow('card_payments', sub.id)).toEqual({ status: 'done', attempts: 1, lastOutcome: 'applied' });
      expect(await pro(customerId)).toEqual(expect.objectContaining({ isActive: true, validUntil: renewedEnd }));
    });

    it('a rail answering 5xx delays only its own reads: the other rail is read in the same sweep', async () => {
      const cards = [await cardCustomer({ periodEnd: now() + 60 }), await cardCustomer({ periodEnd: now() + 60 })];
      const android = await androidCustomer({ expiry: now() + 60 });
      googleReports(android.token, { expiry: now() + 30 * DAY });
      card.fault = { status: 503 };
      try {
        await advance(120);
        await sweep();
      } finally {
        card.fault = null;
      }
      // The card rail backs off (the first read counts an attempt; one that the back-off then held is rate limited) …
      for (const { sub } of cards) {
        expect(await expiryRow('card_payments', sub.id)).toEqual(
          expect.objectContaining({ status: 'pending', lastOutcome: expect.stringMatching(/^(unavailable|rate_limited)$/) }),
        );
      }
      // … while Android is read and applied.
      expect(await expiryRow('android_store', android.token)).toEqual(expect.objectContaining({ status: 'done', lastOutcome: 'applied' }));
      expect(await pro(android.customerId)).toEqual(expect.objectContaining({ isActive: true }));
      // Past the card back-off, so the later reads of the card rail are not held by it.
      await advance(61);
    });
  });

  describe('migration gate', () => {
    const migrate = (users: object[]) => h.t.http.post('/v1/migration/users').set(keyHeaders(h.fx, h.fx.keys.skTest)).send({ users });
    const gateCounts = (body: any) => ({
      granted: body.entitlementsGranted,
      railBacked: body.entitlementsSkippedRailBacked,
      lapsed: body.entitlementsSkippedLapsed,
      undetermined: body.entitlementsUndetermined,
      alreadyGranted: body.details.entitlementsAlreadyGranted,
    });
    const appleTransaction = (expiresMs: number) =>
      transactionPayload({ bundleId: BUNDLE, productId: 'pro.monthly', signedDate: h.t.clock.nowMs(), expiresDate: expiresMs });

    it('each rail: live is rail-backed, ended is lapsed, no subscription gets the grant; a re-run counts the same', async () => {
      // Card customers the processor knows (live, canceled) and one it does not.
      const cardLive = uid('cus');
      card.subscription(uid('sub'), cardLive, { productId: 'prod_pro', periodEnd: now() + 30 * DAY, livemode: false });
      const cardEnded = uid('cus');
      card.subscription(uid('sub'), cardEnded, { productId: 'prod_pro', periodEnd: now() - DAY, status: 'canceled', livemode: false });
      const cardNone = uid('cus');
      // iOS original transactions: active, expired, unknown to the store.
      const iosLive = appleTransaction(h.t.clock.nowMs() + 30 * DAY * 1000);
      appleReports(iosLive, 1);
      const iosEnded = appleTransaction(h.t.clock.nowMs() - DAY * 1000);
      appleReports(iosEnded, 2);
      const iosNone = uid('2000');
      // Android purchase tokens: active, expired, unknown to the store.
      const tokenLive = uid('tok');
      googleReports(tokenLive, { expiry: now() + 30 * DAY });
      const tokenEnded = uid('tok');
      googleReports(tokenEnded, { state: 'SUBSCRIPTION_STATE_EXPIRED', expiry: now() - DAY });
      const tokenNone = uid('tok');

      const users = [
        { developerUserId: uid('u'), cardCustomerId: cardLive, entitlements: { pro: true } },
        { developerUserId: uid('u'), cardCustomerId: cardEnded, entitlements: { pro: true } },
        { developerUserId: uid('u'), cardCustomerId: cardNone, entitlements: { pro: true } },
        { developerUserId: uid('u'), iosStoreOriginalTransactionId: iosLive.originalTransactionId, entitlements: { pro: true } },
        { developerUserId: uid('u'), iosStoreOriginalTransactionId: iosEnded.originalTransactionId, entitlements: { pro: true } },
        { developerUserId: uid('u'), iosStoreOriginalTransactionId: iosNone, entitlements: { pro: true } },
        { developerUserId: uid('u'), androidPurchaseToken: tokenLive, entitlements: { pro: true } },
        { developerUserId: uid('u'), androidPurchaseToken: tokenEnded, entitlements: { pro: true } },
        { developerUserId: uid('u'), androidPurchaseToken: tokenNone, entitlements: { pro: true } },
      ];
      const first = await migrate(users);
      expect(first.status).toBe(200);
      expect(gateCounts(first.body)).toEqual({ granted: 3, railBacked: 3, lapsed: 3, undetermined: 0, alreadyGranted: 0 });

      // The reads applied the live subscriptions to the migrated customers: a re-run decides from the records.
      const again = await migrate(users);
      expect(gateCounts(again.body)).toEqual({ granted: 0, railBacked: 3, lapsed: 3, undetermined: 0, alreadyGranted: 3 });
    });

    it('the records the gate’s reads apply carry the subscription object (iOS and card), with their price', async () => {
      const cardLive = uid('cus');
      const sub = card.subscription(uid('sub'), cardLive, { productId: 'prod_pro', periodEnd: now() + 30 * DAY, livemode: false });
      const [item] = (sub.items as { data: Record<string, unknown>[] }).data;
      item.price = { ...(item.price as object), unit_amount: 1200, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } };
      item.quantity = 1;
      const iosLive = appleTransaction(h.t.clock.nowMs() + 30 * DAY * 1000);
      appleReports(iosLive, 1, { price: 9990, currency: 'USD' });
      const res = await migrate([
        { developerUserId: uid('u'), cardCustomerId: cardLive, entitlements: { pro: true } },
        { developerUserId: uid('u'), iosStoreOriginalTransactionId: iosLive.originalTransactionId, entitlements: { pro: true } },
      ]);
      expect(gateCounts(res.body)).toEqual({ granted: 0, railBacked: 2, lapsed: 0, undetermined: 0, alreadyGranted: 0 });
      const rows: { rail: string; subscription: any }[] = await h.t.dataSource.query(
        `SELECT rail, subscription FROM rail_subscriptions WHERE project_id = $1 AND env = 'sandbox' AND subscription_id = ANY($2) ORDER BY rail`,
        [h.fx.projectId, [sub.id, iosLive.originalTransactionId]],
      );
      expect(rows).toEqual([
        { rail: 'card_payments', subscription: expect.objectContaining({ id: sub.id, state: 'active', price: { amountMicros: 12_000_000, currency: 'USD' } }) },
        {
          rail: 'ios_store',
          subscription: expect.objectContaining({ id: iosLive.originalTransactionId, state: 'active', price: { amountMicros: 9_990_000, currency: 'USD' } }),
        },
      ]);
    });

    it('a rail that cannot be read is undetermined; a re-run once it is readable converges', async () => {
      const cardNone = uid('cus');
      const cardLive = uid('cus');
      card.subscription(uid('sub'), cardLive, { productId: 'prod_pro', periodEnd: now() + 30 * DAY, livemode: false });
      const users = [
        { developerUserId: uid('u'), cardCustomerId: cardNone, entitlements: { pro: true } },
        { developerUserId: uid('u'), cardCustomerId: cardLive, entitlements: { pro: true } },
        { developerUserId: uid('u'), entitlements: { pro: true } },
      ];
      card.fault = { status: 500 };
      let first;
      try {
        first = await migrate(users);
      } finally {
        card.fault = null;
      }
      expect(gateCounts(first.body)).toEqual({ granted: 1, railBacked: 0, lapsed: 0, undetermined: 2, alreadyGranted: 0 });
      // The processor's back-off after the failure passes on the service clock.
      await advance(10 * 60);
      const second = await migrate(users);
      expect(gateCounts(second.body)).toEqual({ granted: 1, railBacked: 1, lapsed: 0, undetermined: 0, alreadyGranted: 1 });
      const third = await migrate(users);
      expect(gateCounts(third.body)).toEqual({ granted: 0, railBacked: 1, lapsed: 0, undetermined: 0, alreadyGranted: 2 });
    });

    it('no read credentials for a rail: undetermined', async () => {
      const project = await h.railProject();
      h.writeSecrets({ [project.projectId]: { card_payments: { webhookSecrets: ['whsec_nokey_0123456789abcdef'] } } });
      const res = await h.t.http
        .post('/v1/migration/users')
        .set(keyHeaders(project, project.keys.skTest))
        .send({ users: [{ developerUserId: uid('u'), cardCustomerId: uid('cus'), entitlements: { pro: true } }] });
      expect(gateCounts(res.body)).toEqual({ granted: 0, railBacked: 0, lapsed: 0, undetermined: 1, alreadyGranted: 0 });
    });
  });

  it('the Publisher API is read for purchase tokens (not a fake of our own)', () => {
    expect(google.calls.length).toBeGreaterThan(0);
  });
});
