import { ChartLevelMonths1790000003810 } from '../../libs/reporting/src/migrations/1790000003810-chart-level-months.migration.js';
import { keyHeaders } from '../support/fixtures.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';

/**
 * Levels at a range's start (MRR, subscriptions in a state) are read from the month sums kept
 * with the per-day facts: a late change of an earlier month moves every level after it, the
 * month sums are filled from the existing day rows by their migration, and a range starting
 * after the facts answers as the same days of a longer range.
 */
describe('reporting: chart levels from month sums', () => {
  const h = cardWebhookHarness({}, { ownDatabase: true });
  const { now, event, send } = h;
  const DAY = 86_400;

  const subscription = (product: string, amount: number, o: { status?: string; id?: string; customer?: string } = {}) => ({
    id: o.id ?? uid('sub'),
    object: 'subscription',
    customer: o.customer ?? uid('cus'),
    status: o.status ?? 'active',
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
          price: { id: uid('price'), product, unit_amount: amount, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } },
        },
      ],
    },
  });
  const day = (offsetDays = 0) => new Date((now() + offsetDays * DAY) * 1000).toISOString().slice(0, 10);
  const data = async (chart: string, query: Record<string, string>) => {
    const res = await h.t.http.get(`/v1/charts/${chart}`).query(query).set(keyHeaders(h.fx, h.fx.keys.skTest));
    expect(res.status).toBe(200);
    return res.body.data;
  };
  /** The periods of `long` that `short` has too, with their values: a later start reads the same levels. */
  const sameDays = (short: { series: Array<{ period: string }> }, long: { series: Array<{ period: string }> }) => {
    const periods = new Set(short.series.map((p) => p.period));
    return long.series.filter((p) => periods.has(p.period));
  };
  const reads = (): Array<[string, Record<string, string>]> => [
    ['mrr', { from: day(-1) }],
    ['mrr', { from: day(-1), segment: 'rail' }],
    ['mrr', { from: day(-1), segment: 'product' }],
    ['active_subscriptions', { from: day(-1), segment: 'product' }],
    ['active_subscriptions', { from: day(-1), segment: 'rail' }],
    ['churn', { from: day(-1) }],
  ];

  let late: ReturnType<typeof subscription>;

  it('a subscription of 40 days ago arriving late counts in the level at the start of a range after it', async () => {
    expect((await send(event('customer.subscription.created', subscription('prod_basic', 700), { created: now() - 2 * DAY }))).body.decision).toBe('applied');
    late = subscription('prod_pro', 2000);
    expect((await send(event('customer.subscription.created', late, { created: now() - 40 * DAY }))).body.decision).toBe('applied');

    // From yesterday: the opening (the months before this one, then this month's days) holds both.
    const mrr = await data('mrr', { from: day(-1) });
    expect(mrr.series.map((p: any) => p.values.mrrCents)).toEqual([2700, 2700]);
    const byProduct = await data('mrr', { from: day(-1), segment: 'product' });
    expect(byProduct.series[0].segments).toEqual({
      prod_basic: expect.objectContaining({ mrrCents: 700 }),
      prod_pro: expect.objectContaining({ mrrCents: 2000 }),
    });
    const states = await data('active_subscriptions', { from: day(-1), segment: 'rail' });
    expect(states.series.map((p: any) => p.values.active)).toEqual([2, 2]);
    expect(states.series[0].segments.card_payments.active).toBe(2);

    // The same days of a range starting before the late fact answer alike.
    for (const [chart, query] of [
      ['mrr', {}],
      ['mrr', { segment: 'product' }],
      ['active_subscriptions', { segment: 'rail' }],
    ] as const) {
      const short = await data(chart, { ...query, from: day(-1) });
      const long = await data(chart, { ...query, from: day(-60) });
      expect(sameDays(short, long)).toEqual(short.series);
    }

    // Cancelled today: churned of the two active at the start of the day.
    expect((await send(event('customer.subscription.deleted', { ...late, status: 'canceled' }))).body.decision).toBe('applied');
    const churn = await data('churn', { from: day(-1) });
    expect(churn.series[1].values).toEqual({ churnedSubscriptions: 1, subscriberChurnRate: 0.5, mrrChurnRate: 2000 / 2700 });
    expect((await data('mrr', { from: day(-1) })).series.map((p: any) => p.values.mrrCents)).toEqual([2700, 700]);
  });

  it('the month sums are filled from the existing day rows: dropped and built again, every level answers as before', async () => {
    const before = [];
    for (const [chart, query] of reads()) before.push(await data(chart, query));

    const migration = new ChartLevelMonths1790000003810();
    const runner = h.t.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      await migration.down(runner);
      await migration.up(runner);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }

    const after = [];
    for (const [chart, query] of reads()) after.push(await data(chart, query));
    expect(after).toEqual(before);
    // The late subscription's month row exists, its day row's sums.
    const rows = await h.t.dataSource.query(
      `SELECT m.entered, m."left" FROM subscription_lifecycle_months m WHERE m.project_id = $1 AND m.state = 'active' AND m.month = date_trunc('month', $2::date::timestamp)::date`,
      [h.fx.projectId, day(-40)],
    );
    expect(rows.map((r: { entered: string; left: string }) => [Number(r.entered), Number(r.left)])).toEqual([[1, 0]]);
  });
});
