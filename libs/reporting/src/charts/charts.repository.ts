import { Injectable } from '@nestjs/common';
import { Sql, type TenantScope } from '#platform';
import type { ChartGranularity } from './chart-periods.js';

type Num = string | number | null;
export type ChartSegment = 'rail' | 'product' | 'none';

/** One row of a chart read: a period (null: before the range, an opening balance), a segment key (`''`: the total) and its sums. */
export interface FactRow {
  period: string | null;
  seg: string;
  sums: Record<string, number>;
}

/** What a chart's periods are measured from, and the project's reporting currency. */
export interface ChartContext {
  currency: string | null;
  /** The first day with a revenue fact, or the day the first rail was connected (the earlier). */
  revenueSince: string | null;
  subscriptionsSince: string | null;
  /** The first day the lifecycle's facts (states beyond `active`, trials, refunds) were recorded, or null. */
  lifecycleSince: string | null;
  customersSince: string | null;
  eventsSince: string | null;
}

/** The SQL segment key of a fact table with `rail` and `product_id` columns. */
function segmentKey(segment: ChartSegment): string {
  if (segment === 'rail') return 'rail';
  // An unknown product ('') is `other`: '' names the total.
  if (segment === 'product') return `COALESCE(NULLIF(product_id, ''), 'other')`;
  return `''`;
}

/** The first day of the period (`granularity` a parameter: day, week from Monday, month) holding the date `column`. */
const PERIOD = (granularity: string, column: string) => `date_trunc(${granularity}, ${column}::timestamp)::date`;

/**
 * The rows of a running level's facts up to `to`: before the month of `from`, the month sums
 * (`months`, kept with the day rows), then the day rows from that month's first day, so a read
 * takes its range and a month row per key and month of the time before, never every day since
 * the start. The month rows carry their month's first day as `day` (before `from`: the opening).
 */
const LEVEL_SOURCES = (months: string, days: string, columns: string, filter: string, from: string, to: string) => `
  SELECT month AS day, ${columns} FROM ${months}
   WHERE project_id = $1 AND env = $2 ${filter} AND month < date_trunc('month', ${from}::date::timestamp)::date
  UNION ALL
  SELECT day, ${columns} FROM ${days}
   WHERE project_id = $1 AND env = $2 ${filter} AND day >= date_trunc('month', ${from}::date::timestamp)::date AND day <= ${to}::date`;

/**
 * The charts' reads of the per-day facts: each a range read by (project_id, env, day) of one
 * table, grouped by period (`date_trunc`: ISO weeks start on Monday) and segment in the database.
 */
@Injectable()
export class ChartsRepository {
  constructor(private readonly sql: Sql) {}

  private async factRows(text: string, args: unknown[], sums: readonly string[]): Promise<FactRow[]> {
    // Grouped by the period's first day (`p`, a date: cheap to group by), named once per group.
    const rows = await this.sql.rows<Record<string, Num>>(`SELECT to_char(f.p, 'YYYY-MM-DD') AS period, f.* FROM (${text}) f`, args);
    return rows.map((r) => ({
      period: r.period === null ? null : String(r.period),
      seg: String(r.seg ?? ''),
      sums: Object.fromEntries(sums.map((name) => [name, Number(r[name] ?? 0)])),
    }));
  }

  /** The first fact days of each family and the reporting currency, in one statement of index probes. */
  async context(scope: TenantScope): Promise<ChartContext> {
    const day = (table: string) => `(SELECT to_char(min(day), 'YYYY-MM-DD') FROM ${table} WHERE project_id = $1 AND env = $2)`;
    const row = await this.sql.one<Record<string, string | null>>(
      `SELECT (SELECT currency FROM reporting_settings WHERE project_id = $1) AS currency,
              (SELECT to_char(min(updated_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD') FROM rail_settings WHERE project_id = $1 AND enabled) AS rail_since,
              ${day('revenue_mrr_movements')} AS mrr_since, ${day('revenue_day_facts')} AS payments_since,
              ${day('subscription_state_days')} AS states_since, ${day('customer_day_facts')} AS customers_since,
              ${day('event_day_facts')} AS events_since,
              (SELECT to_char(min(paying_day), 'YYYY-MM-DD') FROM revenue_first_paying WHERE project_id = $1 AND env = $2) AS paying_since,
              (SELECT to_char(since, 'YYYY-MM-DD') FROM chart_measures WHERE measure = 'lifecycle') AS lifecycle_since`,
      [scope.projectId, scope.env],
    );
    const earliest = (...days: Array<string | null | undefined>) => days.filter((d): d is string => !!d).sort()[0] ?? null;
    const revenueSince = earliest(row?.rail_since, row?.mrr_since, row?.payments_since);
    return {
      currency: row?.currency ?? null,
      revenueSince,
      subscriptionsSince: earliest(revenueSince, row?.states_since),
      lifecycleSince: row?.lifecycle_since ?? null,
      customersSince: earliest(row?.customers_since, row?.paying_since),
      eventsSince: row?.events_since ?? null,
    };
  }

