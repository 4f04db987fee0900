import { Sql } from '#platform';
import { RevenueLapseJob } from '#reporting';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';
import { createIosRailProject } from '../support/ios-rail.js';
import { type StoreChain, createStoreChain, notificationPayload, signStoreJws, transactionPayload } from '../support/store-signing.js';

/**
 * The revenue ledger through HTTP: signed card and iOS notifications carrying prices produce
 * subscriptions whose monthly prices make up MRR (reporting currency, other currencies listed),
 * the daily series, recognised cash and the averages; the read API's keys, scopes and coverage.
 */
describe('reporting: GET /v1/revenue and /v1/revenue/averages', () => {
  const h = cardWebhookHarness({}, { ownDatabase: true });
  let t: TestApp;
  let fx: ProjectFixture;
  beforeAll(() => {
    ({ t, fx } = h);
  });
  const { now, event, send } = h;

  interface PricedItem {
    product?: string;
    amount: number;
    currency?: string;
    interval?: 'day' | 'week' | 'month' | 'year';
    count?: number;
    quantity?: number;
  }
  const pricedSubscription = (items: PricedItem[], o: { id?: string; customer?: string; status?: string; periodEnd?: number } = {}) => ({
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
        current_period_end: o.periodEnd ?? now() + 30 * 86400,
        quantity: item.quantity ?? 1,
        price: {
          id: uid('price'),
          product: item.product ?? 'prod_pro',
          unit_amount: item.amount,
          currency: item.currency ?? 'usd',
          recurring: { interval: item.interval ?? 'month', interval_count: item.count ?? 1 },
        },
      })),
    },
  });
  const invoice = (customer: string, amount: number, o: { id?: string; subscription?: string | null; currency?: string } = {}) => ({
    id: o.id ?? uid('in'),
    object: 'invoice',
    customer,
    amount_paid: amount,
    currency: o.currency ?? 'usd',
    subscription: o.subscription === undefined ? uid('sub') : o.subscription,
    status_transitions: { paid_at: now() },
  });

  const revenue = (query: Record<string, string | number> = {}, key = fx.keys.skTest) => t.http.get('/v1/revenue').query(query).set(keyHeaders(fx, key));
  const data = async (query: Record<string, string | number> = {}) => {
    const res = await revenue(query);
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const advanceDays = async (days: number) =>
    expect(
      (
        await t.http
          .post('/admin/v1/test-clock/advance')
          .set(operatorAuth())
          .send({ seconds: days * 86400 })
      ).status,
    ).toBe(200);

  // The lapse scan covers every project of the shared database: run it until nothing is due, then read this project's figures.
  const lapse = async () => {
    for (let batch = 0; batch < 50; batch += 1) {
      if ((await t.app.get(Sql).transaction(() => t.app.get(RevenueLapseJob).scanOnce())) === 0) return;
    }
  };

  let usdCustomerCard: string;
  let usdSubscription: ReturnType<typeof pricedSubscription>;

  it('a connected rail without subscriptions is measured with zeros, in the envelope, private no-store', async () => {
    const res = await revenue();
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.body).toEqual({
      object: 'revenue',
      data: expect.objectContaining({ currency: 'USD', mrrCents: 0, payingCustomers: 0, recognisedCashThisMonthCents: 0, otherCurrencies: [] }),
      meta: { project: fx.projectId, env: 'sandbox', generatedAt: expect.any(Number), coverage: { revenue: { state: 'measured', since: expect.any(Number) } } },
    });
    expect(res.body.data.byRail).toEqual({ ios_store: 0, card_payments: 0, android_store: 0 });
    expect(res.body.data.byRailDetail).toEqual({
      ios_store: { mrrCents: 0, payingCustomers: 0, activeTrials: 0 },
      card_payments: { mrrCents: 0, payingCustomers: 0, activeTrials: 0 },
      android_store: { mrrCents: 0, payingCustomers: 0, activeTrials: 0 },
    });
    expect(res.body.data.current).toEqual({ ...res.body.data, current: undefined, series: undefined });
  });

  it('a project without a rail is not_instrumented: figures null, never 0', async () => {
    const bare = await createProjectWithApp(t);
    const res = await t.http.get('/v1/revenue').query({ granularity: 'day', days: 2 }).set(keyHeaders(bare, bare.keys.skTest));
    expect(res.status).toBe(200);
    expect(res.body.meta.coverage).toEqual({ revenue: { state: 'not_instrumented', since: null } });
    expect(res.body.data).toEqual(expect.objectContaining({ mrrCents: null, payingCustomers: null, recognisedCashThisMonthCents: null }));
    expect(res.body.data.byRail).toEqual({ ios_store: null, card_payments: null, android_store: null });
    expect(res.body.data.byRailDetail.card_payments).toEqual({ mrrCents: null, payingCustomers: null, activeTrials: null });
    expect(res.body.data.current.byRail.card_payments).toBeNull();
    expect(res.body.data.series).toEqual([expect.objectContaining({ mrrCents: null }), expect.objectContaining({ mrrCents: null, payingCustomers: null })]);
    const averages = await t.http.get('/v1/revenue/averages').set(keyHeaders(bare, bare.keys.skTest));
    expect(averages.body.data).toEqual(expect.objectContaining({ arpuCents: null, combinedLifetimeValueCents: null, payingCustomers: null }));
  });

  it('card items: price × quantity over the interval, summed per subscription, in MRR by rail', async () => {
    // 10.00 × 2 a month + 120.00 a year = 20.00 + 10.00 a month.
    usdSubscription = pricedSubscription([
      { amount: 1000, quantity: 2 },
      { product: 'prod_basic', amount: 12000, interval: 'year' },
    ]);
    const res = await send(event('customer.subscription.created', usdSubscription));
    expect(res.body.decision).toBe('applied');
    usdCustomerCard = usdSubscription.customer;
    const d = await data();
    expect(d).toEqual(expect.objectContaining({ currency: 'USD', mrrCents: 3000, payingCustomers: 1, otherCurrencies: [] }));
    expect(d.byRail.card_payments).toBe(3000);
    expect(d.byRailDetail.card_payments).toEqual({ mrrCents: 3000, payingCustomers: 1, activeTrials: 0 });
    expect(d.current.byRail).toEqual({ ios_store: 0, card_payments: 3000, android_store: 0 });
    expect(d.current).toEqual(expect.objectContaining({ mrrCents: 3000, payingCustomers: 1 }));
    // The same state again changes nothing; a price change moves MRR.
    await send(event('customer.subscription.updated', usdSubscription));
    expect((await data()).mrrCents).toBe(3000);
  });

  it('another currency is listed apart, never converted; the reporting currency is the operator’s', async () => {
    const eur = pricedSubscription([{ amount: 900, currency: 'eur' }]);
    expect((await send(event('customer.subscription.created', eur))).body.decision).toBe('applied');
    const d = await data();
    expect(d).toEqual(expect.objectContaining({ mrrCents: 3000, payingCustomers: 2, otherCurrencies: [{ currency: 'EUR', mrrCents: 900 }] }));
    expect(d.byRail.card_payments).toBe(3000);
    expect(d.byRailDetail.card_payments).toEqual({ mrrCents: 3000, payingCustomers: 2, activeTrials: 0 });

    const put = await t.http.put(`/admin/v1/projects/${fx.projectId}/reporting`).set(operatorAuth()).send({ currency: 'EUR' });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ object: 'reporting_settings', projectId: fx.projectId, currency: 'EUR' });
    expect(await data()).toEqual(expect.objectContaining({ currency: 'EUR', mrrCents: 900, otherCurrencies: [{ currency: 'USD', mrrCents: 3000 }] }));
    expect((await t.http.put(`/admin/v1/projects/${fx.projectId}/reporting`).set(operatorAuth()).send({ currency: 'USD' })).status).toBe(200);

    const bad = await t.http.put(`/admin/v1/projects/${fx.projectId}/reporting`).set(operatorAuth()).send({ currency: 'usd' });
    expectError(bad, 400, 'invalid_param_value');
    expect(bad.body.error.message).toContain('currency');
    expectError(await t.http.put(`/admin/v1/projects/${fx.projectId}/reporting`).set(operatorAuth()).send({}), 400, 'missing_required_param');
    expectError(await t.http.put('/admin/v1/projects/proj_nope/reporting').set(operatorAuth()).send({ currency: 'USD' }), 404, 'resource_missing');
    expect((await t.http.put(`/admin/v1/projects/${fx.projectId}/reporting`).send({ currency: 'USD' })).status).toBe(401);
  });

  it('recognised cash: each paid invoice once, recurring or one-off, this month', async () => {
    const first = invoice(usdCustomerCard, 3000);
    expect((await send(event('invoice.paid', first))).status).toBe(200);
    // The processor re-sends the same invoice under another event id: counted once.
    expect((await send(event('invoice.paid', first))).status).toBe(200);
    expect((await send(event('invoice.paid', invoice(usdCustomerCard, 500, { subscription: null })))).status).toBe(200);
    // A card customer the service does not know: nothing recognised.
    expect((await send(event('invoice.paid', invoice(uid('cus'), 7000)))).body.decision).toBe('no_op');
    const d = await data();
    expect(d.recognisedCashThisMonthCents).toBe(3500);
    expect(d.recognisedCashThisMonthByShape).toEqual({ recurring: 3000, oneOff: 500 });
  });

  it('averages: ARPU, lifetime value (annualised MRR + one-off cash) and cash to date', async () => {
    const res = await t.http.get('/v1/revenue/averages').set(keyHeaders(fx, fx.keys.skTest));
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.body.object).toBe('revenue_averages');
    expect(res.body.data).toEqual({
      currency: 'USD',
      arpuCents: 3000,
      combinedLifetimeValueCents: 3000 * 12 + 500,
      averageLifetimeValueCents: 3000 * 12 + 500,
      recognisedCashToDateCents: 3500,
      payingCustomers: 2,
    });
  });

  it('the daily series carries each day’s last value forward; an ended subscription leaves MRR', async () => {
    await advanceDays(1);
    const canceled = { ...usdSubscription, status: 'canceled' };
    const ended = await send(event('customer.subscription.deleted', canceled));
    expect(ended.body).toEqual(expect.objectContaining({ decision: 'applied' }));
    const d = await data({ granularity: 'day', days: 4 });
    expect(d.mrrCents).toBe(0);
    expect(d.payingCustomers).toBe(1);
    expect(d.series).toHaveLength(4);
    const [, , yesterday, today] = d.series;
    expect(yesterday).toEqual(expect.objectContaining({ mrrCents: 3000, payingCustomers: 2 }));
    expect(today).toEqual({ date: new Date(t.clock.nowMs()).toISOString().slice(0, 10), mrrCents: 0, payingCustomers: 1, refundsCents: 0 });
    expect(d.series[0]).toEqual(expect.objectContaining({ mrrCents: 0, payingCustomers: 0 }));
    expect((await data()).series).toBeUndefined();
    expectError(await revenue({ granularity: 'week' }), 400, 'invalid_param_value');
    expectError(await revenue({ granularity: 'day', days: 367 }), 400, 'invalid_param_value');
    expectError(await revenue({ days: 0 }), 400, 'invalid_param_value');
  });

  it('keys: publishable 401, no revenue:read 403, another project 403, workspace keys name the project', async () => {
    expectError(await revenue({}, fx.keys.pubTest), 401, 'invalid_api_key');
    expectError(await revenue({ project: 'proj_other' }), 403, 'project_not_allowed');
    const rotated = await t.http
      .post(`/admin/v1/keys/${fx.keyIds.skTest}/rotate`)
      .set(operatorAuth())
      .send({ scopes: ['reporting:aggregate'] });
    expect(rotated.status).toBe(201);
    expectError(await revenue({}, rotated.body.key.key), 403, 'insufficient_scope');

    const ws = await t.http.post('/admin/v1/workspaces').set(operatorAuth()).send({ name: 'Revenue' });
    await t.http.post(`/admin/v1/workspaces/${ws.body.id}/projects/${fx.projectId}`).set(operatorAuth());
    const wk = (await t.http.post(`/admin/v1/workspaces/${ws.body.id}/keys`).set(operatorAuth()).send({})).body.key;
    const viaWorkspace = await t.http
      .get('/v1/revenue')
      .query({ project: fx.projectId, env: 'sandbox' })
      .set({ Authorization: `Bearer ${wk}` });
    expect(viaWorkspace.status).toBe(200);
    expect(viaWorkspace.body.data).toEqual(expect.objectContaining({ mrrCents: 0, payingCustomers: 1 }));
    expect(viaWorkspace.body.meta.project).toBe(fx.projectId);
    expectError(await t.http.get('/v1/revenue').set({ Authorization: `Bearer ${wk}` }), 400, 'missing_required_param');
    const outside = await createProjectWithApp(t);
    expectError(
      await t.http
        .get('/v1/revenue')
        .query({ project: outside.projectId })
        .set({ Authorization: `Bearer ${wk}` }),
      403,
      'project_not_allowed',
    );
  });

  it('the operator overview: ledger figures, active subscriptions by rail, 30 days of MRR; nulls when not measured', async () => {
    const res = await t.http.get(`/admin/v1/projects/${fx.projectId}/overview`).query({ env: 'sandbox' }).set(operatorAuth());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'overview',
      currency: 'USD',
      mrrCents: 0,
      payingCustomers: 1,
      activeSubscriptionsByRail: { ios_store: 0, card_payments: 1, android_store: 0 },
      eventsToday: 0,
      openErrorIssues: null,
      deadJobs: 0,
      mrrSeries: expect.any(Array),
      // Revenue today, this month and last month: no refund, so net is gross.
      revenue: {
        currency: 'USD',
        today: expect.objectContaining({ grossCents: 0, refundsCents: 0, netCents: 0 }),
        thisMonth: expect.objectContaining({ grossCents: 3500, refundsCents: 0, netCents: 3500 }),
        lastMonth: expect.objectContaining({ grossCents: null }),
      },
    });
    expect(res.body.mrrSeries).toHaveLength(30);
    expect(res.body.mrrSeries[28]).toEqual({ date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), mrrCents: 3000 });
    const production = await t.http.get(`/admin/v1/projects/${fx.projectId}/overview`).set(operatorAuth());
    expect(production.body).toEqual(expect.objectContaining({ mrrCents: 0, payingCustomers: 0 }));
    const bare = await createProjectWithApp(t);
    const none = await t.http.get(`/admin/v1/projects/${bare.projectId}/overview`).set(operatorAuth());
    expect(none.body).toEqual(
      expect.objectContaining({
        mrrCents: null,
        payingCustomers: null,
        activeSubscriptionsByRail: { ios_store: null, card_payments: null, android_store: null },
      }),
    );
    expectError(await t.http.get('/admin/v1/projects/proj_nope/overview').set(operatorAuth()), 404, 'resource_missing');
    expectError(await t.http.get(`/admin/v1/projects/${fx.projectId}/overview`).query({ env: 'staging' }).set(operatorAuth()), 400, 'invalid_param_value');
    expect((await t.http.get(`/admin/v1/projects/${fx.projectId}/overview`)).status).toBe(401);
  });

  describe('iOS: the signed transaction’s price (milli-units) and currency', () => {
    const BUNDLE = 'com.example.revenue.ios';
    let chain: StoreChain;
    let ios: ProjectFixture;
    beforeAll(async () => {
      chain = createStoreChain();
      ios = await createIosRailProject(t, BUNDLE, chain.rootPem);
    });
    const notify = (type: string, tx: ReturnType<typeof transactionPayload>) =>
      t.http.post(`/v1/webhooks/ios_store/${ios.projectId}`).send({
        signedPayload: signStoreJws(
          chain,
          notificationPayload({
            notificationType: type,
            signedDate: t.clock.nowMs(),
            bundleId: BUNDLE,
            environment: 'Sandbox',
            signedTransactionInfo: signStoreJws(chain, { ...tx, environment: 'Sandbox' }),
          }),
        ),
      });

    it('a monthly subscription at 9.99 is 999 a month; each renewal is recognised once', async () => {
      const start = t.clock.nowMs();
      const tx = transactionPayload({
        bundleId: BUNDLE,
        productId: 'pro.monthly',
        signedDate: start,
        expiresDate: start + 30 * 86_400_000,
        price: 9990,
        currency: 'USD',
      });
      expect((await notify('SUBSCRIBED', tx)).body.decision).toBe('applied');
      const read = async () => (await t.http.get('/v1/revenue').set(keyHeaders(ios, ios.keys.skTest))).body.data;
      expect(await read()).toEqual(expect.objectContaining({ mrrCents: 999, payingCustomers: 1, recognisedCashThisMonthCents: 999 }));
      expect((await read()).byRail.ios_store).toBe(999);
      expect((await read()).byRailDetail.ios_store).toEqual({ mrrCents: 999, payingCustomers: 1, activeTrials: 0 });
      // A yearly plan at 99.99 (JPY-free: two decimals) adds 833 a month.
      const yearly = transactionPayload({
        bundleId: BUNDLE,
        productId: 'pro.monthly',
        signedDate: start,
        expiresDate: start + 365 * 86_400_000,
        price: 99990,
        currency: 'USD',
      });
      await notify('SUBSCRIBED', yearly);
      expect((await read()).mrrCents).toBe(999 + 833);
      // The same transaction re-sent (another notification) is not counted twice.
      await notify('DID_CHANGE_RENEWAL_STATUS', tx);
      expect((await read()).recognisedCashThisMonthCents).toBe(999 + 9999);
      // Expiry ends the monthly one.
      expect((await notify('EXPIRED', { ...tx, expiresDate: t.clock.nowMs() - 1000 })).body).toEqual(expect.objectContaining({ decision: 'applied' }));
      expect(await read()).toEqual(expect.objectContaining({ mrrCents: 833, payingCustomers: 1 }));
    });
  });

  it('time passing: a subscription whose period ended a day ago without news from its rail stops counting, once', async () => {
    await lapse();
    const before = (await data()).mrrCents;
    const sub = pricedSubscription([{ amount: 700 }], { periodEnd: now() + 3600 });
    expect((await send(event('customer.subscription.created', sub))).body.decision).toBe('applied');
    expect((await data()).mrrCents).toBe(before + 700);
    await advanceDays(1);
    await lapse();
    expect((await data()).mrrCents).toBe(before + 700);
    await advanceDays(1);
    await lapse();
    expect((await data()).mrrCents).toBe(before);
    await lapse();
    expect((await data()).mrrCents).toBe(before);
    // The rail's renewal brings it back.
    expect((await send(event('customer.subscription.updated', { ...sub, items: pricedSubscription([{ amount: 700 }]).items }))).body.decision).toBe('applied');
    expect((await data()).mrrCents).toBe(before + 700);
  });

  it('a renewal at the same price moves the period end the lapse scan reads, and counts nothing twice', async () => {
    await lapse();
    const before = await data();
    const sub = pricedSubscription([{ amount: 1200 }], { periodEnd: now() + 3600 });
    expect((await send(event('customer.subscription.created', sub))).body.decision).toBe('applied');
    const renewed = { ...sub, items: { ...sub.items, data: sub.items.data.map((item) => ({ ...item, current_period_end: now() + 2 * 86400 })) } };
    expect((await send(event('customer.subscription.updated', renewed))).body.decision).toBe('applied');
    expect(await data()).toMatchObject({ mrrCents: before.mrrCents + 1200, payingCustomers: before.payingCustomers + 1 });
    // Past the first period's end and its day of grace: the renewed end governs.
    await advanceDays(1.5);
    await lapse();
    expect((await data()).mrrCents).toBe(before.mrrCents + 1200);
    await advanceDays(2);
    await lapse();
    expect(await data()).toMatchObject({ mrrCents: before.mrrCents, payingCustomers: before.payingCustomers });
  });
});
