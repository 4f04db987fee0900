import { type LifecycleSubscriptionOptions, lifecycleCardSubscription } from '../support/card-events.js';
import { LifecycleChartFacts1790000003750 } from '../../libs/reporting/src/migrations/1790000003750-lifecycle-chart-facts.migration.js';
import { ChartLevelMonths1790000003810 } from '../../libs/reporting/src/migrations/1790000003810-chart-level-months.migration.js';
import { ChartSplitSums1790000003970 } from '../../libs/reporting/src/migrations/1790000003970-chart-split-sums.migration.js';
import { keyHeaders } from '../support/fixtures.js';
import { operatorAuth } from '../support/test-app.js';
import { cardWebhookHarness, uid } from '../support/harness/webhooks-card.js';

/**
 * The lifecycle chart facts' migration fills them from the data already there: dropped and
 * built again over a project whose card subscriptions went through a trial, a conversion, a
 * grace period, a billing retry, a pause, a refund and a won dispute, the state, refund,
 * revenue and cohort charts answer the same. Trial starts and conversions of the time before are not
 * rebuilt: those days answer 0 from the migration's day on.
 */
describe('reporting: the lifecycle chart facts are filled from existing data', () => {
  const h = cardWebhookHarness({}, { ownDatabase: true });
  const { now, event, send } = h;
  const DAY = 86_400;

  const cardSub = (s: { id: string; customer: string }, o: LifecycleSubscriptionOptions) => lifecycleCardSubscription(s, { amount: 1499, ...o }, uid);
  const applied = async (body: unknown) => {
    const type = (body as { type: string }).type;
    expect([type, (await send(body)).body.decision]).toEqual([type, 'applied']);
  };

  const invoice = (s: { id: string; customer: string }, charge: string, paidAt: number) => ({
    id: uid('in'),
    object: 'invoice',
    customer: s.customer,
    subscription: s.id,
    amount_paid: 1499,
    currency: 'usd',
    charge,
    payment_intent: null,
    status_transitions: { paid_at: paidAt },
    lines: { data: [{ period: { start: paidAt } }] },
  });
  const read = async (chart: string, query: Record<string, string>) => {
    const res = await h.t.http.get(`/v1/charts/${chart}`).query(query).set(keyHeaders(h.fx, h.fx.keys.skTest));
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const reads: Array<[string, Record<string, string>]> = [
    ['active_subscriptions', {}],
    ['active_subscriptions', { segment: 'rail', granularity: 'week' }],
    ['active_subscriptions', { segment: 'product' }],
    ['refunds', {}],
    ['refunds', { segment: 'product', granularity: 'month' }],
    ['revenue', { segment: 'rail' }],
    ['churn', {}],
    ['ltv_cohorts', {}],
  ];

  it('drop and build again: the state, refund and revenue charts answer as before', async () => {
    const t0 = now();
    const sub = () => ({ id: uid('sub'), customer: uid('cus') });
    const [converted, trialing, grace, retry, paused, refunded, disputed] = [sub(), sub(), sub(), sub(), sub(), sub(), sub()];
    for (const s of [converted, trialing])
      await applied(
        event('customer.subscription.created', cardSub(s, { status: 'trialing', start: t0, end: t0 + 7 * DAY, trialEnd: t0 + 7 * DAY }), { created: t0 }),
      );
    await applied(
      event('customer.subscription.updated', cardSub(converted, { start: t0 + 7 * DAY, end: t0 + 37 * DAY, trialEnd: t0 + 7 * DAY }), { created: t0 + 1 }),
    );
    const setGrace = (gracePeriodDays: number) =>
      h.t.http.put(`/admin/v1/projects/${h.fx.projectId}/rails/card_payments`).set(operatorAuth()).send({ accountId: 'acct_test_1', gracePeriodDays });
    expect((await setGrace(3)).status).toBe(200);
    await applied(event('customer.subscription.created', cardSub(grace, { start: t0 - 30 * DAY, end: t0 }), { created: t0 }));
    await applied(event('customer.subscription.updated', cardSub(grace, { status: 'past_due', start: t0, end: t0 + 30 * DAY }), { created: t0 + 1 }));
    expect((await setGrace(0)).status).toBe(200);
    await applied(event('customer.subscription.created', cardSub(retry, { start: t0 - 30 * DAY, end: t0 }), { created: t0 }));
    await applied(event('customer.subscription.updated', cardSub(retry, { status: 'past_due', start: t0, end: t0 + 30 * DAY }), { created: t0 + 1 }));
    await applied(event('customer.subscription.created', cardSub(paused, { start: t0, end: t0 + 30 * DAY }), { created: t0 }));
    await applied(
      event('customer.subscription.updated', cardSub(paused, { start: t0, end: t0 + 30 * DAY, pauseResumesAt: t0 + 60 * DAY }), { created: t0 + 1 }),
    );
    for (const s of [refunded, disputed]) await applied(event('customer.subscription.created', cardSub(s, { start: t0, end: t0 + 30 * DAY }), { created: t0 }));
    const refundedCharge = uid('ch');
    const disputedCharge = uid('ch');
    await applied(event('invoice.paid', invoice(refunded, refundedCharge, t0), { created: t0 }));
    await applied(event('invoice.paid', invoice(disputed, disputedCharge, t0), { created: t0 }));
    const refund = event(
      'charge.refunded',
      { id: refundedCharge, object: 'charge', customer: refunded.customer, amount_refunded: 700, currency: 'usd' },
      { created: t0 + 2 },
    );
    await applied({ ...refund, data: { ...refund.data, previous_attributes: { amount_refunded: 0 } } });
    const dispute = { id: uid('dp'), object: 'dispute', amount: 1499, currency: 'usd', charge: disputedCharge, payment_intent: null, status: 'needs_response' };
    await applied(event('charge.dispute.created', dispute, { created: t0 + 3 }));
    await applied(event('charge.dispute.closed', { ...dispute, status: 'won' }, { created: t0 + 4 }));

    // The sums per split the triggers kept equal the recount of their day rows.
    const seg = `CASE k WHEN 'none' THEN '' WHEN 'rail' THEN rail ELSE COALESCE(NULLIF(product_id, ''), 'other') END`;
    const splits = `unnest(ARRAY['none', 'rail', 'product']) k`;
    const levels = (state: string) => (state === 'active' ? [`active_entered`, `active_left`] : [state]);
    const level = (state: string) =>
      state === 'active'
        ? [`sum(entered) FILTER (WHERE state = 'active')`, `sum("left") FILTER (WHERE state = 'active')`]
        : [`sum(entered - "left") FILTER (WHERE state = '${state}')`];
    const states = ['active', 'trialing', 'in_grace_period', 'in_billing_retry', 'paused'];
    // Both ways: no kept row the recount lacks, no recounted row missing or different.
    const recounts: Array<[string, string]> = [
      [
        `SELECT family, split, day, seg, ${states.flatMap(levels).join(', ')} FROM subscription_level_splits WHERE project_id = $1`,
        `SELECT f, k, day, ${seg}, ${states.flatMap((st) => level(st).map((x) => `coalesce(${x}, 0)`)).join(', ')} FROM (
         SELECT 'paying' AS f, * FROM subscription_state_days UNION ALL SELECT 'lifecycle', * FROM subscription_lifecycle_days) d, ${splits}
        WHERE project_id = $1 GROUP BY 1, 2, 3, 4`,
      ],
      [
        `SELECT split, day, seg, currency, payments, gross_minor, refunds, refunds_minor FROM revenue_day_splits WHERE project_id = $1`,
        `SELECT k, day, ${seg}, currency, sum(p), sum(g), sum(r), sum(m) FROM (
         SELECT day, rail, product_id, currency, payments AS p, gross_minor AS g, 0 AS r, 0 AS m FROM revenue_day_facts WHERE project_id = $1
         UNION ALL SELECT day, rail, product_id, currency, 0, 0, refunds - reversals, refunds_minor - reversals_minor FROM revenue_refund_days WHERE project_id = $1) d, ${splits}
        GROUP BY 1, 2, 3, 4`,
      ],
      [
        `SELECT day, started, ended, converted FROM subscription_trial_splits WHERE project_id = $1`,
        `SELECT day, sum(started), sum(ended), sum(converted) FROM subscription_trial_days WHERE project_id = $1 GROUP BY 1`,
      ],
      [
        `SELECT day, seg, currency, new_minor, expansion_minor, contraction_minor, churned_minor, reactivation_minor FROM revenue_mrr_splits WHERE project_id = $1`,
        `SELECT day, COALESCE(NULLIF(product_id, ''), 'other'), currency, sum(new_minor), sum(expansion_minor), sum(contraction_minor), sum(churned_minor), sum(reactivation_minor)
         FROM revenue_mrr_movements WHERE project_id = $1 AND rail <> 'all' AND product_id <> '*' GROUP BY 1, 2, 3`,
      ],
    ];
    for (const [kept, recount] of recounts)
      for (const sql of [`${kept} EXCEPT ${recount}`, `${recount} EXCEPT ${kept}`]) expect(await h.t.dataSource.query(sql, [h.fx.projectId])).toEqual([]);
    expect(
      Number((await h.t.dataSource.query(`SELECT count(*) AS n FROM subscription_level_splits WHERE project_id = $1`, [h.fx.projectId]))[0].n),
    ).toBeGreaterThan(0);

    const before = [];
    for (const [chart, query] of reads) before.push(await read(chart, query));
    expect(before[0].summary).toEqual({ active: 3, trialing: 1, inGracePeriod: 1, inBillingRetry: 1, paused: 1 });
    expect(before[3].summary).toEqual({ refunds: 1, refundRate: 0.5, refundsCents: 700 });
    // Net cash per paying customer: 14.99 less 7.00, and 14.99 charged back and given back.
    expect(before[7].series.at(-1).values.m0).toBe(Math.round((1499 - 700 + 1499) / 2));
    const trialsBefore = await read('trials', { from: new Date(t0 * 1000).toISOString().slice(0, 10) });
    expect(trialsBefore.summary).toEqual({ started: 2, converted: 1, conversionRate: 1 });

    // With the sums kept from its day rows by the migrations after it (their triggers go with the dropped tables).
    const migrations = [new LifecycleChartFacts1790000003750(), new ChartLevelMonths1790000003810(), new ChartSplitSums1790000003970()];
    const runner = h.t.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      for (const migration of [...migrations].reverse()) await migration.down(runner);
      for (const migration of migrations) await migration.up(runner);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }

    for (const [i, [chart, query]] of reads.entries()) expect([chart, query, await read(chart, query)]).toEqual([chart, query, before[i]]);
    // Trials are measured from the migration's day, and those before it were not recorded.
    const trialsAfter = await read('trials', { from: new Date(t0 * 1000).toISOString().slice(0, 10) });
    expect(trialsAfter.summary).toEqual({ started: 0, converted: 0, conversionRate: null });

    // The facts written after it carry on from the rebuilt counts: the trial converts.
    await applied(
      event('customer.subscription.updated', cardSub(trialing, { start: t0 + 7 * DAY, end: t0 + 37 * DAY, trialEnd: t0 + 7 * DAY }), { created: t0 + 5 }),
    );
    expect((await read('active_subscriptions', {})).summary).toEqual({ active: 4, trialing: 0, inGracePeriod: 1, inBillingRetry: 1, paused: 1 });
    expect((await read('trials', { from: new Date(t0 * 1000).toISOString().slice(0, 10) })).summary).toEqual({ started: 0, converted: 1, conversionRate: 1 });
  });
});