  /**
   * MRR movements per period and segment in one currency, and before `from` their sum per
   * segment (period null): MRR at a period's end is the opening plus every movement up to it.
   * The total (`''`) reads the `all`/`*` rows, a rail its `rail`/`*` rows, a product its rows over every rail.
   */
  movements(scope: TenantScope, currency: string, from: string, to: string, granularity: ChartGranularity, segment: ChartSegment): Promise<FactRow[]> {
    // The rows each split reads (an `all` row's product is `*`): exact ranges of `revenue_mrr_movements_levels_idx` but for products.
    const rows = segment === 'rail' ? `product_id = '*'` : segment === 'product' ? `(rail = 'all' OR product_id <> '*')` : `product_id = '*' AND rail = 'all'`;
    const sums = ['newMinor', 'expansionMinor', 'contractionMinor', 'churnedMinor', 'reactivationMinor'];
    const columns = 'rail, product_id, new_minor, expansion_minor, contraction_minor, churned_minor, reactivation_minor';
    if (segment === 'product') return this.productMovements(scope, currency, from, to, granularity, sums);
    return this.factRows(
      `SELECT CASE WHEN day < $4::date THEN NULL ELSE ${PERIOD('$6', 'day')} END AS p,
              CASE WHEN rail = 'all' THEN '' ELSE ${segmentKey(segment)} END AS seg,
              sum(new_minor) AS "newMinor", sum(expansion_minor) AS "expansionMinor", sum(contraction_minor) AS "contractionMinor",
              sum(churned_minor) AS "churnedMinor", sum(reactivation_minor) AS "reactivationMinor"
         FROM (${LEVEL_SOURCES('revenue_mrr_months', 'revenue_mrr_movements', columns, `AND currency = $3 AND ${rows}`, '$4', '$5')}) u
        GROUP BY 1, 2`,
      [scope.projectId, scope.env, currency, from, to, granularity],
      sums,
    );
  }

  /**
   * `movements` split by product: the opening as there; in the range, the totals (`all`/`*`)
   * and each product's movements over every rail from their sums (`revenue_mrr_splits`: a row
   * per day and product, not per day, rail and product).
   */
  private productMovements(scope: TenantScope, currency: string, from: string, to: string, granularity: ChartGranularity, sums: string[]): Promise<FactRow[]> {
    const movements = 'new_minor, expansion_minor, contraction_minor, churned_minor, reactivation_minor';
    return this.factRows(
      `SELECT CASE WHEN day < $4::date THEN NULL ELSE ${PERIOD('$6', 'day')} END AS p, seg,
              sum(new_minor) AS "newMinor", sum(expansion_minor) AS "expansionMinor", sum(contraction_minor) AS "contractionMinor",
              sum(churned_minor) AS "churnedMinor", sum(reactivation_minor) AS "reactivationMinor" FROM (
         SELECT month AS day, CASE WHEN rail = 'all' THEN '' ELSE ${segmentKey('product')} END AS seg, ${movements} FROM revenue_mrr_months
          WHERE project_id = $1 AND env = $2 AND currency = $3 AND (rail = 'all' OR product_id <> '*') AND month < date_trunc('month', $4::date::timestamp)::date
         UNION ALL
         SELECT day, '', ${movements} FROM revenue_mrr_movements
          WHERE project_id = $1 AND env = $2 AND currency = $3 AND product_id = '*' AND rail = 'all'
            AND day >= date_trunc('month', $4::date::timestamp)::date AND day <= $5::date
         UNION ALL
         SELECT day, seg, ${movements} FROM revenue_mrr_splits
          WHERE project_id = $1 AND env = $2 AND currency = $3 AND split = 'product'
            AND day >= date_trunc('month', $4::date::timestamp)::date AND day <= $5::date
       ) u GROUP BY 1, 2`,
      [scope.projectId, scope.env, currency, from, to, granularity],
      sums,
    );
  }

  /**
   * Payments, and refunds and chargebacks less their reversals (each on its own day), per period
   * and segment in one currency (the total is their sum), from their sums per split
   * (`revenue_day_splits`: one row per day and segment).
   */
  payments(scope: TenantScope, currency: string, from: string, to: string, granularity: ChartGranularity, segment: ChartSegment): Promise<FactRow[]> {
    return this.factRows(
      `SELECT ${PERIOD('$6', 'day')} AS p, seg, sum(payments) AS payments, sum(gross_minor) AS "grossMinor", sum(refunds) AS refunds, sum(refunds_minor) AS "refundsMinor"
         FROM revenue_day_splits
        WHERE project_id = $1 AND env = $2 AND currency = $3 AND split = $7 AND day BETWEEN $4::date AND $5::date
        GROUP BY 1, 2`,
      [scope.projectId, scope.env, currency, from, to, granularity, segment],
      ['payments', 'grossMinor', 'refunds', 'refundsMinor'],
    );
  }

