import type { MigrationInterface, QueryRunner } from 'typeorm';

const ENV = `text NOT NULL CHECK (env IN ('sandbox', 'production'))`;
const RAIL = `text NOT NULL CHECK (rail IN ('ios_store', 'card_payments', 'android_store'))`;
const PRODUCT = `text NOT NULL CHECK (char_length(product_id) <= 200)`;
const COUNT = (column: string) => `${column} integer NOT NULL DEFAULT 0 CHECK (${column} >= 0)`;
const AMOUNT = (column: string) => `${column} numeric NOT NULL DEFAULT 0 CHECK (${column} >= 0)`;

/** The subscription states the state chart counts, one per subscription at a time. */
const CHART_STATES = ['active', 'trialing', 'in_grace_period', 'in_billing_retry', 'paused'] as const;
const STATE_LIST = CHART_STATES.map((s) => `'${s}'`).join(', ');

/** The first-payment cohorts' cash of every refund, chargeback (less) and reversal (more), signed by `sign`. */
const COHORT_REFUNDS = (sign: 1 | -1) => `
  INSERT INTO revenue_cohort_months AS c (project_id, env, cohort_month, month, currency, net_minor)
  SELECT f.project_id, f.env, date_trunc('month', fi.first_paid_at AT TIME ZONE 'UTC')::date, date_trunc('month', f.occurred_at AT TIME ZONE 'UTC')::date,
         f.currency, ${sign} * sum(CASE WHEN f.kind = 'reversal' THEN f.amount_minor ELSE -f.amount_minor END)
    FROM revenue_refunds f
    JOIN revenue_customer_firsts fi ON fi.project_id = f.project_id AND fi.env = f.env AND fi.customer_id = f.customer_id AND fi.first_paid_at IS NOT NULL
   GROUP BY 1, 2, 3, 4, 5
  ON CONFLICT ON CONSTRAINT revenue_cohort_months_pk DO UPDATE SET net_minor = c.net_minor + EXCLUDED.net_minor`;

/** The rail time's day of a rail record, never a day to come (as the ledger keys a change). */
const RAIL_DAY = `(least(to_timestamp(r.rail_time_ms / 1000.0), now()) AT TIME ZONE 'UTC')::date`;

/**
 * The charts' facts of the subscription lifecycle, written by the revenue ledger in the
 * transaction of each rail change and keyed by the day the fact belongs to (the rail time's
 * day, a refund's own time):
 *
 * - `subscription_chart_states`: the state (and product) each subscription is counted in now;
 *   no row, counted in none (ended, refunded, on hold, or its period lapsed).
 * - `subscription_lifecycle_days`: subscriptions entering and leaving each counted state per
 *   day, rail and product; the count at a day's end is the sum up to it.
 * - `subscription_trial_days`: trials started, ended (left `trialing`) and converted (left it
 *   for `active`) per day, rail and product.
 * - `revenue_refund_days`: refunds and chargebacks, and their reversals, per day (of their own
 *   rail time), rail, product and currency, in minor units.
 * - `chart_measures`: the first day the lifecycle facts were recorded (`lifecycle`); the
 *   charts answer null for those figures before it.
 * - `revenue_cohort_months` becomes net: refunds and chargebacks are taken from (reversals
 *   given back to) the cash of the refunded customer's cohort in the refund's month.
 *
 * Filled from the existing data: refunds from `revenue_refunds`; the `active` history from the
 * ledger's paying counts (`subscription_state_days`), and each subscription's current state,
 * where it differs, entered on its last rail time's day. Trial starts and conversions of the
 * time before were not recorded: the `lifecycle` measure starts at the earliest lifecycle data
 * (a stored subscription object's last update, a refund) or today.
 */
