import { AndroidVoidedReadsJob } from '#rails';
import { WebhookDispatcher } from '#webhooks';
import { keyHeaders } from '../support/fixtures.js';
import { PACKAGE, PRODUCTS, PUSH_TOKEN, railReadHarness, uid } from '../support/harness/rails-read.js';
import { operatorAuth } from '../support/test-app.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';

const DAY = 86_400;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/**
 * The Play Store rail's subscription lifecycle through HTTP: Pub/Sub pushes with the Publisher
 * API stand-in's reads move the subscription object (GET /v1/server/customers/{id}/subscriptions),
 * access follows its state (the entitlements read), `subscription.*` events carry the object and
 * the push's `messageId`, and payments and voidings go into the revenue ledger (GET /v1/revenue),
 * to the cent. Test purchases: the sandbox environment.
 */
describe('subscriptions: the Play Store rail lifecycle', () => {
  const h = railReadHarness({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123456789' }, { ownDatabase: true });
  const { now, google, pro } = h;
  let receiver: WebhookReceiver;
  let hookPath: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    hookPath = `/android-lifecycle/${uid('hook')}`;
    const hook = await h.t.http
      .post(`/admin/v1/projects/${h.fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(hookPath), env: 'sandbox' });
    expect(hook.status).toBe(201);
    const products = await h.t.http
      .put(`/admin/v1/projects/${h.fx.projectId}/products`)
      .set(operatorAuth())
      .send({ products: [...PRODUCTS, { rail: 'android_store', productId: 'pro_yearly', entitlementKeys: ['pro'] }] });
    expect(products.status).toBe(200);
  });
  afterAll(async () => {
    await receiver.close();
  });

  const sk = () => keyHeaders(h.fx, h.fx.keys.skTest);
  const subscriptionsOf = async (customerId: string) => {
    const res = await h.t.http.get(`/v1/server/customers/${customerId}/subscriptions`).set(sk());
    expect(res.status).toBe(200);
    return res.body.data as any[];
  };
  const subscriptionOf = async (customerId: string, token: string) => (await subscriptionsOf(customerId)).find((s) => s.id === token);
  const revenue = async () => {
    const res = await h.t.http.get('/v1/revenue').set(sk());
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const eventsOf = async (customerId: string, type?: string) => {
    await h.t.app.get(WebhookDispatcher).drain();
    return receiver
      .of(hookPath)
      .map((r) => r.json)
      .filter((e) => e.data.serviceCustomerId === customerId && (!type || e.type === type));
  };
  const refundRows = (token: string) =>
    h.t.dataSource.query(
      `SELECT kind, fact_id AS "factId", amount_minor::int AS amount, currency FROM revenue_refunds WHERE project_id = $1 AND subscription_id = $2`,
      [h.fx.projectId, token],
    );

  interface Item {
    productId?: string;
    expiry: number;
    orderId?: string;
    trial?: boolean;
    units?: string;
    basePlanId?: string;
    autoRenew?: boolean;
  }
  /** What the Publisher API answers for a test purchase: one line item at its recurring price (default 9.99 USD a month). */
  function googleReports(token: string, item: Item, fields: Record<string, unknown> = {}) {
    google.subscriptions.set(`${PACKAGE}|${token}`, {
      startTime: iso(now() - 60),
      subscriptionState: 'SUBSCRIPTION_STATE_ACTIVE',
      acknowledgementState: 'ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED',
      testPurchase: {},
      lineItems: [
        {
          productId: item.productId ?? 'pro_monthly',
          expiryTime: iso(item.expiry),
          latestSuccessfulOrderId: item.orderId ?? uid('GPA'),
          offerDetails: { basePlanId: item.basePlanId ?? 'monthly', ...(item.trial ? { offerId: 'trial-7d' } : {}) },
          offerPhase: item.trial ? { freeTrial: {} } : { basePrice: {} },
          autoRenewingPlan: {
            autoRenewEnabled: item.autoRenew ?? true,
            recurringPrice: { currencyCode: 'USD', units: item.units ?? '9', nanos: 990_000_000 },
          },
        },
      ],
      ...fields,
    });
  }
  async function push(data: Record<string, unknown>, messageId = uid('m')) {
    const notification = { version: '1.0', packageName: PACKAGE, eventTimeMillis: String(h.t.clock.nowMs()), ...data };
    const res = await h.t.http.post(`/v1/webhooks/android_store/${h.fx.projectId}?token=${PUSH_TOKEN}`).send({
      message: { data: Buffer.from(JSON.stringify(notification)).toString('base64'), messageId },
      subscription: 'projects/x/subscriptions/rtdn',
    });
    expect(res.status).toBe(200);
    return { ...res.body, messageId } as { decision: string; serviceCustomerId: string; auditEventId: string; messageId: string };
  }
  const notify = (token: string, notificationType: number, productId = 'pro_monthly') =>
    push({ subscriptionNotification: { version: '1.0', notificationType, purchaseToken: token, subscriptionId: productId } });
  /** A paying subscriber of pro_monthly (9.99 USD) until `expiry`, through SUBSCRIPTION_PURCHASED. */
  async function subscriber(expiry = now() + 30 * DAY, orderId = uid('GPA')) {
    const token = uid('tok');
    googleReports(token, { expiry, orderId });
    const bought = await notify(token, 4);
    expect(bought.decision).toBe('applied');
    return { token, orderId, customerId: bought.serviceCustomerId };
  }

  it('trial → conversion: trialing at price 0, outside MRR and paying; then active, renewed with isTrialConversion, its order paid once', async () => {
    const before = await revenue();
    const trialEnd = now() + 7 * DAY;
    const token = uid('tok');
    googleReports(token, { expiry: trialEnd, trial: true, orderId: 'GPA.trial-0' });
    const started = await notify(token, 4);
    expect(started.decision).toBe('applied');
    const customerId = started.serviceCustomerId;
    expect(await subscriptionOf(customerId, token)).toEqual(
      expect.objectContaining({
        rail: 'android_store',
        state: 'trialing',
        periodType: 'trial',
        isActive: true,
        willRenew: true,
        accessEndsAt: trialEnd,
        price: { amountMicros: 0, currency: 'USD' },
        offer: { type: 'introductory', id: 'trial-7d', discount: 'free_trial' },
        storeEnvironment: 'sandbox',
      }),
    );
    expect(await pro(customerId)).toEqual(expect.objectContaining({ isActive: true, validUntil: trialEnd }));
    const during = await revenue();
    expect(during.mrrCents).toBe(before.mrrCents);
    expect(during.payingCustomers).toBe(before.payingCustomers);
    expect(during.recognisedCashThisMonthCents).toBe(before.recognisedCashThisMonthCents);
    expect(during.current.activeTrials).toBe(before.current.activeTrials + 1);
    const [start] = await eventsOf(customerId, 'subscription.started');
    expect(start.data).toEqual(
      expect.objectContaining({
        periodType: 'trial',
        isTrialStart: true,
        rail: 'android_store',
        subscriptionId: token,
        state: 'trialing',
        validUntil: trialEnd,
        priceMicros: 0,
        railEventId: started.messageId,
        auditEventId: started.auditEventId,
      }),
    );
    expect(start.data.subscription).toEqual(expect.objectContaining({ id: token, state: 'trialing' }));

    const paidEnd = trialEnd + 30 * DAY;
    googleReports(token, { expiry: paidEnd, orderId: 'GPA.trial-1' });
    const converted = await notify(token, 2);
    expect(converted.decision).toBe('applied');
    expect(await subscriptionOf(customerId, token)).toEqual(
      expect.objectContaining({ state: 'active', periodType: 'normal', price: { amountMicros: 9_990_000, currency: 'USD' }, accessEndsAt: paidEnd }),
    );
    const after = await revenue();
    expect(after.mrrCents).toBe(before.mrrCents + 999);
    expect(after.payingCustomers).toBe(before.payingCustomers + 1);
    expect(after.current.activeTrials).toBe(before.current.activeTrials);
    expect(after.recognisedCashThisMonthCents).toBe(before.recognisedCashThisMonthCents + 999);
    const renewed = await eventsOf(customerId, 'subscription.renewed');
    expect(renewed).toHaveLength(1);
    expect(renewed[0].data).toEqual(
      expect.objectContaining({
        isTrialConversion: true,
        railEventId: converted.messageId,
        auditEventId: converted.auditEventId,
        priceMicros: 9_990_000,
        currency: 'USD',
        willRenew: true,
      }),
    );
    expect(await eventsOf(customerId, 'subscription.started')).toHaveLength(1);
    // The same read again (another message) pays nothing more and announces nothing.
    expect((await notify(token, 2)).decision).toBe('no_op');
    expect((await revenue()).recognisedCashThisMonthCents).toBe(after.recognisedCashThisMonthCents);
  });

  it('billing issue with grace → recovery: in_grace_period keeps access and MRR; billing_issue once; recovered with a new paid period', async () => {
    const periodEnd = now() + 3600;
    const { token, customerId } = await subscriber(periodEnd);
    const before = await revenue();
    const graceEnd = periodEnd + 3 * DAY;
    googleReports(token, { expiry: graceEnd }, { subscriptionState: 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD' });
    const failedAt = now();
    const grace = await notify(token, 6);
    expect(grace.decision).toBe('applied');
    const inGrace = await subscriptionOf(customerId, token);
    expect(inGrace).toEqual(expect.objectContaining({ state: 'in_grace_period', isActive: true, gracePeriodEndsAt: graceEnd, accessEndsAt: graceEnd }));
    expect(inGrace.billingIssueDetectedAt - failedAt).toBeLessThanOrEqual(1);
    expect(await pro(customerId)).toEqual(expect.objectContaining({ isActive: true, validUntil: graceEnd }));
    expect((await revenue()).mrrCents).toBe(before.mrrCents);
    // A second notification of the same problem is no new episode.
    expect((await notify(token, 6)).decision).toBe('no_op');
    const issues = await eventsOf(customerId, 'subscription.billing_issue');
    expect(issues).toHaveLength(1);
    expect(issues[0].data).toEqual(expect.objectContaining({ gracePeriodEndsAt: graceEnd, railEventId: grace.messageId, state: 'in_grace_period' }));

    const paidEnd = periodEnd + 30 * DAY;
    googleReports(token, { expiry: paidEnd });
    const recovered = await notify(token, 1);
    expect(recovered.decision).toBe('applied');
    expect(await subscriptionOf(customerId, token)).toEqual(
      expect.objectContaining({ state: 'active', billingIssueDetectedAt: null, gracePeriodEndsAt: null, accessEndsAt: paidEnd }),
    );
    const [event] = await eventsOf(customerId, 'subscription.recovered');
    expect(event.data).toEqual(expect.objectContaining({ billingIssueDetectedAt: inGrace.billingIssueDetectedAt, railEventId: recovered.messageId }));
    expect(await eventsOf(customerId, 'subscription.renewed')).toHaveLength(1);
    const after = await revenue();
    expect(after.mrrCents).toBe(before.mrrCents);
    expect(after.recognisedCashThisMonthCents).toBe(before.recognisedCashThisMonthCents + 999);
  });

  it('on_hold → expiry: on hold gives no access and leaves MRR; the expiry says billing_error', async () => {
    const { token, customerId } = await subscriber(now() + 120);
    const before = await revenue();
    googleReports(token, { expiry: now() + 120 }, { subscriptionState: 'SUBSCRIPTION_STATE_ON_HOLD' });
    const heldAt = now();
    const hold = await notify(token, 5);
    expect(hold.decision).toBe('applied');
    const held = await subscriptionOf(customerId, token);
    expect(held).toEqual(expect.objectContaining({ state: 'on_hold', isActive: false, willRenew: false, accessEndsAt: held.billingIssueDetectedAt }));
    expect(held.billingIssueDetectedAt - heldAt).toBeLessThanOrEqual(1);
    expect(await pro(customerId)).toBeUndefined();
    const during = await revenue();
    expect(during.mrrCents).toBe(before.mrrCents - 999);
    expect(during.payingCustomers).toBe(before.payingCustomers - 1);
    expect(await eventsOf(customerId, 'subscription.billing_issue')).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ gracePeriodEndsAt: null, state: 'on_hold', railEventId: hold.messageId }) }),
    ]);

    googleReports(
      token,
      { expiry: now() + 120 },
      { subscriptionState: 'SUBSCRIPTION_STATE_EXPIRED', canceledStateContext: { systemInitiatedCancellation: {} } },
    );
    const expired = await notify(token, 13);
    expect(expired.decision).toBe('applied');
    expect(await subscriptionOf(customerId, token)).toEqual(expect.objectContaining({ state: 'expired', expirationReason: 'billing_error', isActive: false }));
    const [event] = await eventsOf(customerId, 'subscription.expired');
    expect(event.data).toEqual(expect.objectContaining({ expirationReason: 'billing_error', railEventId: expired.messageId }));
    expect((await revenue()).mrrCents).toBe(during.mrrCents);
  });

  it('pause → resume: paused after the paid period gives no access and leaves MRR; resumed comes back with a paid period', async () => {
    const { token, customerId } = await subscriber(now() + 60);
    const before = await revenue();
    const resumeAt = now() + 30 * DAY;
    googleReports(token, { expiry: now() - 1 }, { subscriptionState: 'SUBSCRIPTION_STATE_PAUSED', pausedStateContext: { autoResumeTime: iso(resumeAt) } });
    const pausedAt = now();
    const paused = await notify(token, 10);
    expect(paused.decision).toBe('applied');
    const inPause = await subscriptionOf(customerId, token);
    expect(inPause).toEqual(expect.objectContaining({ state: 'paused', isActive: false, willRenew: false, autoResumeAt: resumeAt }));
    expect(inPause.pausedAt - pausedAt).toBeLessThanOrEqual(1);
    expect(await pro(customerId)).toBeUndefined();
    expect((await revenue()).mrrCents).toBe(before.mrrCents - 999);
    const [pause] = await eventsOf(customerId, 'subscription.paused');
    expect(pause.data).toEqual(expect.objectContaining({ autoResumeAt: resumeAt, railEventId: paused.messageId, state: 'paused' }));

    const paidEnd = now() + 30 * DAY;
    googleReports(token, { expiry: paidEnd });
    const resumed = await notify(token, 2);
    expect(resumed.decision).toBe('applied');
    expect(await subscriptionOf(customerId, token)).toEqual(
      expect.objectContaining({ state: 'active', isActive: true, pausedAt: null, accessEndsAt: paidEnd }),
    );
    expect(await pro(customerId)).toEqual(expect.objectContaining({ isActive: true, validUntil: paidEnd }));
    expect(await eventsOf(customerId, 'subscription.resumed')).toEqual([
      expect.objectContaining({ data: expect.objectContaining({ autoResumeAt: resumeAt, railEventId: resumed.messageId }) }),
    ]);
    expect((await revenue()).mrrCents).toBe(before.mrrCents);
  });

  it('canceled / uncanceled: auto-renew off and on again are applied with their events', async () => {
    const expiry = now() + 30 * DAY;
    const { token, customerId } = await subscriber(expiry);
    const cancelTime = now();
    googleReports(
      token,
      { expiry, autoRenew: false },
      { subscriptionState: 'SUBSCRIPTION_STATE_CANCELED', canceledStateContext: { userInitiatedCancellation: { cancelTime: iso(cancelTime) } } },
    );
    const canceled = await notify(token, 3);
    expect(canceled.decision).toBe('applied');
    expect(await subscriptionOf(customerId, token)).toEqual(
      expect.objectContaining({ state: 'active', isActive: true, willRenew: false, unsubscribeDetectedAt: cancelTime, expirationReason: 'unsubscribe' }),
    );
    googleReports(token, { expiry });
    const restarted = await notify(token, 7);
    expect(restarted.decision).toBe('applied');
    expect(await subscriptionOf(customerId, token)).toEqual(expect.objectContaining({ willRenew: true, unsubscribeDetectedAt: null }));
    expect((await eventsOf(customerId)).filter((e) => e.type.startsWith('subscription.')).map((e) => [e.type, e.data.reason ?? null])).toEqual([
      ['subscription.started', null],
      ['subscription.canceled', 'unsubscribe'],
      ['subscription.uncanceled', 'unsubscribe'],
    ]);
  });

  it('a refresh reads the store and moves the object as a notification would: auto-renew off, then nothing new', async () => {
    const expiry = now() + 30 * DAY;
    const { token, customerId } = await subscriber(expiry);
    const cancelTime = now();
    googleReports(
      token,
      { expiry, autoRenew: false },
      { subscriptionState: 'SUBSCRIPTION_STATE_CANCELED', canceledStateContext: { userInitiatedCancellation: { cancelTime: iso(cancelTime) } } },
    );
    const read = await h.refresh(customerId);
    expect(read.status).toBe(200);
    expect(read.body.refreshed).toEqual([expect.objectContaining({ rail: 'android_store', id: token, decision: 'applied' })]);
    expect(await subscriptionOf(customerId, token)).toEqual(
      expect.objectContaining({ state: 'active', willRenew: false, unsubscribeDetectedAt: cancelTime, expirationReason: 'unsubscribe' }),
    );
    const [canceled] = await eventsOf(customerId, 'subscription.canceled');
    expect(canceled.data).toEqual(expect.objectContaining({ reason: 'unsubscribe', railEventId: null, auditEventId: read.body.refreshed[0].auditEventId }));
    expect((await h.refresh(customerId)).body.refreshed).toEqual([expect.objectContaining({ decision: 'no_change' })]);
  });

  it('upgrade (linkedPurchaseToken): product_changed on the new token, not a start; the old token leaves access and MRR without events', async () => {
    const old = await subscriber();
    const before = await revenue();
    const newToken = uid('tok');
    const yearEnd = now() + 365 * DAY;
    googleReports(newToken, { productId: 'pro_yearly', expiry: yearEnd, units: '59', basePlanId: 'annual' }, { linkedPurchaseToken: old.token });
    const upgraded = await notify(newToken, 4, 'pro_yearly');
    expect(upgraded).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: old.customerId }));

    const subscriptions = await subscriptionsOf(old.customerId);
    expect(subscriptions.map((s) => [s.id, s.productId, s.state, s.isActive])).toEqual([
      [newToken, 'pro_yearly', 'active', true],
      [old.token, 'pro_monthly', 'expired', false],
    ]);
    expect(subscriptions[1]).toEqual(expect.objectContaining({ expirationReason: 'replaced', willRenew: false, accessEndsAt: subscriptions[1].expiredAt }));
    expect(subscriptions[1].expiredAt).toBeLessThanOrEqual(now());
    expect(await pro(old.customerId)).toEqual(
      expect.objectContaining({ isActive: true, validUntil: yearEnd, source: expect.objectContaining({ subscriptionId: newToken, productId: 'pro_yearly' }) }),
    );
    const events = (await eventsOf(old.customerId)).filter((e) => e.type.startsWith('subscription.'));
    expect(events.map((e) => [e.type, e.data.subscriptionId])).toEqual([
      ['subscription.started', old.token],
      ['subscription.product_changed', newToken],
    ]);
    expect(events[1].data).toEqual(
      expect.objectContaining({ previousProductId: 'pro_monthly', effective: 'immediate', productId: 'pro_yearly', railEventId: upgraded.messageId }),
    );
    // 9.99 a month leaves MRR; 59.99 a year (499.92 a month) comes in; the new order is paid.
    const after = await revenue();
    expect(after.mrrCents).toBe(before.mrrCents - 999 + 500);
    expect(after.payingCustomers).toBe(before.payingCustomers);
    expect(after.recognisedCashThisMonthCents).toBe(before.recognisedCashThisMonthCents + 5999);

    // The store then cancels and expires the old token: it stays replaced, nothing announced.
    googleReports(
      old.token,
      { expiry: now() + 30 * DAY },
      { subscriptionState: 'SUBSCRIPTION_STATE_EXPIRED', canceledStateContext: { replacementCancellation: {} } },
    );
    expect((await notify(old.token, 13)).decision).toBe('no_op');
    expect((await eventsOf(old.customerId)).filter((e) => e.type.startsWith('subscription.'))).toHaveLength(2);
  });

  it('voided → a refund in the ledger once (notification, then the list), revenue right to the cent; a listed chargeback likewise', async () => {
    const before = await revenue();
    const refunded = await subscriber(now() + 30 * DAY, uid('GPA.refund'));
    const charged = await subscriber(now() + 30 * DAY, uid('GPA.charge'));
    const paid = await revenue();
    expect(paid.recognisedCashThisMonthCents).toBe(before.recognisedCashThisMonthCents + 2 * 999);

    const voidedAt = now();
    const voided = await push({ voidedPurchaseNotification: { purchaseToken: refunded.token, orderId: refunded.orderId, productType: 1, refundType: 1 } });
    expect(voided.decision).toBe('applied');
    const refundedObject = await subscriptionOf(refunded.customerId, refunded.token);
    expect(refundedObject).toEqual(
      expect.objectContaining({ state: 'refunded', isActive: false, willRenew: false, expirationReason: 'refund', accessEndsAt: refundedObject.refundedAt }),
    );
    expect(refundedObject.refundedAt - voidedAt).toBeLessThanOrEqual(1);
    expect(await pro(refunded.customerId)).toBeUndefined();
    const [refundEvent] = await eventsOf(refunded.customerId, 'subscription.refunded');
    expect(refundEvent.data).toEqual(
      expect.objectContaining({ reason: 'refund', amountMicros: 9_990_000, currency: 'USD', railEventId: voided.messageId, state: 'refunded' }),
    );
    expect(await refundRows(refunded.token)).toEqual([{ kind: 'refund', factId: `voided:${refunded.orderId}`, amount: 999, currency: 'USD' }]);

    // The hourly list names the same voiding (as a chargeback) and the other purchase's chargeback.
    const listedAt = h.t.clock.nowMs() - 1000;
    google.voided.set(PACKAGE, [
      { purchaseToken: refunded.token, orderId: refunded.orderId, voidedTimeMillis: String(listedAt), voidedSource: 0, voidedReason: 7 },
      { purchaseToken: charged.token, orderId: charged.orderId, voidedTimeMillis: String(listedAt), voidedSource: 2, voidedReason: 8 },
    ]);
    expect(await h.t.app.get(AndroidVoidedReadsJob).readDue()).toEqual(expect.objectContaining({ projects: 1, entries: 2 }));
    expect(await refundRows(refunded.token)).toHaveLength(1);
    expect(await eventsOf(refunded.customerId, 'subscription.refunded')).toHaveLength(1);
    expect(await refundRows(charged.token)).toEqual([{ kind: 'chargeback', factId: `voided:${charged.orderId}`, amount: 999, currency: 'USD' }]);
    const [chargeback] = await eventsOf(charged.customerId, 'subscription.refunded');
    expect(chargeback.data).toEqual(expect.objectContaining({ reason: 'chargeback', amountMicros: 9_990_000, railEventId: charged.orderId }));
    const voidedRow = await h.t.dataSource.query(
      `SELECT order_id AS "orderId", voided_reason AS "voidedReason" FROM android_voided_purchases WHERE project_id = $1 AND purchase_token = $2`,
      [h.fx.projectId, refunded.token],
    );
    expect(voidedRow).toEqual([{ orderId: refunded.orderId, voidedReason: 7 }]);

    const after = await revenue();
    expect(after.refundsCents).toBe(before.refundsCents + 2 * 999);
    expect(after.current.refundsCents).toBe(after.refundsCents);
    expect(after.recognisedCashThisMonthCents).toBe(paid.recognisedCashThisMonthCents);
    expect(after.netCashCents).toBe(after.recognisedCashThisMonthCents - after.refundsCents);
    expect(after.netCashCents).toBe(before.netCashCents);
    expect(after.mrrCents).toBe(before.mrrCents);
    expect(after.payingCustomers).toBe(before.payingCustomers);
  });
  it('SUBSCRIPTION_REVOKED books the latest order’s refund (voided:<orderId>); the list entry of the same order later counts once', async () => {
    const before = await revenue();
    const revoked = await subscriber(now() + 30 * DAY, uid('GPA.revoke'));
    googleReports(revoked.token, { expiry: now() + 30 * DAY, orderId: revoked.orderId }, { subscriptionState: 'SUBSCRIPTION_STATE_EXPIRED' });
    const pushed = await notify(revoked.token, 12);
    expect(pushed.decision).toBe('applied');
    expect(await subscriptionOf(revoked.customerId, revoked.token)).toEqual(expect.objectContaining({ state: 'refunded', isActive: false }));
    const [event] = await eventsOf(revoked.customerId, 'subscription.refunded');
    expect(event.data).toEqual(expect.objectContaining({ reason: 'refund', amountMicros: 9_990_000, currency: 'USD', railEventId: pushed.messageId }));
    expect(await refundRows(revoked.token)).toEqual([{ kind: 'refund', factId: `voided:${revoked.orderId}`, amount: 999, currency: 'USD' }]);
    const afterRevoke = await revenue();
    expect(afterRevoke.refundsCents).toBe(before.refundsCents + 999);
    expect(afterRevoke.netCashCents).toBe(afterRevoke.recognisedCashThisMonthCents - afterRevoke.refundsCents);

    // The hourly list names the same order: nothing more in the ledger, nothing announced again.
    google.voided.set(PACKAGE, [
      { purchaseToken: revoked.token, orderId: revoked.orderId, voidedTimeMillis: String(h.t.clock.nowMs() - 1000), voidedSource: 0, voidedReason: 1 },
    ]);
    await h.t.app.get(AndroidVoidedReadsJob).readDue();
    expect(await refundRows(revoked.token)).toHaveLength(1);
    expect(await eventsOf(revoked.customerId, 'subscription.refunded')).toHaveLength(1);
    expect((await revenue()).refundsCents).toBe(afterRevoke.refundsCents);
  });

  it('a voiding of a subscription that states no price takes the order’s recorded payment as its amount; without one it books nothing', async () => {
    const before = await revenue();
    const paid = await subscriber(now() + 30 * DAY, uid('GPA.unpriced'));
    const unpaid = await subscriber(now() + 30 * DAY, uid('GPA.unpaid'));
    // Records whose price was never read (kept before prices were stored); the first order's payment is in the ledger.
    await h.t.dataSource.query(
      `UPDATE rail_subscriptions SET subscription = jsonb_set(subscription, '{price}', 'null'::jsonb)
        WHERE project_id = $1 AND rail = 'android_store' AND subscription_id = ANY($2::text[])`,
      [h.fx.projectId, [paid.token, unpaid.token]],
    );
    const cash = await revenue();
    expect(cash.recognisedCashThisMonthCents).toBe(before.recognisedCashThisMonthCents + 2 * 999);

    const voided = await push({ voidedPurchaseNotification: { purchaseToken: paid.token, orderId: paid.orderId, productType: 1, refundType: 1 } });
    expect(voided.decision).toBe('applied');
    expect(await refundRows(paid.token)).toEqual([{ kind: 'refund', factId: `voided:${paid.orderId}`, amount: 999, currency: 'USD' }]);
    const [event] = await eventsOf(paid.customerId, 'subscription.refunded');
    expect(event.data).toEqual(expect.objectContaining({ amountMicros: 9_990_000, currency: 'USD' }));

    // An order the ledger holds no payment of: refunded, announced without an amount, nothing booked.
    const otherOrder = uid('GPA.other');
    expect((await push({ voidedPurchaseNotification: { purchaseToken: unpaid.token, orderId: otherOrder, productType: 1, refundType: 1 } })).decision).toBe(
      'applied',
    );
    expect(await subscriptionOf(unpaid.customerId, unpaid.token)).toEqual(expect.objectContaining({ state: 'refunded' }));
    expect(await refundRows(unpaid.token)).toEqual([]);
    const [unpriced] = await eventsOf(unpaid.customerId, 'subscription.refunded');
    expect(unpriced.data).toEqual(expect.objectContaining({ amountMicros: null, currency: null }));

    const after = await revenue();
    expect(after.refundsCents).toBe(before.refundsCents + 999);
    expect(after.netCashCents).toBe(after.recognisedCashThisMonthCents - after.refundsCents);
  });
});
