// The data of bench/charts-console.mjs, written with set-based SQL (generate_series) into the
// tables the service keeps: customers created over the chart range (their per-day counts follow
// through the customers trigger), their developer and anonymous ids and emails, a tenth of them
// paying on the card rail and three in ten with a rail subscription in every list state, events
// over the last 30 days (the per-day event facts follow through the events trigger), then the
// read side of bench/lib/read-scale-seed.mjs (ledger, errors, analytics, activity) and the
// per-day facts the charts read over `days` days: payments and refunds, MRR movements at the
// three key levels, subscriptions entering and leaving each state (the ledger's and the
// lifecycle's), trials, refunds, first payments, cohorts,
// older event days, active customers per day and per week and month (the sums per split follow
// through the day tables' triggers).
import { withClient } from './common.mjs';
import { seedReadScale } from './read-scale-seed.mjs';

const RAILS = ['ios_store', 'card_payments', 'android_store'];
const PRODUCTS = 5;
const CHUNK = 500_000;
const EVENT_DAYS = 30;

/**
 * Seeds `customers` customers and `events` events of the project's sandbox, with chart facts over
 * `days` days ending today. Customer ids are `cdcust_pre<n>`, developer ids `pre_user_<n>`, emails
 * `user<n>@bench.example` (n from 0).
 */
export async function seedCharts(url, { projectId, appId, customers, events, days }) {
  const paying = Math.max(1, Math.floor(customers / 10));
  const subscribed = Math.max(paying, Math.floor((customers * 3) / 10));
  await withClient(url, async (client) => {
    const q = (sql, params = []) => client.query(sql, [projectId, ...params]);
    for (let from = 0; from < customers; from += CHUNK) {
      const to = Math.min(customers, from + CHUNK) - 1;
      await q(
        `INSERT INTO customers (id, project_id, env, email, created_at, updated_at)
         SELECT 'cdcust_pre' || g, $1, 'sandbox', 'user' || g || '@bench.example',
                now() - (g % $4::int) * interval '1 day' - (g % 86399) * interval '1 second', now()
           FROM generate_series($2::int, $3::int) g`,
        [from, to, days],
      );
      // Before the rows that reference them: the foreign-key checks plan their customer lookup
      // from these statistics (an unanalysed table reads as empty, and each check scans it).
      await client.query('ANALYZE customers');
      await q(
        `INSERT INTO customer_aliases (project_id, env, type, value, customer_id, created_at)
         SELECT $1, 'sandbox', t.type, t.prefix || g, 'cdcust_pre' || g, now()
           FROM generate_series($2::int, $3::int) g, (VALUES ('developer', 'pre_user_'), ('anonymous', 'pre_anon_')) t(type, prefix)`,
        [from, to],
      );
    }
    await q(
      `INSERT INTO customer_aliases (project_id, env, type, value, customer_id, created_at)
       SELECT $1, 'sandbox', 'card_customer_id', 'cus_pre' || g, 'cdcust_pre' || g, now() FROM generate_series(0, $2::int - 1) g`,
      [paying],
    );
    // Rail subscriptions: the paying tenth active on the card rail (the ledger's subscriptions
    // sub_<n>), the others over the three rails in every state the list filters on.
    await q(
      `INSERT INTO rail_subscriptions (project_id, env, rail, subscription_id, customer_id, product_id, state, valid_until, rail_time_ms, raw_status, created_at, updated_at)
       SELECT $1, 'sandbox', rail, CASE WHEN g < $2::int THEN 'sub_' ELSE 'sub_x' END || g, 'cdcust_pre' || g, 'prod_' || (g % ${PRODUCTS}),
              CASE WHEN status IN ('active', 'trialing', 'past_due') THEN 'active' ELSE 'inactive' END,
              now() + CASE WHEN status IN ('active', 'trialing', 'past_due') THEN interval '20 days' ELSE interval '-10 days' END,
              (extract(epoch FROM now()) * 1000)::bigint - g, status, now() - (g % $4::int) * interval '1 day', now()
         FROM (SELECT g,
                      CASE WHEN g < $2::int THEN 'card_payments' ELSE (ARRAY['ios_store', 'card_payments', 'android_store'])[1 + g % 3] END AS rail,
                      CASE WHEN g < $2::int THEN 'active'
                           ELSE (ARRAY['active', 'active', 'active', 'active', 'trialing', 'past_due', 'paused', 'refunded', 'canceled', 'canceled'])[1 + g % 10] END AS status
                 FROM generate_series(0, $3::int - 1) g) s`,
      [paying, subscribed, days],
    );
    const nowMs = Date.now();
    for (let from = 0; from < events; from += CHUNK) {
      const to = Math.min(events, from + CHUNK) - 1;
      await q(
        `INSERT INTO events (project_id, env, event_id, client_day, app_id, name, timestamp_ms, received_at_ms, level, fingerprint, customer_id)
         SELECT $1, 'sandbox', 'ev_chart_' || n, (to_timestamp(ts / 1000.0) AT TIME ZONE 'UTC')::date, $2,
                CASE WHEN n % 50 = 0 THEN 'error.unhandled' ELSE 'screen_view' END, ts, ts,
                CASE WHEN n % 50 = 0 THEN 'error' END, CASE WHEN n % 50 = 0 THEN lpad(to_hex(n % 24 + 439041024), 8, '0') END,
                'cdcust_pre' || (n % $3::int)
           FROM (SELECT n, $4::bigint - (n % ${EVENT_DAYS * 86_400}) * 1000 AS ts FROM generate_series($5::bigint, $6::bigint) n) s`,
        [appId, Math.max(1, customers), nowMs, from, to],
      );
    }
    await client.query('ANALYZE customer_aliases');
    await client.query('ANALYZE rail_subscriptions');
    await seedReadScale(url, projectId, customers);
    await q(
      `INSERT INTO revenue_customer_products (project_id, env, customer_id, rail, product_id, currency, monthly_minor)
       SELECT $1, 'sandbox', 'cdcust_pre' || g, 'card_payments', 'prod_' || (g % ${PRODUCTS}), 'USD', 500 + g % 5000 FROM generate_series(0, $2::int - 1) g`,
      [paying],
    );
    await q(
      `INSERT INTO revenue_customer_firsts (project_id, env, customer_id, created_day, first_paid_at, first_mrr_day)
       SELECT c.project_id, c.env, c.id, (c.created_at AT TIME ZONE 'UTC')::date, c.created_at + interval '1 day', (c.created_at AT TIME ZONE 'UTC')::date + 1
         FROM customers c WHERE c.project_id = $1 AND c.env = 'sandbox' AND c.id IN (SELECT 'cdcust_pre' || g FROM generate_series(0, $2::int - 1) g)`,
      [paying],
    );
    await seedFacts(q, { customers, events, days });
    // Each customer's week and month of activity and the counts of first and last days, as the activity feed keeps them.
    await q(
      `INSERT INTO reporting_active_periods (project_id, env, granularity, period, customer_id, first_day, last_day)
       SELECT project_id, env, g, date_trunc(g, day::timestamp)::date, customer_id, min(day), max(day)
         FROM reporting_active_days, (VALUES ('week'), ('month')) v(g) WHERE project_id = $1 AND env = 'sandbox' GROUP BY 1, 2, 3, 4, 5`,
    );
    await q(
      `INSERT INTO active_period_days (project_id, env, granularity, day, firsts, lasts)
       SELECT project_id, env, granularity, day, sum(f), sum(l) FROM (
         SELECT project_id, env, granularity, first_day AS day, 1 AS f, 0 AS l FROM reporting_active_periods WHERE project_id = $1 AND env = 'sandbox'
         UNION ALL SELECT project_id, env, granularity, last_day, 0, 1 FROM reporting_active_periods WHERE project_id = $1 AND env = 'sandbox'
       ) e GROUP BY 1, 2, 3, 4`,
    );
    await client.query('ANALYZE');
    // The sums the triggers kept while seeding, vacuumed as autovacuum leaves rows of past days:
    // their index-only reads find every page visible.
    await client.query('VACUUM subscription_level_splits, revenue_day_splits, active_period_days');
  });
}

