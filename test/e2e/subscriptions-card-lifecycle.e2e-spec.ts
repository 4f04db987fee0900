import { WebhookDispatcher } from '#webhooks';
import { keyHeaders } from '../support/fixtures.js';
import { operatorAuth } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { type LifecycleSubscriptionOptions, lifecycleCardSubscription } from '../support/card-events.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';

const DAY = 86_400;

/**
 * The card rail's subscription lifecycle through HTTP: signed processor events move the
 * subscription object (GET /v1/server/customers/{id}/subscriptions), access follows its state
 * (the entitlements read), `subscription.*` events carry the object, and money goes into the
 * revenue ledger (GET /v1/revenue), to the cent.
 */
describe('subscriptions: the card rail lifecycle', () => {
  const h = cardWebhookHarness({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123456789' }, { ownDatabase: true });
  const { now, event, send } = h;
  let receiver: WebhookReceiver;
  let hookPath: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    hookPath = `/lifecycle/${uid('hook')}`;
    const res = await h.t.http
      .post(`/admin/v1/projects/${h.fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(hookPath), env: 'sandbox' });
    expect(res.status).toBe(201);
  });
  afterAll(async () => {
    await receiver.close();
  });

  const sk = () => keyHeaders(h.fx, h.fx.keys.skTest);
  const setGrace = async (gracePeriodDays?: number) =>
    h.t.http
      .put(`/admin/v1/projects/${h.fx.projectId}/rails/card_payments`)
      .set(operatorAuth())
      .send({ accountId: 'acct_test_1', ...(gracePeriodDays === undefined ? {} : { gracePeriodDays }) });
  const subscriptionsOf = async (customerId: string) => {
    const res = await h.t.http.get(`/v1/server/customers/${customerId}/subscriptions`).set(sk());
    expect(res.status).toBe(200);
    return res.body.data as any[];
  };
  const entitlementOf = async (customerId: string, key = 'pro') => {
    const res = await h.t.http.get(`/v1/entitlements`).query({ customerId }).set(sk());
    return (res.body.data as any[]).find((e) => e.key === key) ?? null;
  };
  const revenue = async () => {
    const res = await h.t.http.get('/v1/revenue').set(sk());
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const drain = () => h.t.app.get(WebhookDispatcher).drain();
  const eventsOf = async (customerId: string, type?: string) => {
    await drain();
    return receiver
      .of(hookPath)
      .map((r) => r.json)
      .filter((e) => e.data.serviceCustomerId === customerId && (!type || e.type === type));
  };

  type SubOptions = LifecycleSubscriptionOptions & { id: string; customer: string };
  /** A subscription object as the processor sends it (current API: the period on the items). */
  const cardSub = (o: SubOptions) => lifecycleCardSubscription(o, o, uid);
  const invoice = (sub: { id: string; customer: string }, o: { paid?: number; charge?: string; periodStart?: number } = {}) => ({
    id: uid('in'),
    object: 'invoice',
    customer: sub.customer,
    subscription: sub.id,
    amount_paid: o.paid ?? 0,
    currency: 'usd',
    charge: o.charge ?? null,
    payment_intent: null,
    status_transitions: { paid_at: o.paid ? now() : null },
    lines: { data: [{ period: { start: o.periodStart ?? now() } }] },
  });
  const started = async (o: Omit<SubOptions, 'id' | 'customer'>) => {
    const base = { id: uid('sub'), customer: uid('cus') };
    const res = await send(event('customer.subscription.created', cardSub({ ...base, ...o })));
    expect(res.body.decision).toBe('applied');
    return { ...base, customerId: res.body.serviceCustomerId as string };
  };

  it('PUT rails/card_payments: gracePeriodDays is an integer 0 to 30, else 400 invalid_param_value', async () => {
    for (const bad of [-1, 31, 1.5, '3', true]) {
      const res = await h.t.http
        .put(`/admin/v1/projects/${h.fx.projectId}/rails/card_payments`)
        .set(operatorAuth())
        .send({ accountId: 'acct_test_1', gracePeriodDays: bad });
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toContain('gracePeriodDays');
    }
    const ok = await setGrace(30);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual(expect.objectContaining({ rail: 'card_payments', gracePeriodDays: 30 }));
    expect((await setGrace()).body.gracePeriodDays).toBeUndefined();
  });

  it('trial → conversion: trialing until trial_end at price 0, outside MRR and paying; then active, renewed with isTrialConversion', async () => {
    const before = await revenue();
    const t0 = now();
    const trialEnd = t0 + 7 * DAY;
    const sub = await started({ status: 'trialing', start: t0, end: trialEnd, trialEnd });
    const [trial] = await subscriptionsOf(sub.customerId);
    expect(trial).toEqual(
      expect.objectContaining({
        id: sub.id,
        state: 'trialing',
        periodType: 'trial',
        isActive: true,
        willRenew: true,
        accessEndsAt: trialEnd,
        currentPeriodEndsAt: trialEnd,
        price: { amountMicros: 0, currency: 'USD' },
        storeEnvironment: 'sandbox',
      }),
    );
    expect(await entitlementOf(sub.customerId)).toEqual(expect.objectContaining({ isActive: true, validUntil: trialEnd }));
    const during = await revenue();
    expect(during.mrrCents).toBe(before.mrrCents);
    expect(during.payingCustomers).toBe(before.payingCustomers);
    expect(during.current.activeTrials).toBe(before.current.activeTrials + 1);
    const [start] = await eventsOf(sub.customerId, 'subscription.started');
    expect(start.data).toEqual(
      expect.objectContaining({
        periodType: 'trial',
        isTrialStart: true,
        subscriptionId: sub.id,
        state: 'trialing',
        validUntil: trialEnd,
        priceMicros: 0,
        auditEventId: expect.stringMatching(/^rail_evt_/),
      }),
    );
    expect(start.data.subscription).toEqual(expect.objectContaining({ id: sub.id, state: 'trialing' }));

    const conversion = event('customer.subscription.updated', cardSub({ ...sub, status: 'active', start: trialEnd, end: trialEnd + 30 * DAY, trialEnd }), {
      created: t0 + 10,
    });
    const converted = await send(conversion);
    expect(converted.body.decision).toBe('applied');
    const [paid] = await subscriptionsOf(sub.customerId);
    expect(paid).toEqual(
      expect.objectContaining({
        state: 'active',
        periodType: 'normal',
        price: { amountMicros: 9_990_000, currency: 'USD' },
        accessEndsAt: trialEnd + 30 * DAY,
      }),
    );
    const after = await revenue();
    expect(after.mrrCents).toBe(before.mrrCents + 999);
    expect(after.payingCustomers).toBe(before.payingCustomers + 1);
    expect(after.current.activeTrials).toBe(before.current.activeTrials);
    const [renewed] = await eventsOf(sub.customerId, 'subscription.renewed');
    expect(renewed.data).toEqual(
      expect.objectContaining({
        isTrialConversion: true,
        railEventId: conversion.id,
        auditEventId: converted.body.auditEventId,
        priceMicros: 9_990_000,
        currency: 'USD',
        willRenew: true,
      }),
    );
    expect(renewed.data.subscription).toEqual(expect.objectContaining({ state: 'active', periodType: 'normal' }));
  });

  it('pause → resume: paused keeps access until the paid period ends, leaves MRR; resumed comes back', async () => {
    const t0 = now();
    const sub = await started({ start: t0, end: t0 + 30 * DAY });
    const before = await revenue();
    const paused = await send(
      event('customer.subscription.updated', cardSub({ ...sub, start: t0, end: t0 + 30 * DAY, pauseResumesAt: t0 + 60 * DAY }), { created: t0 + 5 }),
    );
    expect(paused.body).toEqual(expect.objectContaining({ decision: 'applied' }));
    const [object] = await subscriptionsOf(sub.customerId);
    expect(object).toEqual(
      expect.objectContaining({ state: 'paused', willRenew: false, pausedAt: t0 + 5, autoResumeAt: t0 + 60 * DAY, accessEndsAt: t0 + 30 * DAY }),
    );
    expect(await entitlementOf(sub.customerId)).toEqual(expect.objectContaining({ isActive: true, validUntil: t0 + 30 * DAY }));
    expect((await revenue()).mrrCents).toBe(before.mrrCents - 999);
    expect((await eventsOf(sub.customerId, 'subscription.paused'))[0].data).toEqual(expect.objectContaining({ autoResumeAt: t0 + 60 * DAY }));

    const resumed = await send(event('customer.subscription.updated', cardSub({ ...sub, start: t0, end: t0 + 30 * DAY }), { created: t0 + 6 }));
    expect(resumed.body.decision).toBe('applied');
    expect((await subscriptionsOf(sub.customerId))[0]).toEqual(expect.objectContaining({ state: 'active', willRenew: true, pausedAt: null }));
    expect(await eventsOf(sub.customerId, 'subscription.resumed')).toHaveLength(1);
    expect((await revenue()).mrrCents).toBe(before.mrrCents);
  });

  it('refund → net cash: invoice.paid is a payment, charge.refunded the difference of amount_refunded, to the cent', async () => {
    const t0 = now();
    const sub = await started({ start: t0, end: t0 + 30 * DAY });
    const before = await revenue();
    const charge = uid('ch');
    const paid = await send(event('invoice.paid', invoice(sub, { paid: 999, charge })));
    expect(paid.body).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: sub.customerId }));
    const refund = (refunded: number, previous: number) => {
      const body = event(
        'charge.refunded',
        { id: charge, object: 'charge', customer: sub.customer, amount_refunded: refunded, currency: 'usd', payment_intent: null },
        { created: now() },
      );
      return { ...body, data: { ...body.data, previous_attributes: { amount_refunded: previous } } };
    };
    const first = refund(300, 0);
    expect((await send(first)).body.decision).toBe('applied');
    const second = refund(500, 300);
    expect((await send(second)).body.decision).toBe('applied');
    // A re-sent event is answered as before and counts nothing again.
    expect((await send(second)).body.duplicate).toBe(true);
    const after = await revenue();
    expect(after.recognisedCashThisMonthCents - before.recognisedCashThisMonthCents).toBe(999);
    expect(after.refundsCents - before.refundsCents).toBe(500);
    expect(after.netCashCents - before.netCashCents).toBe(499);
    expect(after.current.netCashCents).toBe(after.netCashCents);
    // A partial refund leaves access alone.
    expect((await subscriptionsOf(sub.customerId))[0]).toEqual(expect.objectContaining({ state: 'active', isActive: true, refundedAt: expect.any(Number) }));
    const refunded = await eventsOf(sub.customerId, 'subscription.refunded');
    expect(refunded.map((e) => [e.data.reason, e.data.amountMicros, e.data.currency])).toEqual([
      ['refund', 3_000_000, 'USD'],
      ['refund', 2_000_000, 'USD'],
    ]);
  });

  it('chargeback → won: refunded at once with no access, in the ledger; a won dispute restores both', async () => {
    const t0 = now();
    const sub = await started({ start: t0, end: t0 + 30 * DAY });
    const charge = uid('ch');
    expect((await send(event('invoice.paid', invoice(sub, { paid: 999, charge })))).body.decision).toBe('applied');
    const before = await revenue();
    const dispute = { id: uid('dp'), object: 'dispute', amount: 999, currency: 'usd', charge, payment_intent: null, status: 'needs_response' };
    const created = await send(event('charge.dispute.created', dispute, { created: now() + 1 }));
    expect(created.body).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: sub.customerId }));
    expect((await subscriptionsOf(sub.customerId))[0]).toEqual(expect.objectContaining({ state: 'refunded', isActive: false, willRenew: false }));
    expect(await entitlementOf(sub.customerId)).toBeNull();
    const charged = await revenue();
    expect(charged.refundsCents - before.refundsCents).toBe(999);
    expect(charged.mrrCents).toBe(before.mrrCents - 999);
    expect((await eventsOf(sub.customerId, 'subscription.refunded'))[0].data).toEqual(
      expect.objectContaining({ reason: 'chargeback', amountMicros: 9_990_000, currency: 'USD' }),
    );

    const won = await send(event('charge.dispute.closed', { ...dispute, status: 'won' }, { created: now() + 2 }));
    expect(won.body).toEqual(expect.objectContaining({ decision: 'applied' }));
    expect((await subscriptionsOf(sub.customerId))[0]).toEqual(expect.objectContaining({ state: 'active', isActive: true }));
    expect(await entitlementOf(sub.customerId)).toEqual(expect.objectContaining({ isActive: true, validUntil: t0 + 30 * DAY }));
    const after = await revenue();
    expect(after.refundsCents).toBe(before.refundsCents);
    expect(after.mrrCents).toBe(before.mrrCents);
    expect(await eventsOf(sub.customerId, 'subscription.refund_reversed')).toHaveLength(1);
    // customer.entitlements.updated says why: the chargeback ended the key, the won dispute restored it.
    const causes = (await eventsOf(sub.customerId, 'customer.entitlements.updated'))
      .sort((a, b) => a.data.sequence - b.data.sequence)
      .map((e) => [...new Set(e.data.changes.map((c: { change: string; cause: string }) => `${c.change}/${c.cause}`))]);
    expect(causes).toEqual([['activated/purchase'], ['deactivated/chargeback'], ['activated/refund_reversed']]);
    // A lost dispute changes nothing more.
    expect((await send(event('charge.dispute.closed', { ...dispute, id: uid('dp'), status: 'lost' }))).body.decision).toBe('no_op');
  });

  it('a dispute of no known payment or customer is no_op; an unknown charge refund too', async () => {
    const dispute = { id: uid('dp'), object: 'dispute', amount: 500, currency: 'usd', charge: uid('ch'), status: 'needs_response' };
    expect((await send(event('charge.dispute.created', dispute))).body.decision).toBe('no_op');
    const refund = { id: uid('ch'), object: 'charge', customer: uid('cus'), amount_refunded: 100, currency: 'usd' };
    expect((await send(event('charge.refunded', refund))).body.decision).toBe('no_op');
  });

  it('past_due without grace: no access after the unpaid period starts; invoice.paid recovers it', async () => {
    expect((await setGrace(0)).status).toBe(200);
    const t0 = now();
    const before = await revenue();
    // The paid period ends now: it no longer counts in MRR.
    const sub = await started({ start: t0 - 30 * DAY, end: t0 });
    // The renewal at t0 fails: the processor opens the next period and marks the subscription past_due.
    const failed = await send(event('invoice.payment_failed', invoice(sub, { periodStart: t0 }), { created: t0 + 1 }));
    expect(failed.body.decision).toBe('applied');
    const due = await send(event('customer.subscription.updated', cardSub({ ...sub, status: 'past_due', start: t0, end: t0 + 30 * DAY }), { created: t0 + 2 }));
    // The period moved to the unpaid one: the object changes, the billing issue stays one episode.
    expect(due.body.decision).toBe('applied');
    const [retry] = await subscriptionsOf(sub.customerId);
    expect(retry).toEqual(
      expect.objectContaining({ state: 'in_billing_retry', isActive: false, billingIssueDetectedAt: t0 + 1, accessEndsAt: t0, gracePeriodEndsAt: null }),
    );
    expect(await entitlementOf(sub.customerId)).toBeNull();
    expect((await revenue()).mrrCents).toBe(before.mrrCents);
    const issues = await eventsOf(sub.customerId, 'subscription.billing_issue');
    expect(issues).toHaveLength(1);
    expect(issues[0].data).toEqual(expect.objectContaining({ gracePeriodEndsAt: null }));

    const recovered = await send(event('invoice.paid', invoice(sub, { paid: 999, charge: uid('ch') }), { created: t0 + 3 }));
    expect(recovered.body.decision).toBe('applied');
    const [active] = await subscriptionsOf(sub.customerId);
    expect(active).toEqual(expect.objectContaining({ state: 'active', isActive: true, billingIssueDetectedAt: null, accessEndsAt: t0 + 30 * DAY }));
    expect(await entitlementOf(sub.customerId)).toEqual(expect.objectContaining({ isActive: true, validUntil: t0 + 30 * DAY }));
    const [recovery] = await eventsOf(sub.customerId, 'subscription.recovered');
    expect(recovery.data).toEqual(expect.objectContaining({ billingIssueDetectedAt: t0 + 1 }));
    const after = await revenue();
    expect(after.mrrCents).toBe(before.mrrCents + 999);
    expect(after.recognisedCashThisMonthCents).toBe(before.recognisedCashThisMonthCents + 999);
  });

  it('past_due with 3 grace days: access until the period start + 3 days, then none; unpaid expires it (billing_error)', async () => {
    expect((await setGrace(3)).status).toBe(200);
    const t0 = now();
    const sub = await started({ start: t0 - 30 * DAY, end: t0 });
    const due = await send(event('customer.subscription.updated', cardSub({ ...sub, status: 'past_due', start: t0, end: t0 + 30 * DAY }), { created: t0 + 1 }));
    expect(due.body.decision).toBe('applied');
    const [grace] = await subscriptionsOf(sub.customerId);
    expect(grace).toEqual(expect.objectContaining({ state: 'in_grace_period', isActive: true, gracePeriodEndsAt: t0 + 3 * DAY, accessEndsAt: t0 + 3 * DAY }));
    expect(await entitlementOf(sub.customerId)).toEqual(expect.objectContaining({ isActive: true, validUntil: t0 + 3 * DAY }));
    expect((await eventsOf(sub.customerId, 'subscription.billing_issue'))[0].data).toEqual(expect.objectContaining({ gracePeriodEndsAt: t0 + 3 * DAY }));

    h.t.clock.advance(3 * DAY + 1);
    expect(await entitlementOf(sub.customerId)).toBeNull();
    expect((await subscriptionsOf(sub.customerId))[0]).toEqual(expect.objectContaining({ isActive: false }));
    const unpaid = await send(event('customer.subscription.updated', cardSub({ ...sub, status: 'unpaid', start: t0, end: t0 + 30 * DAY })));
    expect(unpaid.body.decision).toBe('applied');
    expect((await subscriptionsOf(sub.customerId))[0]).toEqual(
      expect.objectContaining({ state: 'expired', expirationReason: 'billing_error', isActive: false }),
    );
    expect((await eventsOf(sub.customerId, 'subscription.expired'))[0].data).toEqual(expect.objectContaining({ expirationReason: 'billing_error' }));
    expect((await setGrace()).status).toBe(200);
  });
});
