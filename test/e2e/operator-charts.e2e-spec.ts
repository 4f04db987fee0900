import { keyHeaders } from '../support/fixtures.js';
import { operatorAuth } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';
import { expectNamedError } from '../support/read-api.js';

/**
 * The console's chart reads through HTTP: `GET /admin/v1/projects/{id}/charts/{chart}` answers
 * what `GET /v1/charts/{chart}` answers for the project and environment, several charts come in
 * one call, and the revenue summary gives today, this month and last month from the same facts.
 */
describe('operator API: charts and revenue summary of a project', () => {
  const h = cardWebhookHarness();
  const { now, event, send } = h;
  const DAY = 86_400;
  const CHARTS = ['mrr', 'revenue', 'active_subscriptions', 'trials', 'churn', 'refunds', 'new_customers', 'ltv_cohorts', 'events'];

  const day = (offsetDays = 0) => new Date((now() + offsetDays * DAY) * 1000).toISOString().slice(0, 10);
  const admin = (path: string, query: Record<string, string> = {}) =>
    h.t.http.get(`/admin/v1/projects/${h.fx.projectId}${path}`).query(query).set(operatorAuth());
  const pub = (chart: string, query: Record<string, string> = {}) => h.t.http.get(`/v1/charts/${chart}`).query(query).set(keyHeaders(h.fx, h.fx.keys.skTest));
  const withoutClock = (body: { meta: Record<string, unknown> }) => ({ ...body, meta: { ...body.meta, generatedAt: 0 } });
  /** The 10th of last month (UTC), noon, in Unix seconds. */
  const lastMonthAt = () => {
    const d = new Date(now() * 1000);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 10, 12) / 1000;
  };

  beforeAll(async () => {
    const sub = {
      id: uid('sub'),
      object: 'subscription',
      customer: uid('cus'),
      status: 'active',
      cancel_at_period_end: false,
      metadata: {},
      items: {
        object: 'list',
        data: [
          {
            id: uid('si'),
            object: 'subscription_item',
            current_period_end: now() + 30 * DAY,
            quantity: 1,
            price: { id: uid('price'), product: 'prod_pro', unit_amount: 2000, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } },
          },
        ],
      },
    };
    expect((await send(event('customer.subscription.created', sub))).body.decision).toBe('applied');
    const paid = (amount: number, paidAt: number) =>
      send(
        event('invoice.paid', {
          id: uid('in'),
          object: 'invoice',
          customer: sub.customer,
          amount_paid: amount,
          currency: 'usd',
          subscription: sub.id,
          status_transitions: { paid_at: paidAt },
        }),
      );
    expect((await paid(2000, now())).status).toBe(200);
    expect((await paid(3000, lastMonthAt())).status).toBe(200);
  });

  it('every chart answers exactly what the read API answers for the project and environment', async () => {
    const queries: Record<string, string>[] = [{}, { granularity: 'week', from: day(-60) }, { granularity: 'month', from: day(-90), to: day() }];
    for (const chart of CHARTS)
      for (const query of queries) {
        const [operator, read] = await Promise.all([admin(`/charts/${chart}`, { ...query, env: 'sandbox' }), pub(chart, query)]);
        expect(operator.status).toBe(200);
        expect(withoutClock(operator.body)).toEqual(withoutClock(read.body));
      }
    const byRail = await admin('/charts/mrr', { env: 'sandbox', segment: 'product' });
    expect(withoutClock(byRail.body)).toEqual(withoutClock((await pub('mrr', { segment: 'product' })).body));
    expect(byRail.body.data.series.at(-1).segments.prod_pro.mrrCents).toBe(2000);

    // The environment decides: production is measured since the rail was connected (today) and had no payment:
    // today is 0, the days before are null (not measured), never 0.
    const production = await admin('/charts/revenue');
    expect(production.status).toBe(200);
    expect(production.body.meta).toEqual(expect.objectContaining({ project: h.fx.projectId, env: 'production' }));
    expect(production.body.data.series.at(-1).values).toEqual({ grossCents: 0, refundsCents: 0, netCents: 0, transactions: 0 });
    expect(production.body.data.series[0].values).toEqual({ grossCents: null, refundsCents: null, netCents: null, transactions: null });
  });

  it('several charts in one call: each as its own route answers it, segment only where it splits', async () => {
    const res = await admin('/charts', { env: 'sandbox', charts: 'mrr,events,revenue', segment: 'rail', from: day(-6) });
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('charts');
    expect(Object.keys(res.body.data).sort()).toEqual(['events', 'mrr', 'revenue']);
    expect(res.body.data.mrr).toEqual((await pub('mrr', { segment: 'rail', from: day(-6) })).body.data);
    expect(res.body.data.revenue).toEqual((await pub('revenue', { segment: 'rail', from: day(-6) })).body.data);
    expect(res.body.data.events).toEqual((await pub('events', { from: day(-6) })).body.data);
    expect(res.body.data.events.segment).toBe('none');
    expect(res.body.meta.coverage.revenue.state).toBe('measured');
    const all = await admin('/charts', { env: 'sandbox' });
    expect(Object.keys(all.body.data).sort()).toEqual([...CHARTS].sort());
  });

  it('revenue today, this month and last month: gross, refunds and net where measured (refunds not before the lifecycle), in the reporting currency', async () => {
    const res = await admin('/revenue-summary', { env: 'sandbox' });
    expect(res.status).toBe(200);
    const thisMonth = `${day().slice(0, 7)}-01`;
    const lastMonth = new Date(lastMonthAt() * 1000).toISOString().slice(0, 8) + '01';
    expect(res.body).toEqual({
      object: 'revenue_summary',
      data: {
        currency: 'USD',
        today: { period: day(), grossCents: 2000, refundsCents: 0, netCents: 2000 },
        thisMonth: { period: thisMonth, grossCents: 2000, refundsCents: 0, netCents: 2000 },
        lastMonth: { period: lastMonth, grossCents: 3000, refundsCents: null, netCents: null },
      },
      meta: {
        project: h.fx.projectId,
        env: 'sandbox',
        generatedAt: expect.any(Number),
        coverage: { revenue: { state: 'measured', since: expect.any(Number) } },
      },
    });
    const month = await pub('revenue', { granularity: 'month', from: lastMonth });
    expect(month.body.data.series.map((p: { values: { grossCents: number } }) => p.values.grossCents)).toEqual([3000, 2000]);

    // The console's overview carries the same figures (one call for the page's figures).
    expect((await admin('/overview', { env: 'sandbox' })).body.revenue).toEqual(res.body.data);

    const production = await admin('/revenue-summary');
    expect(production.body.data.today).toEqual({ period: day(), grossCents: 0, refundsCents: 0, netCents: 0 });
    expect(production.body.data.lastMonth.grossCents).toBeNull();
  });

  it('operator credentials only; unknown project and chart 404; parameters named', async () => {
    const denied = 'invalid_operator_token';
    expectError(await h.t.http.get(`/admin/v1/projects/${h.fx.projectId}/charts/mrr`), 401, denied);
    expectError(await h.t.http.get(`/admin/v1/projects/${h.fx.projectId}/charts`).set(keyHeaders(h.fx, h.fx.keys.skTest)), 401, denied);
    expectError(await h.t.http.get(`/admin/v1/projects/${h.fx.projectId}/revenue-summary`), 401, denied);
    expectNamedError(await admin('/charts/nope'), 404, 'resource_missing', /mrr/);
    expectNamedError(await h.t.http.get('/admin/v1/projects/proj_missing/charts/mrr').set(operatorAuth()), 404, 'resource_missing', /proj_missing/);
    expectNamedError(await h.t.http.get('/admin/v1/projects/proj_missing/revenue-summary').set(operatorAuth()), 404, 'resource_missing', /proj_missing/);
    expectNamedError(await admin('/charts/mrr', { env: 'staging' }), 400, 'invalid_param_value', /env/);
    expectNamedError(await admin('/charts/mrr', { from: day(-731) }), 400, 'invalid_param_value', /from/);
    expectNamedError(await admin('/charts/events', { segment: 'rail' }), 400, 'invalid_param_value', /segment/);
    expectNamedError(await admin('/charts', { charts: 'mrr,nope' }), 400, 'invalid_param_value', /charts.*nope/);
    expectNamedError(await admin('/charts', { granularity: 'year' }), 400, 'invalid_param_value', /granularity/);
  });
});