  /**
   * Per period and segment, and before `from` (period null): `paying`, subscriptions entering
   * (`activeIn`) and leaving (`activeOut`) the ledger's paying set (`subscription_state_days`);
   * `lifecycle`, the net change of each state the state chart counts (`subscription_lifecycle_days`,
   * one sum per state named as the chart's value: the chart needs only levels). The range's days
   * come from their sums per split (`subscription_level_splits`: one row per day and segment, a
   * column per state), the time before from the month sums.
   */
  states(
    scope: TenantScope,
    from: string,
    to: string,
    granularity: ChartGranularity,
    segment: ChartSegment,
    family: 'paying' | 'lifecycle',
  ): Promise<FactRow[]> {
    const paying = family === 'paying';
    const months = paying ? 'subscription_state_months' : 'subscription_lifecycle_months';
    const stateFilter = paying ? `AND state = 'active'` : `AND state IN (${STATE_SUMS.map(([, state]) => `'${state}'`).join(', ')})`;
    // The month rows (one per state) in the split rows' columns: `active` entering and leaving, the other states' net changes.
    const monthLevels = STATE_SUMS.flatMap(([, state]) =>
      state === 'active'
        ? [`CASE WHEN state = 'active' THEN entered ELSE 0 END`, `CASE WHEN state = 'active' THEN "left" ELSE 0 END`]
        : [`CASE WHEN state = '${state}' THEN entered - "left" ELSE 0 END`],
    );
    const levels = STATE_SUMS.flatMap(([, state]) => (state === 'active' ? ['active_entered', 'active_left'] : [state]));
    const sums = paying
      ? `sum(active_entered) AS "activeIn", sum(active_left) AS "activeOut"`
      : STATE_SUMS.map(([column, state]) => (state === 'active' ? `sum(active_entered - active_left) AS active` : `sum(${state}) AS "${column}"`)).join(', ');
    return this.factRows(
      `SELECT CASE WHEN day < $3::date THEN NULL ELSE ${PERIOD('$5', 'day')} END AS p, seg, ${sums} FROM (
         SELECT month AS day, ${segmentKey(segment)} AS seg, ${monthLevels.map((l, i) => `${l} AS ${levels[i]}`).join(', ')} FROM ${months}
          WHERE project_id = $1 AND env = $2 ${stateFilter} AND month < date_trunc('month', $3::date::timestamp)::date
         UNION ALL
         SELECT day, seg, ${levels.join(', ')} FROM subscription_level_splits
          WHERE project_id = $1 AND env = $2 AND family = $6 AND split = $7
            AND day >= date_trunc('month', $3::date::timestamp)::date AND day <= $4::date
       ) u GROUP BY 1, 2`,
      [scope.projectId, scope.env, from, to, granularity, family, segment],
      paying ? ['activeIn', 'activeOut'] : STATE_SUMS.map(([column]) => column),
    );
  }

  /** Trials started, ended and converted per period, from their sums per day (`subscription_trial_splits`, the total). */
  trials(scope: TenantScope, from: string, to: string, granularity: ChartGranularity): Promise<FactRow[]> {
    return this.factRows(
      `SELECT ${PERIOD('$5', 'day')} AS p, '' AS seg, sum(started) AS started, sum(ended) AS ended, sum(converted) AS converted
         FROM subscription_trial_splits
        WHERE project_id = $1 AND env = $2 AND split = 'none' AND day BETWEEN $3::date AND $4::date
        GROUP BY 1`,
      [scope.projectId, scope.env, from, to, granularity],
      ['started', 'ended', 'converted'],
    );
  }

  /**
   * New customers per creation period, first payments per payment period, and (`converted`)
   * the first payments made in the period their customer was created in.
   */
  newCustomers(scope: TenantScope, from: string, to: string, granularity: ChartGranularity): Promise<FactRow[]> {
    return this.factRows(
      `SELECT ${PERIOD('$5', 'day')} AS p, '' AS seg, sum(n) AS "newCustomers", sum(k) AS "newPaying", sum(c) AS converted FROM (
         SELECT day, new_customers AS n, 0 AS k, 0 AS c
           FROM customer_day_facts WHERE project_id = $1 AND env = $2 AND day BETWEEN $3::date AND $4::date
         UNION ALL
         SELECT paying_day, 0, customers,
                CASE WHEN ${PERIOD('$5', 'paying_day')} = ${PERIOD('$5', 'created_day')} AND created_day >= $3::date THEN customers ELSE 0 END
           FROM revenue_first_paying WHERE project_id = $1 AND env = $2 AND paying_day BETWEEN $3::date AND $4::date
       ) u GROUP BY 1`,
      [scope.projectId, scope.env, from, to, granularity],
      ['newCustomers', 'newPaying', 'converted'],
    );
  }