export class LifecycleChartFacts1790000003750 implements MigrationInterface {
  name = 'LifecycleChartFacts1790000003750';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE subscription_chart_states (
        project_id      text NOT NULL,
        env             ${ENV},
        rail            ${RAIL},
        subscription_id text NOT NULL CHECK (char_length(subscription_id) BETWEEN 1 AND 512),
        state           text NOT NULL CHECK (state IN (${STATE_LIST})),
        product_id      ${PRODUCT},
        CONSTRAINT subscription_chart_states_pk PRIMARY KEY (project_id, env, rail, subscription_id)
      )`);
    await q.query(`
      CREATE TABLE subscription_lifecycle_days (
        project_id text NOT NULL REFERENCES projects (id),
        env        ${ENV},
        day        date NOT NULL,
        rail       ${RAIL},
        product_id ${PRODUCT},
        state      text NOT NULL CHECK (state IN (${STATE_LIST})),
        ${COUNT('entered')},
        ${COUNT('"left"')},
        CONSTRAINT subscription_lifecycle_days_pk PRIMARY KEY (project_id, env, day, rail, product_id, state)
      )`);
    await q.query(`
      CREATE TABLE subscription_trial_days (
        project_id text NOT NULL REFERENCES projects (id),
        env        ${ENV},
        day        date NOT NULL,
        rail       ${RAIL},
        product_id ${PRODUCT},
        ${COUNT('started')},
        ${COUNT('ended')},
        ${COUNT('converted')},
        CONSTRAINT subscription_trial_days_converted_ck CHECK (converted <= ended),
        CONSTRAINT subscription_trial_days_pk PRIMARY KEY (project_id, env, day, rail, product_id)
      )`);
    await q.query(`
      CREATE TABLE revenue_refund_days (
        project_id text NOT NULL REFERENCES projects (id),
        env        ${ENV},
        day        date NOT NULL,
        rail       ${RAIL},
        product_id ${PRODUCT},
        currency   text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
        ${COUNT('refunds')},
        ${AMOUNT('refunds_minor')},
        ${COUNT('reversals')},
        ${AMOUNT('reversals_minor')},
        CONSTRAINT revenue_refund_days_pk PRIMARY KEY (project_id, env, day, rail, product_id, currency)
      )`);
    await q.query(`CREATE TABLE chart_measures (measure text PRIMARY KEY CHECK (measure IN ('lifecycle')), since date NOT NULL)`);

    await q.query(`
      INSERT INTO chart_measures (measure, since)
      SELECT 'lifecycle', least((now() AT TIME ZONE 'UTC')::date,
                                (SELECT min((updated_at AT TIME ZONE 'UTC')::date) FROM rail_subscriptions WHERE lifecycle_state IS NOT NULL),
                                (SELECT min((occurred_at AT TIME ZONE 'UTC')::date) FROM revenue_refunds))`);
    await q.query(`
      INSERT INTO revenue_refund_days (project_id, env, day, rail, product_id, currency, refunds, refunds_minor, reversals, reversals_minor)
      SELECT f.project_id, f.env, (f.occurred_at AT TIME ZONE 'UTC')::date, f.rail, COALESCE(r.product_id, ''), f.currency,
             count(*) FILTER (WHERE f.kind <> 'reversal'), COALESCE(sum(f.amount_minor) FILTER (WHERE f.kind <> 'reversal'), 0),
             count(*) FILTER (WHERE f.kind = 'reversal'), COALESCE(sum(f.amount_minor) FILTER (WHERE f.kind = 'reversal'), 0)
        FROM revenue_refunds f
        LEFT JOIN rail_subscriptions r ON r.project_id = f.project_id AND r.env = f.env AND r.rail = f.rail AND r.subscription_id = f.subscription_id
       GROUP BY 1, 2, 3, 4, 5, 6`);
    await q.query(COHORT_REFUNDS(1));
    // The state each subscription counts in now: its lifecycle state, `active` and
    // `in_grace_period` while the ledger counts it paying; a record without a lifecycle state
    // is `active` while paying.
    await q.query(`
      INSERT INTO subscription_chart_states (project_id, env, rail, subscription_id, state, product_id)
      SELECT s.project_id, s.env, s.rail, s.subscription_id, c.state, COALESCE(r.product_id, '')
        FROM revenue_subscriptions s
        LEFT JOIN rail_subscriptions r ON r.project_id = s.project_id AND r.env = s.env AND r.rail = s.rail AND r.subscription_id = s.subscription_id
        CROSS JOIN LATERAL (SELECT CASE
                 WHEN r.lifecycle_state IS NULL THEN CASE WHEN s.active THEN 'active' END
                 WHEN r.lifecycle_state IN ('active', 'in_grace_period') THEN CASE WHEN s.active THEN r.lifecycle_state END
                 WHEN r.lifecycle_state IN ('trialing', 'in_billing_retry', 'paused') THEN r.lifecycle_state END AS state) c
       WHERE c.state IS NOT NULL`);
    // The paying history is the active history; a subscription counted otherwise now moved on its last rail time's day.
    await q.query(`
      INSERT INTO subscription_lifecycle_days (project_id, env, day, rail, product_id, state, entered, "left")
      SELECT project_id, env, day, rail, product_id, 'active', entered, "left" FROM subscription_state_days WHERE state = 'active'`);
    await q.query(`
      WITH moved AS (
        SELECT s.project_id, s.env, ${RAIL_DAY} AS day, s.rail, COALESCE(r.product_id, '') AS product_id, s.active AS paying, c.state
          FROM revenue_subscriptions s
          JOIN rail_subscriptions r ON r.project_id = s.project_id AND r.env = s.env AND r.rail = s.rail AND r.subscription_id = s.subscription_id
          LEFT JOIN subscription_chart_states c ON c.project_id = s.project_id AND c.env = s.env AND c.rail = s.rail AND c.subscription_id = s.subscription_id
         WHERE (CASE WHEN s.active THEN 'active' END) IS DISTINCT FROM c.state
      ), facts AS (
        SELECT project_id, env, day, rail, product_id, 'active' AS state, 0 AS entered, 1 AS gone FROM moved WHERE paying
        UNION ALL
        SELECT project_id, env, day, rail, product_id, state, 1, 0 FROM moved WHERE state IS NOT NULL
      )
      INSERT INTO subscription_lifecycle_days AS d (project_id, env, day, rail, product_id, state, entered, "left")
      SELECT project_id, env, day, rail, product_id, state, sum(entered), sum(gone) FROM facts GROUP BY 1, 2, 3, 4, 5, 6
      ON CONFLICT ON CONSTRAINT subscription_lifecycle_days_pk DO UPDATE SET entered = d.entered + EXCLUDED.entered, "left" = d."left" + EXCLUDED."left"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(COHORT_REFUNDS(-1));
    for (const table of ['chart_measures', 'revenue_refund_days', 'subscription_trial_days', 'subscription_lifecycle_days', 'subscription_chart_states']) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
