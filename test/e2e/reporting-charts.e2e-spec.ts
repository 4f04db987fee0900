import { type LifecycleSubscriptionOptions, lifecycleCardSubscription } from '../support/card-events.js';
import { randomUUID } from 'node:crypto';
import { createProjectWithApp, keyHeaders, setRateLimits } from '../support/fixtures.js';
import { operatorAuth } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';
import { bearer, expectNamedError, secretKeyWithScopes } from '../support/read-api.js';

/**
 * `GET /v1/charts/{chart}` through HTTP: signed card notifications feed the ledger, whose
 * per-day facts the charts read per day, week and month, by rail and product; null before the
 * first fact and in the future, 0 where measured; a late payment lands in its own period.
 */
describe('reporting: GET /v1/charts/{chart}', () => {
  const h = cardWebhookHarness();
  const { now, event, send } = h;
  const DAY = 86_400;

  const priced = (items: Array<{ product: string; amount: number }>, o: { id?: string; customer?: string; status?: string } = {}) => ({
    id: o.id ?? uid('sub'),
    object: 'subscription',
    customer: o.customer ?? uid('cus'),
    status: o.status ?? 'active',
    cancel_at_period_end: false,
    metadata: {},
    items: {
      object: 'list',
      data: items.map((item) => ({
        id: uid('si'),
        object: 'subscription_item',
        current_period_end: now() + 30 * DAY,
        quantity: 1,
        price: { id: uid('price'), product: item.product, unit_amount: item.amount, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } },
      })),
    },
  });
  const invoice = (customer: string, subscription: string, amount: number, paidAt: number) => ({
    id: uid('in'),
    object: 'invoice',
    customer,
    amount_paid: amount,
    currency: 'usd',
    subscription,
    status_transitions: { paid_at: paidAt },
  });
  const day = (offsetDays = 0) => new Date((now() + offsetDays * DAY) * 1000).toISOString().slice(0, 10);
  const chart = (name: string, query: Record<string, string> = {}, key?: string) =>
    h.t.http
      .get(`/v1/charts/${name}`)
      .query(query)
      .set(keyHeaders(h.fx, key ?? h.fx.keys.skTest));
  const data = async (name: string, query: Record<string, string> = {}) => {
    const res = await chart(name, query);
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const point = (d: { series: Array<{ period: string }> }, period: string) => d.series.find((p) => p.period === period) as any;

  let alice: ReturnType<typeof priced>;

  it('a rail connected today: today is measured with zeros, the days before are null; the envelope of the read API', async () => {
    const res = await chart('mrr');
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.body).toEqual({
      object: 'chart',
      data: { chart: 'mrr', currency: 'USD', granularity: 'day', segment: 'none', series: expect.any(Array), summary: { mrrCents: 0, netMovementCents: 0 } },
      meta: {
        project: h.fx.projectId,
        env: 'sandbox',
        generatedAt: expect.any(Number),
        coverage: { revenue: { state: 'measured', since: expect.any(Number) } },
      },
    });
    const series = res.body.data.series;
    expect(series).toHaveLength(30);
    expect(series[29]).toEqual({
      period: day(),
      values: { mrrCents: 0, newCents: 0, expansionCents: 0, contractionCents: 0, churnedCents: 0, reactivationCents: 0 },
    });
    expect(series[0]).toEqual({ period: day(-29), values: expect.objectContaining({ mrrCents: null, newCents: null }) });
  });

  it('a project without a rail or facts: every figure null, revenue not_instrumented', async () => {
    const bare = await createProjectWithApp(h.t);
    const res = await h.t.http.get('/v1/charts/revenue').query({ granularity: 'week' }).set(keyHeaders(bare, bare.keys.skTest));
    expect(res.status).toBe(200);
    expect(res.body.meta.coverage).toEqual({ revenue: { state: 'not_instrumented', since: null } });
    for (const p of res.body.data.series) expect(p.values).toEqual({ grossCents: null, refundsCents: null, netCents: null, transactions: null });
    expect(res.body.data.summary).toEqual({ grossCents: null, refundsCents: null, netCents: null, transactions: null });
  });

  it('new subscriptions are new MRR of their day, split by rail and by product', async () => {
    alice = priced([{ product: 'prod_pro', amount: 2000 }]);
    expect((await send(event('customer.subscription.created', alice))).body.decision).toBe('applied');
    expect((await send(event('customer.subscription.created', priced([{ product: 'prod_basic', amount: 500 }])))).body.decision).toBe('applied');

    const total = await data('mrr');
    expect(point(total, day()).values).toEqual(expect.objectContaining({ mrrCents: 2500, newCents: 2500, churnedCents: 0 }));
    expect(total.summary).toEqual({ mrrCents: 2500, netMovementCents: 2500 });

    const byRail = await data('mrr', { segment: 'rail' });
    expect(byRail.segment).toBe('rail');
    expect(point(byRail, day()).segments).toEqual({
      ios_store: expect.objectContaining({ mrrCents: 0 }),
      card_payments: expect.objectContaining({ mrrCents: 2500, newCents: 2500 }),
      android_store: expect.objectContaining({ mrrCents: 0 }),
    });
    // Segment values are null where the period is, too.
    expect(point(byRail, day(-5)).segments.card_payments.mrrCents).toBeNull();
    const byProduct = await data('mrr', { segment: 'product' });
    expect(point(byProduct, day()).segments).toEqual({
      prod_basic: expect.objectContaining({ mrrCents: 500 }),
      prod_pro: expect.objectContaining({ mrrCents: 2000 }),
    });

    const active = await data('active_subscriptions');
    expect(point(active, day()).values).toEqual({ active: 2, trialing: 0, inGracePeriod: 0, inBillingRetry: 0, paused: 0 });
    expect(point(active, day(-1)).values.active).toBeNull();
  });

  it('payments per week and month by their paid day; a late payment corrects its own, earlier period', async () => {
    expect((await send(event('invoice.paid', invoice(alice.customer, alice.id, 2000, now())))).status).toBe(200);
    const week = await data('revenue', { granularity: 'week', from: day(-13), to: day() });
    const thisWeek = week.series[week.series.length - 1];
    expect(thisWeek.values).toEqual({ grossCents: 2000, refundsCents: 0, netCents: 2000, transactions: 1 });
    expect(week.summary).toEqual({ grossCents: 2000, refundsCents: 0, netCents: 2000, transactions: 1 });
    // Weeks are named by their Monday.
    for (const p of week.series) expect(new Date(`${p.period}T00:00:00Z`).getUTCDay()).toBe(1);

    // A payment made 40 days ago arrives now: its month gains it, the current one does not.
    const lateAt = now() - 40 * DAY;
    expect((await send(event('invoice.paid', invoice(alice.customer, alice.id, 2000, lateAt)))).status).toBe(200);
    const month = await data('revenue', { granularity: 'month', from: day(-60), to: day() });
    const lateMonth = `${day(-40).slice(0, 7)}-01`;
    const thisMonth = `${day().slice(0, 7)}-01`;
    expect(point(month, lateMonth).values).toEqual(
      expect.objectContaining({ grossCents: 2000 + (lateMonth === thisMonth ? 2000 : 0), transactions: lateMonth === thisMonth ? 2 : 1 }),
    );
    expect(point(month, thisMonth).values.grossCents).toBe(lateMonth === thisMonth ? 4000 : 2000);
    expect(month.summary.grossCents).toBe(4000);
    const byProduct = await data('revenue', { segment: 'product', granularity: 'month', from: day(-60), to: day() });
    expect(point(byProduct, thisMonth).segments.prod_pro.grossCents).toBeGreaterThan(0);

    // The customer's first payment moved 40 days back: it first paid before it was created.
    const cohorts = await data('ltv_cohorts', { from: day(-60), to: day() });
    expect(cohorts.granularity).toBe('month');
    expect(point(cohorts, lateMonth).values.m0).toBe(lateMonth === thisMonth ? 4000 : 2000);
    const refunds = await data('refunds', { from: day(-6) });
    expect(point(refunds, day()).values).toEqual({ refunds: 0, refundRate: 0, refundsCents: 0 });
  });

  it('an upgrade is expansion, a cancellation churn; churn rates from the start of the period', async () => {
    alice = { ...alice, items: { ...alice.items, data: alice.items.data.map((item) => ({ ...item, price: { ...item.price, unit_amount: 3000 } })) } };
    // A price change alone grants nothing new (the rail's decision is no_op) but moves MRR.
    expect((await send(event('customer.subscription.updated', alice))).status).toBe(200);
    let today = point(await data('mrr'), day()).values;
    expect(today).toEqual(expect.objectContaining({ mrrCents: 3500, newCents: 2500, expansionCents: 1000 }));

    expect((await h.t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: DAY })).status).toBe(200);
    expect((await send(event('customer.subscription.deleted', { ...alice, status: 'canceled' }))).body.decision).toBe('applied');
    const mrr = await data('mrr', { from: day(-1) });
    expect(mrr.series.map((p: any) => p.values.mrrCents)).toEqual([3500, 500]);
    today = mrr.series[1].values;
    expect(today).toEqual(expect.objectContaining({ churnedCents: 3000, newCents: 0 }));
    expect(mrr.summary).toEqual({ mrrCents: 500, netMovementCents: 3500 - 3000 });

    const churn = await data('churn', { from: day(-1) });
    expect(churn.series[1].values).toEqual({ churnedSubscriptions: 1, subscriberChurnRate: 0.5, mrrChurnRate: 3000 / 3500 });
    expect(point(await data('active_subscriptions', { from: day(-1) }), day()).values.active).toBe(1);
    const trials = await data('trials', { from: day(-1) });
    // No trial started or ended: 0, and no rate (nothing ended).
    expect(trials.series[1].values).toEqual({ started: 0, converted: 0, conversionRate: null });
  });

  it('new customers per period, first payments and conversion within the period', async () => {
    const d = await data('new_customers', { granularity: 'month', from: day(-60) });
    const thisMonth = `${day().slice(0, 7)}-01`;
    expect(point(d, thisMonth).values.newCustomers).toBeGreaterThanOrEqual(2);
    expect(d.summary.newPaying).toBe(1);
    expect(d.currency).toBeUndefined();
    // Measured days without a new customer are 0; days to come are null.
    const future = await data('new_customers', { from: day(-2), to: day(3) });
    expect(future.series.map((p: any) => p.values.newCustomers)).toEqual([0, d.summary.newCustomers, 0, null, null, null]);
  });

  it('events, errors and distinct active customers per period; null before the first event', async () => {
    await setRateLimits(h.t, h.fx.projectId, { events: { sustained: 10_000, burst: 10_000 } });
    const at = h.t.clock.nowMs();
    const events = [
      { name: 'app.opened', eventId: `ev_${randomUUID()}`, timestamp: at, anonymousId: 'anon_charts' },
      { name: 'app.opened', eventId: `ev_${randomUUID()}`, timestamp: at, anonymousId: 'anon_charts' },
      {
        name: 'error.unhandled',
        eventId: `err_${randomUUID()}`,
        timestamp: at,
        level: 'error',
        anonymousId: 'anon_charts',
        properties: { fingerprint: 'cafebabe', message: 'boom', errorType: 'TypeError' },
      },
    ];
    const res = await h.t.http.post('/v1/events').set(keyHeaders(h.fx, h.fx.keys.skTest)).send({ events });
    expect(res.status).toBe(202);
    // A delivery sent again counts once.
    expect((await h.t.http.post('/v1/events').set(keyHeaders(h.fx, h.fx.keys.skTest)).send({ events })).status).toBe(202);
    const d = await data('events', { from: day(-2) });
    expect(d.series[0].values).toEqual({ events: null, errors: null, uniqueUsers: null });
    expect(point(d, day()).values).toEqual(expect.objectContaining({ events: 3, errors: 1 }));
    expect(d.summary).toEqual(expect.objectContaining({ events: 3, errors: 1 }));
    const week = await data('events', { granularity: 'week', from: day(-2) });
    // The device is not resolved to a customer yet: no active customer this week (the week's count: reporting-chart-active-customers).
    expect(week.series[week.series.length - 1].values).toEqual({ events: 3, errors: 1, uniqueUsers: 0 });
  });

  it('ranges: at most 731 days, from ≤ to, real dates; parameters named; segments only where they split', async () => {
    const full = await chart('mrr', { from: day(-730), to: day() });
    expect(full.status).toBe(200);
    expect(full.body.data.series).toHaveLength(731);
    expectNamedError(await chart('mrr', { from: day(-731), to: day() }), 400, 'invalid_param_value', /from/);
    expectNamedError(await chart('mrr', { from: day(1), to: day() }), 400, 'invalid_param_value', /from/);
    expectNamedError(await chart('mrr', { to: '2026-02-30' }), 400, 'invalid_param_value', /to/);
    expectNamedError(await chart('mrr', { granularity: 'year' }), 400, 'invalid_param_value', /granularity/);
    expectNamedError(await chart('mrr', { segment: 'country' }), 400, 'invalid_param_value', /segment/);
    expectNamedError(await chart('events', { segment: 'rail' }), 400, 'invalid_param_value', /segment/);
    expectNamedError(await chart('nope'), 404, 'resource_missing', /mrr/);
  });

  it('keys and scopes: revenue:read for money charts, reporting:aggregate for the others; publishable 401; workspace keys', async () => {
    expectError(await chart('mrr', {}, h.fx.keys.pubTest), 401, 'invalid_api_key');
    const other = await createProjectWithApp(h.t);
    const aggregate = await secretKeyWithScopes(h.t, other.keyIds.skLive, ['reporting:aggregate']);
    const revenue = await secretKeyWithScopes(h.t, other.keyIds.skTest, ['revenue:read']);
    for (const name of ['mrr', 'revenue', 'refunds', 'ltv_cohorts']) {
      expectNamedError(await h.t.http.get(`/v1/charts/${name}`).set(bearer(aggregate)), 403, 'insufficient_scope', /revenue:read/);
      expect((await h.t.http.get(`/v1/charts/${name}`).set(bearer(revenue))).status).toBe(200);
    }
    for (const name of ['active_subscriptions', 'trials', 'churn', 'new_customers', 'events']) {
      expectNamedError(await h.t.http.get(`/v1/charts/${name}`).set(bearer(revenue)), 403, 'insufficient_scope', /reporting:aggregate/);
      expect((await h.t.http.get(`/v1/charts/${name}`).set(bearer(aggregate))).status).toBe(200);
    }
    const ws = await h.t.http.post('/admin/v1/workspaces').set(operatorAuth()).send({ name: 'Charts' });
    await h.t.http.post(`/admin/v1/workspaces/${ws.body.id}/projects/${h.fx.projectId}`).set(operatorAuth());
    const wk = (await h.t.http.post(`/admin/v1/workspaces/${ws.body.id}/keys`).set(operatorAuth()).send({})).body.key;
    const viaWorkspace = await h.t.http.get('/v1/charts/mrr').query({ project: h.fx.projectId, env: 'sandbox' }).set(bearer(wk));
    expect(viaWorkspace.status).toBe(200);
    expect(viaWorkspace.body.data.summary.mrrCents).toBe(500);
    expectError(await h.t.http.get('/v1/charts/mrr').set(bearer(wk)), 400, 'missing_required_param');
  });
});