  /**
   * Events and errors per period; distinct active customers per day (`uniqueUsers`, granularity
   * day), or per week or month the customers whose first (`firsts`) and whose last (`lasts`)
   * active day in the period is in the range: either counts a period's distinct customers within
   * the range when the range does not clip its start (`firsts`) or its end (`lasts`).
   */
  events(scope: TenantScope, from: string, to: string, granularity: ChartGranularity): Promise<FactRow[]> {
    return this.factRows(
      `SELECT ${PERIOD('$5', 'day')} AS p, '' AS seg, sum(e) AS events, sum(x) AS errors, sum(a) AS "uniqueUsers", sum(f) AS firsts, sum(l) AS lasts FROM (
         SELECT day, events AS e, errors AS x, 0 AS a, 0 AS f, 0 AS l
           FROM event_day_facts WHERE project_id = $1 AND env = $2 AND day BETWEEN $3::date AND $4::date
         UNION ALL
         SELECT day, 0, 0, customers, 0, 0
           FROM active_day_totals WHERE $5 = 'day' AND project_id = $1 AND env = $2 AND day BETWEEN $3::date AND $4::date
         UNION ALL
         SELECT day, 0, 0, 0, firsts, lasts
           FROM active_period_days WHERE project_id = $1 AND env = $2 AND granularity = $5 AND day BETWEEN $3::date AND $4::date
       ) u GROUP BY 1`,
      [scope.projectId, scope.env, from, to, granularity],
      ['events', 'errors', 'uniqueUsers', 'firsts', 'lasts'],
    );
  }

  /** Distinct customers active on a day in [from, to] (a range inside one week or month). */
  async activeBetween(scope: TenantScope, from: string, to: string): Promise<number> {
    const row = await this.sql.one<{ n: Num }>(
      `SELECT count(DISTINCT customer_id) AS n FROM reporting_active_days WHERE project_id = $1 AND env = $2 AND day BETWEEN $3::date AND $4::date`,
      [scope.projectId, scope.env, from, to],
    );
    return Number(row?.n ?? 0);
  }

  /** Distinct customers active on a day from `from` to today (those whose last active day is in it). */
  async activeSince(scope: TenantScope, from: string): Promise<number> {
    const row = await this.sql.one<{ n: Num }>(
      `SELECT coalesce(sum(customers), 0) AS n FROM reporting_active_day_counts WHERE project_id = $1 AND env = $2 AND day >= $3::date`,
      [scope.projectId, scope.env, from],
    );
    return Number(row?.n ?? 0);
  }

  /** Cohorts by first-payment month from `fromMonth` to `toMonth`: customers, and net cash per month in one currency. */
  async cohorts(
    scope: TenantScope,
    currency: string,
    fromMonth: string,
    toMonth: string,
  ): Promise<Array<{ cohortMonth: string; customers: number; cash: Map<string, number> }>> {
    const rows = await this.sql.rows<{ cohort_month: string; customers: Num; cash: Array<[string, Num]> | null }>(
      `SELECT to_char(c.cohort_month, 'YYYY-MM-DD') AS cohort_month, c.customers,
              (SELECT json_agg(json_build_array(to_char(m.month, 'YYYY-MM-DD'), m.net_minor)) FROM revenue_cohort_months m
                WHERE m.project_id = c.project_id AND m.env = c.env AND m.cohort_month = c.cohort_month AND m.currency = $3) AS cash
         FROM revenue_cohorts c
        WHERE c.project_id = $1 AND c.env = $2 AND c.cohort_month BETWEEN $4::date AND $5::date AND c.customers > 0
        ORDER BY c.cohort_month`,
      [scope.projectId, scope.env, currency, fromMonth, toMonth],
    );
    return rows.map((r) => ({
      cohortMonth: r.cohort_month,
      customers: Number(r.customers),
      cash: new Map((r.cash ?? []).map(([month, amount]) => [month, Number(amount)])),
    }));
  }
}

/** The states of `subscription_lifecycle_days` and their names in the chart's sums. */
export const STATE_SUMS = [
  ['active', 'active'],
  ['trialing', 'trialing'],
  ['inGracePeriod', 'in_grace_period'],
  ['inBillingRetry', 'in_billing_retry'],
  ['paused', 'paused'],
] as const;
