import { randomUUID } from 'node:crypto';
import { ChartFacts1790000003600 } from '../../libs/reporting/src/migrations/1790000003600-chart-facts.migration.js';
import { keyHeaders, setRateLimits } from '../support/fixtures.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';

/**
 * The chart facts' migration fills them from the data already there: dropped and built again
 * over a project with subscriptions, payments, customers and events, the charts answer the same.
 */
describe('reporting: the chart facts are filled from existing data', () => {
  const h = cardWebhookHarness({}, { ownDatabase: true });
  const { now, event, send } = h;

  const subscription = (product: string, amount: number) => ({
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
          current_period_end: now() + 30 * 86_400,
          quantity: 1,
          price: { id: uid('price'), product, unit_amount: amount, currency: 'usd', recurring: { interval: 'month', interval_count: 1 } },
        },
      ],
    },
  });
  const read = async (chart: string, query: Record<string, string>) => {
    const res = await h.t.http.get(`/v1/charts/${chart}`).query(query).set(keyHeaders(h.fx, h.fx.keys.skTest));
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const reads: Array<[string, Record<string, string>]> = [
    ['mrr', { segment: 'product' }],
    ['mrr', { granularity: 'week', segment: 'rail' }],
    ['revenue', { granularity: 'month' }],
    ['active_subscriptions', { segment: 'rail' }],
    ['new_customers', {}],
    ['events', {}],
    ['ltv_cohorts', {}],
  ];

  it('drop and build again: every chart answers as before', async () => {
    const pro = subscription('prod_pro', 2000);
    for (const sub of [pro, subscription('prod_basic', 700)]) expect((await send(event('customer.subscription.created', sub))).body.decision).toBe('applied');
    const paid = {
      id: uid('in'),
      object: 'invoice',
      customer: pro.customer,
      amount_paid: 2000,
      currency: 'usd',
      subscription: pro.id,
      status_transitions: { paid_at: now() },
    };
    expect((await send(event('invoice.paid', paid))).status).toBe(200);
    await setRateLimits(h.t, h.fx.projectId, { events: { sustained: 10_000, burst: 10_000 } });
    const events = [1, 2, 3].map((i) => ({
      name: i === 3 ? 'error.unhandled' : 'app.opened',
      eventId: `ev_${randomUUID()}`,
      timestamp: h.t.clock.nowMs(),
      anonymousId: 'anon_backfill',
      ...(i === 3 ? { level: 'error', properties: { fingerprint: 'deadbeef', message: 'x' } } : {}),
    }));
    expect((await h.t.http.post('/v1/events').set(keyHeaders(h.fx, h.fx.keys.skTest)).send({ events })).status).toBe(202);

    const before = [];
    for (const [chart, query] of reads) before.push(await read(chart, query));
    expect(before[0].summary.mrrCents).toBe(2700);
    expect(before[5].summary).toEqual(expect.objectContaining({ events: 3, errors: 1 }));

    const migration = new ChartFacts1790000003600();
    const runner = h.t.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      await migration.down(runner);
      await migration.up(runner);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }

    for (const [i, [chart, query]] of reads.entries()) expect([chart, await read(chart, query)]).toEqual([chart, before[i]]);
  });
});