/** The per-day facts of `days` days ending today, their sizes following the customer count. */
async function seedFacts(q, { customers, events, days }) {
  const scale = Math.max(1, Math.round(customers / 1000));
  const grid = `FROM generate_series(0, ${days - 1}) d, unnest($2::text[]) WITH ORDINALITY r(rail, ri), generate_series(0, ${PRODUCTS - 1}) p`;
  await q(
    `INSERT INTO revenue_day_facts (project_id, env, day, rail, product_id, currency, payments, gross_minor, refunds, refunds_minor)
     SELECT $1, 'sandbox', current_date - d, rail, 'prod_' || p, 'USD', n, n * 999, n / 20, (n / 20) * 999
       FROM (SELECT d, rail, p, $3::int * (1 + (d * 7 + ri::int * 3 + p) % 9) AS n ${grid}) s`,
    [RAILS, scale],
  );
  // MRR movements: per rail and product, then their sums per rail ('*') and over every rail ('all').
  await q(
    `WITH m AS (
       SELECT current_date - d AS day, rail, 'prod_' || p AS product_id,
              $3::int * 999 * (2 + (d + p) % 5) AS n, $3::int * 200 * ((d + ri::int) % 3) AS e, $3::int * 150 * ((d + p) % 2) AS c,
              $3::int * 999 * ((d + ri::int + p) % 3) AS x, $3::int * 999 * (d % 4 / 3) AS r
         ${grid})
     INSERT INTO revenue_mrr_movements (project_id, env, day, rail, product_id, currency, new_minor, expansion_minor, contraction_minor, churned_minor, reactivation_minor)
     SELECT $1, 'sandbox', day, rail, product_id, 'USD', n, e, c, x, r FROM m
     UNION ALL SELECT $1, 'sandbox', day, rail, '*', 'USD', sum(n), sum(e), sum(c), sum(x), sum(r) FROM m GROUP BY day, rail
     UNION ALL SELECT $1, 'sandbox', day, 'all', '*', 'USD', sum(n), sum(e), sum(c), sum(x), sum(r) FROM m GROUP BY day`,
    [RAILS, scale],
  );
  await q(
    `INSERT INTO subscription_state_days (project_id, env, day, rail, product_id, state, entered, "left")
     SELECT $1, 'sandbox', current_date - d, rail, 'prod_' || p, state, $3::int * (1 + (d + si::int + p) % 4), $3::int * ((d + si::int) % 3)
       ${grid}, unnest(ARRAY['active', 'trialing', 'in_grace_period', 'in_billing_retry', 'paused']) WITH ORDINALITY s(state, si)`,
    [RAILS, scale],
  );
  // The lifecycle's facts: the states' history as the state chart counts it, trials, refunds,
  // measured over the whole range (the charts answer null for their figures before `since`).
  await q(`UPDATE chart_measures SET since = least(since, current_date - ${days - 1}) WHERE measure = 'lifecycle' AND $1::text IS NOT NULL`);
  await q(
    `INSERT INTO subscription_lifecycle_days (project_id, env, day, rail, product_id, state, entered, "left")
     SELECT project_id, env, day, rail, product_id, state, entered, "left" FROM subscription_state_days WHERE project_id = $1 AND env = 'sandbox'`,
  );
  await q(
    `INSERT INTO subscription_trial_days (project_id, env, day, rail, product_id, started, ended, converted)
     SELECT $1, 'sandbox', current_date - d, rail, 'prod_' || p, $3::int * (2 + (d + p) % 3), $3::int * (1 + (d + ri::int) % 2), $3::int * ((d + p) % 2) ${grid}`,
    [RAILS, scale],
  );
  await q(
    `INSERT INTO revenue_refund_days (project_id, env, day, rail, product_id, currency, refunds, refunds_minor, reversals, reversals_minor)
     SELECT $1, 'sandbox', current_date - d, rail, 'prod_' || p, 'USD', n, n * 999, n / 4, (n / 4) * 999
       FROM (SELECT d, rail, p, $3::int * (1 + (d + ri::int + p) % 3) AS n ${grid}) s`,
    [RAILS, scale],
  );
  await q(
    `INSERT INTO revenue_first_paying (project_id, env, paying_day, created_day, customers)
     SELECT $1, 'sandbox', current_date - d, current_date - d - k, $2::int * (1 + (d + k) % 3)
       FROM generate_series(0, ${days - 1}) d, generate_series(0, 6) k`,
    [scale],
  );
  await q(
    `INSERT INTO revenue_cohorts (project_id, env, cohort_month, customers)
     SELECT $1, 'sandbox', (date_trunc('month', current_date) - m * interval '1 month')::date, $2::int * (20 + m % 7)
       FROM generate_series(0, ${Math.ceil(days / 30)}) m`,
    [scale],
  );
  await q(
    `INSERT INTO revenue_cohort_months (project_id, env, cohort_month, month, currency, net_minor)
     SELECT $1, 'sandbox', (date_trunc('month', current_date) - c * interval '1 month')::date, (date_trunc('month', current_date) - m * interval '1 month')::date,
            'USD', $2::int * 999 * (20 + c % 7) * (10 - (c - m) % 10) / 10
       FROM generate_series(0, ${Math.ceil(days / 30)}) c, generate_series(0, ${Math.ceil(days / 30)}) m WHERE m <= c`,
    [scale],
  );
  // Event days before the 30 days of seeded events, and active customers on every day.
  await q(
    `INSERT INTO event_day_facts (project_id, env, day, shard, events, errors)
     SELECT $1, 'sandbox', current_date - d, 0, $2::bigint, $2::bigint / 50 FROM generate_series(${EVENT_DAYS + 1}, ${days - 1}) d
     ON CONFLICT DO NOTHING`,
    [Math.max(1, Math.round(events / EVENT_DAYS))],
  );
  await q(
    `INSERT INTO active_day_totals (project_id, env, day, customers)
     SELECT $1, 'sandbox', current_date - d, $2::bigint * (5 + d % 3) / 7 FROM generate_series(0, ${days - 1}) d
     ON CONFLICT DO NOTHING`,
    [Math.max(1, Math.round(customers / EVENT_DAYS))],
  );
}
