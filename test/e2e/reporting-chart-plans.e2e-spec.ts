import { Sql } from '#platform';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * The charts read their range from the sums kept per split and period, not from the per-day
 * facts per rail and product: over two years of days, the statement each chart runs (taken
 * from the request, planned with fresh statistics) reads only an index holding the sums.
 */
describe('reporting: the charts read the index of their split sums', () => {
  let t: TestApp;
  let p: ProjectFixture;
  const DAYS = 731;
  const PRODUCTS = 5;
  const today = () => new Date(t.clock.nowMs()).toISOString().slice(0, 10);

  beforeAll(async () => {
    t = await createTestApp({}, { ownDatabase: true });
    p = await createProjectWithApp(t);
    // Two years of sums as the triggers keep them (every day, the total, three rails and the
    // products) for the project and four other tenants: a scope is a part of each table, as in production.
    const tenants = [p.projectId, ...[1, 2, 3, 4].map((i) => `proj_plan_other_${i}`)];
    const q = (sql: string) => t.dataSource.query(sql, [tenants, today(), DAYS, PRODUCTS]);
    const segs = `(VALUES ('none', '')) s(split, seg) UNION ALL SELECT 'rail', unnest(ARRAY['ios_store', 'card_payments', 'android_store'])
                  UNION ALL SELECT 'product', 'prod_' || n FROM generate_series(1, $4::int) n`;
    await q(`
      INSERT INTO subscription_level_splits (project_id, env, family, split, day, seg, active_entered, active_left, trialing, in_grace_period, in_billing_retry, paused)
      SELECT tenant, 'sandbox', f, s.split, $2::date - d, s.seg, 2, 1, m, m, m, m
        FROM unnest($1::text[]) tenant, generate_series(0, $3::int - 1) d, (SELECT * FROM ${segs}) s,
             (VALUES ('paying', 0), ('lifecycle', 1)) f(f, m)`);
    await q(`
      INSERT INTO revenue_day_splits (project_id, env, split, day, seg, currency, payments, gross_minor, refunds, refunds_minor)
      SELECT tenant, 'sandbox', s.split, $2::date - d, s.seg, 'USD', 3, 2997, 1, 999 FROM unnest($1::text[]) tenant, generate_series(0, $3::int - 1) d, (SELECT * FROM ${segs}) s`);
    await q(`
      INSERT INTO revenue_mrr_splits (project_id, env, split, day, seg, currency, new_minor, expansion_minor, contraction_minor, churned_minor, reactivation_minor)
      SELECT tenant, 'sandbox', 'product', $2::date - d, 'prod_' || n, 'USD', 999, 100, 50, 300, 0
        FROM unnest($1::text[]) tenant, generate_series(0, $3::int - 1) d, generate_series(1, $4::int) n`);
    await q(`
      INSERT INTO subscription_trial_splits (project_id, env, split, day, seg, started, ended, converted)
      SELECT tenant, 'sandbox', 'none', $2::date - d, '', 3, 2, 1 FROM unnest($1::text[]) tenant, generate_series(0, $3::int - 1) d WHERE $4::int > 0`);
    await q(`
      INSERT INTO active_period_days (project_id, env, granularity, day, firsts, lasts)
      SELECT tenant, 'sandbox', g, $2::date - d, 40, 40 FROM unnest($1::text[]) tenant, generate_series(0, $3::int - 1) d, unnest(ARRAY['week', 'month']) g
       WHERE $4::int > 0`);
    for (const table of ['subscription_level_splits', 'revenue_day_splits', 'revenue_mrr_splits', 'subscription_trial_splits', 'active_period_days'])
      await t.dataSource.query(`VACUUM ANALYZE ${table}`);
  });
  afterAll(async () => t.close());

  /** The plans (EXPLAIN ANALYZE, BUFFERS) of the statements a chart request runs that read `table`. */
  async function plansOf(path: string, query: Record<string, string>, table: string): Promise<string[]> {
    const sql = t.app.get(Sql);
    const spy = jest.spyOn(sql, 'rows');
    try {
      const res = await t.http.get(path).query(query).set(keyHeaders(p, p.keys.skTest));
      expect(res.status).toBe(200);
      const statements = spy.mock.calls.filter(([text]) => typeof text === 'string' && text.includes(table)) as Array<[string, unknown[]]>;
      expect(statements.length).toBeGreaterThan(0);
      const plans = [];
      for (const [text, params] of statements) {
        const rows = (await t.dataSource.query(`EXPLAIN (ANALYZE, BUFFERS) ${text}`, params)) as Array<{ 'QUERY PLAN': string }>;
        plans.push(rows.map((r) => r['QUERY PLAN']).join('\n'));
      }
      return plans;
    } finally {
      spy.mockRestore();
    }
  }

  const range = () => ({ from: new Date(t.clock.nowMs() - (DAYS - 1) * 86_400_000).toISOString().slice(0, 10), to: today() });
  const reads: Array<[string, Record<string, string>, string, string, RegExp]> = [
    ['/v1/charts/active_subscriptions', { segment: 'product' }, 'subscription_level_splits', 'subscription_level_splits_pk', /subscription_lifecycle_days/],
    [
      '/v1/charts/active_subscriptions',
      { segment: 'none', granularity: 'week' },
      'subscription_level_splits',
      'subscription_level_splits_pk',
      /subscription_lifecycle_days/,
    ],
    ['/v1/charts/churn', { granularity: 'month' }, 'subscription_level_splits', 'subscription_level_splits_pk', /subscription_state_days/],
    ['/v1/charts/revenue', { segment: 'rail' }, 'revenue_day_splits', 'revenue_day_splits_pk', /revenue_day_facts|revenue_refund_days/],
    ['/v1/charts/refunds', { segment: 'none', granularity: 'month' }, 'revenue_day_splits', 'revenue_day_splits_pk', /revenue_day_facts|revenue_refund_days/],
    ['/v1/charts/mrr', { segment: 'product' }, 'revenue_mrr_splits', 'revenue_mrr_splits_pk', /revenue_mrr_movements_pk|Seq Scan on revenue_mrr_movements/],
    ['/v1/charts/trials', { granularity: 'day' }, 'subscription_trial_splits', 'subscription_trial_splits_pk', /subscription_trial_days/],
    ['/v1/charts/events', { granularity: 'week' }, 'active_period_days', 'active_period_days_pk', /reporting_active_days|reporting_active_periods/],
  ];
  for (const [path, query, table, index, notRead] of reads)
    it(`${path} ${JSON.stringify(query)}: an index-only scan of ${index}, no heap page, not the rows it sums`, async () => {
      for (const plan of await plansOf(path, { ...range(), ...query }, table)) {
        expect(plan).toContain(`Index Only Scan using ${index} on ${table}`);
        expect(plan).toMatch(
          new RegExp(`Index Only Scan using ${index}[^\\n]*\\n(\\s+(Index Cond|Filter|Rows Removed by Filter):[^\\n]*\\n)*\\s+Heap Fetches: 0`),
        );
        expect(plan).not.toMatch(/Seq Scan/);
        expect(plan).not.toMatch(notRead);
      }
    });
});