/**
 * The lifecycle's figures through HTTP, from signed card events: trials started, converted and
 * ended; subscriptions in each state at a day's end; refunds, chargebacks and a won dispute's
 * reversal on their own days, to the cent; and the same figures in `/v1/revenue`.
 */
describe('reporting: charts of the subscription lifecycle', () => {
  const h = cardWebhookHarness();
  const { now, event, send } = h;
  const DAY = 86_400;
  const day = (offsetDays = 0) => new Date((now() + offsetDays * DAY) * 1000).toISOString().slice(0, 10);
  const data = async (name: string, query: Record<string, string> = {}) => {
    const res = await h.t.http.get(`/v1/charts/${name}`).query(query).set(keyHeaders(h.fx, h.fx.keys.skTest));
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const point = (d: { series: Array<{ period: string }> }, period: string) => d.series.find((p) => p.period === period) as any;
  const setGrace = (gracePeriodDays: number) =>
    h.t.http.put(`/admin/v1/projects/${h.fx.projectId}/rails/card_payments`).set(operatorAuth()).send({ accountId: 'acct_test_1', gracePeriodDays });

  interface Sub {
    id: string;
    customer: string;
  }
  const cardSub = (s: Sub, o: LifecycleSubscriptionOptions) => lifecycleCardSubscription(s, o, uid);
  const paid = (s: Sub, amount: number, charge: string, paidAt: number) => ({
    id: uid('in'),
    object: 'invoice',
    customer: s.customer,
    subscription: s.id,
    amount_paid: amount,
    currency: 'usd',
    charge,
    payment_intent: null,
    status_transitions: { paid_at: paidAt },
    lines: { data: [{ period: { start: paidAt } }] },
  });
  const applied = async (body: unknown) => {
    const res = await send(body);
    expect(res.status).toBe(200);
    expect(res.body.decision).toBe('applied');
    return res;
  };
  const newSub = (): Sub => ({ id: uid('sub'), customer: uid('cus') });
  const revenue = async () => (await h.t.http.get('/v1/revenue').set(keyHeaders(h.fx, h.fx.keys.skTest))).body.data;

  it('before any lifecycle fact: measured days are 0, rates without a divisor null; a day before the lifecycle existed stays null', async () => {
    const trials = await data('trials', { from: day(-2) });
    expect(point(trials, day()).values).toEqual({ started: 0, converted: 0, conversionRate: null });
    // The rail was connected today: yesterday was not measured.
    expect(point(trials, day(-1)).values).toEqual({ started: null, converted: null, conversionRate: null });
    expect(point(await data('refunds', { from: day(-1) }), day(-1)).values).toEqual({ refunds: null, refundRate: null, refundsCents: null });
    // Every day from here on is measured: the clock moves a day on, so "yesterday" is measured too.
    expect((await h.t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: DAY })).status).toBe(200);
  });

  it('trials: started, converted and ended per day; active trials per rail in /v1/revenue', async () => {
    const t0 = now();
    const a = newSub();
    const b = newSub();
    const c = newSub();
    for (const s of [a, b, c])
      await applied(
        event('customer.subscription.created', cardSub(s, { status: 'trialing', start: t0, end: t0 + 7 * DAY, trialEnd: t0 + 7 * DAY }), { created: t0 }),
      );
    let today = point(await data('trials', { from: day(-1) }), day());
    expect(today.values).toEqual({ started: 3, converted: 0, conversionRate: null });
    expect(point(await data('active_subscriptions', { from: day(-1) }), day()).values).toEqual({
      active: 0,
      trialing: 3,
      inGracePeriod: 0,
      inBillingRetry: 0,
      paused: 0,
    });
    const during = await revenue();
    expect(during.activeTrials).toBe(3);
    expect(during.current.activeTrials).toBe(3);
    expect(during.byRailDetail).toEqual({
      ios_store: { mrrCents: 0, payingCustomers: 0, activeTrials: 0 },
      card_payments: { mrrCents: 0, payingCustomers: 0, activeTrials: 3 },
      android_store: { mrrCents: 0, payingCustomers: 0, activeTrials: 0 },
    });

    // a converts, b is cancelled in its trial: two trials ended, one converted.
    await applied(
      event('customer.subscription.updated', cardSub(a, { start: t0 + 7 * DAY, end: t0 + 37 * DAY, trialEnd: t0 + 7 * DAY }), { created: t0 + 10 }),
    );
    await applied(
      event('customer.subscription.deleted', cardSub(b, { status: 'canceled', start: t0, end: t0 + 7 * DAY, trialEnd: t0 + 7 * DAY }), { created: t0 + 11 }),
    );
    const trials = await data('trials', { from: day(-1) });
    today = point(trials, day());
    expect(today.values).toEqual({ started: 3, converted: 1, conversionRate: 0.5 });
    expect(point(trials, day(-1)).values).toEqual({ started: 0, converted: 0, conversionRate: null });
    expect(trials.summary).toEqual({ started: 3, converted: 1, conversionRate: 0.5 });
    const states = point(await data('active_subscriptions', { from: day(-1) }), day()).values;
    expect(states).toEqual({ active: 1, trialing: 1, inGracePeriod: 0, inBillingRetry: 0, paused: 0 });
    const after = await revenue();
    expect(after.byRailDetail.card_payments).toEqual({ mrrCents: 999, payingCustomers: 1, activeTrials: 1 });
    expect(after.activeTrials).toBe(1);
  });

  it('states at the end of each day: grace period, billing retry, paused, by rail and product', async () => {
    const t0 = now();
    const grace = newSub();
    const retry = newSub();
    const paused = newSub();
    expect((await setGrace(3)).status).toBe(200);
    await applied(
      event('customer.subscription.created', cardSub(grace, { start: t0 - 30 * DAY, end: t0, product: 'prod_basic', amount: 500 }), { created: t0 }),
    );
    await applied(
      event('customer.subscription.updated', cardSub(grace, { status: 'past_due', start: t0, end: t0 + 30 * DAY, product: 'prod_basic', amount: 500 }), {
        created: t0 + 1,
      }),
    );
    expect((await setGrace(0)).status).toBe(200);
    await applied(event('customer.subscription.created', cardSub(retry, { start: t0 - 30 * DAY, end: t0 }), { created: t0 }));
    await applied(event('customer.subscription.updated', cardSub(retry, { status: 'past_due', start: t0, end: t0 + 30 * DAY }), { created: t0 + 2 }));
    await applied(event('customer.subscription.created', cardSub(paused, { start: t0, end: t0 + 30 * DAY }), { created: t0 }));
    await applied(
      event('customer.subscription.updated', cardSub(paused, { start: t0, end: t0 + 30 * DAY, pauseResumesAt: t0 + 60 * DAY }), { created: t0 + 3 }),
    );

    const d = await data('active_subscriptions', { from: day(-1), segment: 'product' });
    expect(point(d, day()).values).toEqual({ active: 1, trialing: 1, inGracePeriod: 1, inBillingRetry: 1, paused: 1 });
    expect(point(d, day()).segments).toEqual({
      prod_basic: { active: 0, trialing: 0, inGracePeriod: 1, inBillingRetry: 0, paused: 0 },
      prod_pro: { active: 1, trialing: 1, inGracePeriod: 0, inBillingRetry: 1, paused: 1 },
    });
    expect(d.summary).toEqual({ active: 1, trialing: 1, inGracePeriod: 1, inBillingRetry: 1, paused: 1 });
    const rails = await data('active_subscriptions', { from: day(-1), segment: 'rail' });
    expect(point(rails, day()).segments.card_payments).toEqual({ active: 1, trialing: 1, inGracePeriod: 1, inBillingRetry: 1, paused: 1 });
    expect(point(rails, day()).segments.ios_store).toEqual({ active: 0, trialing: 0, inGracePeriod: 0, inBillingRetry: 0, paused: 0 });

    // Recovered: out of billing retry into active, that day.
    await applied(event('invoice.paid', paid(retry, 999, uid('ch'), t0 + 4), { created: t0 + 4 }));
    expect(point(await data('active_subscriptions', { from: day(-1) }), day()).values).toEqual({
      active: 2,
      trialing: 1,
      inGracePeriod: 1,
      inBillingRetry: 0,
      paused: 1,
    });
  });

  it('refunds net of reversals, each on its own day, to the cent; a late chargeback corrects its own day', async () => {
    const t0 = now();
    const yesterday = t0 - DAY;
    const refunded = newSub();
    const disputed = newSub();
    await applied(event('customer.subscription.created', cardSub(refunded, { start: t0, end: t0 + 30 * DAY, amount: 1250 }), { created: t0 }));
    const charge = uid('ch');
    await applied(event('invoice.paid', paid(refunded, 1250, charge, t0), { created: t0 }));
    const refund = (amount: number, previous: number) => {
      const body = event(
        'charge.refunded',
        { id: charge, object: 'charge', customer: refunded.customer, amount_refunded: amount, currency: 'usd', payment_intent: null },
        { created: t0 + 5 },
      );
      return { ...body, data: { ...body.data, previous_attributes: { amount_refunded: previous } } };
    };
    await applied(refund(333, 0));

    // Paid yesterday, charged back yesterday (both arrive today), the dispute won today.
    await applied(
      event('customer.subscription.created', cardSub(disputed, { start: yesterday, end: yesterday + 30 * DAY, amount: 2999 }), { created: yesterday }),
    );
    const disputedCharge = uid('ch');
    await applied(event('invoice.paid', paid(disputed, 2999, disputedCharge, yesterday + 60), { created: yesterday + 60 }));
    const dispute = { id: uid('dp'), object: 'dispute', amount: 2999, currency: 'usd', charge: disputedCharge, payment_intent: null, status: 'needs_response' };
    await applied(event('charge.dispute.created', dispute, { created: yesterday + 120 }));
    let d = await data('refunds', { from: day(-1) });
    expect(point(d, day(-1)).values).toEqual({ refunds: 1, refundRate: 1, refundsCents: 2999 });
    expect(point(d, day()).values).toEqual({ refunds: 1, refundRate: 0.5, refundsCents: 333 });
    await applied(event('charge.dispute.closed', { ...dispute, status: 'won' }, { created: t0 + 6 }));

    d = await data('refunds', { from: day(-1) });
    expect(point(d, day(-1)).values).toEqual({ refunds: 1, refundRate: 1, refundsCents: 2999 });
    // Today: one refund of 3.33 and the reversal of yesterday's 29.99 chargeback.
    expect(point(d, day()).values).toEqual({ refunds: 0, refundRate: 0, refundsCents: 333 - 2999 });
    // Over both days: one refund of three payments, 3.33.
    expect(d.summary).toEqual({ refunds: 1, refundRate: 1 / 3, refundsCents: 333 });
    expect(d.currency).toBe('USD');
    const byProduct = await data('refunds', { from: day(-1), segment: 'product' });
    expect(point(byProduct, day()).segments.prod_pro).toEqual({ refunds: 0, refundRate: 0, refundsCents: 333 - 2999 });

    const rev = await data('revenue', { from: day(-1) });
    expect(point(rev, day(-1)).values).toEqual({ grossCents: 2999, refundsCents: 2999, netCents: 0, transactions: 1 });
    expect(point(rev, day()).values).toEqual({ grossCents: 999 + 1250, refundsCents: 333 - 2999, netCents: 999 + 1250 - 333 + 2999, transactions: 2 });
    expect(rev.summary).toEqual({ grossCents: 2999 + 999 + 1250, refundsCents: 333, netCents: 2999 + 999 + 1250 - 333, transactions: 3 });

    // The month adds the days up; /v1/revenue counts the same net refunds this month.
    const month = await data('refunds', { granularity: 'month', from: day(-1) });
    const months = new Set([day(-1).slice(0, 7), day().slice(0, 7)]);
    if (months.size === 1) expect(month.series.at(-1).values).toEqual({ refunds: 1, refundRate: 1 / 3, refundsCents: 333 });
    // The first-payment cohort's cash is net: 9.99, 12.50 less 3.33, and 29.99 charged back and given back, over three customers.
    if (months.size === 1)
      expect(point(await data('ltv_cohorts', { from: day(-1) }), `${day().slice(0, 7)}-01`).values.m0).toBe(Math.round((999 + 1250 - 333 + 2999) / 3));
    const cash = await revenue();
    expect(cash.refundsCents).toBe(months.size === 1 ? 333 : 333 - 2999);

    // The operator's chart is the public one.
    const operator = await h.t.http
      .get(`/admin/v1/projects/${h.fx.projectId}/charts/refunds`)
      .query({ env: 'sandbox', from: day(-1) })
      .set(operatorAuth());
    expect(operator.body.data).toEqual(d);
  });
});
