import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Shard rows per scope and day of the counters written on hot paths (events, new customers): a connection adds to one. */
export const DAY_FACT_SHARDS = 8;

const ENV = `text NOT NULL CHECK (env IN ('sandbox', 'production'))`;
const RAIL = `text NOT NULL CHECK (rail IN ('ios_store', 'card_payments', 'android_store'))`;
const CURRENCY = `text NOT NULL CHECK (currency ~ '^[A-Z]{3}$')`;
const AMOUNT = `numeric NOT NULL DEFAULT 0 CHECK`;
/** Rail subscription states a subscription-state count may hold. */
export const SUBSCRIPTION_FACT_STATES = ['active', 'trialing', 'in_grace_period', 'in_billing_retry', 'paused'] as const;

/**
 * The per-day facts the charts read (`GET /v1/charts/{chart}`), each written in the
 * transaction of the fact that changes it and keyed by the day the fact belongs to (the
 * rail time's day, the event's day), so a late fact corrects its own period. Every table
 * leads with (project_id, env, day) for range reads.
 *
 * - `revenue_day_facts`: payments and refunds per day, rail, product (`''` unknown) and currency.
 * - `revenue_mrr_movements`: MRR movements per day, rail and product (`all`/`*` over every
 *   rail/product, `rail`/`*` per rail) and currency; MRR at a day's end is the sum of every
 *   movement up to it.
 * - `revenue_customer_products`: each customer's current MRR per rail, product and currency
 *   (the ledger compares it before and after a change to classify the movement).
 * - `revenue_customer_firsts`: each paying customer's creation day, first payment and first MRR.
 * - `revenue_first_paying`: customers per (creation day, first payment day).
 * - `revenue_cohorts`, `revenue_cohort_months`: customers per first-payment month, and their
 *   net cash per month and currency.
 * - `subscription_state_days`: subscriptions entering and leaving each state per day, rail and
 *   product; the count in a state at a day's end is the sum up to it. The ledger writes `active`;
 *   the other states are for the subscription lifecycle to write from its transitions.
 * - `customer_day_facts`, `event_day_facts` (sharded, kept by triggers on `customers` and
 *   `events`), `active_day_totals` (distinct active customers per day, kept with the activity rollup).
 *
 * Each is filled from the existing data here, so charts are right from the first read; MRR
 * movements and subscription counts of the time before are rebuilt from the current
 * subscriptions (each as new on its creation day).
 */
export class ChartFacts1790000003600 implements MigrationInterface {
  name = 'ChartFacts1790000003600';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE revenue_day_facts (
        project_id    text    NOT NULL REFERENCES projects (id),
        env           ${ENV},
        day           date    NOT NULL,
        rail          ${RAIL},
        product_id    text    NOT NULL CHECK (char_length(product_id) <= 200),
        currency      ${CURRENCY},
        payments      integer NOT NULL DEFAULT 0 CHECK (payments >= 0),
        gross_minor   ${AMOUNT} (gross_minor >= 0),
        refunds       integer NOT NULL DEFAULT 0 CHECK (refunds >= 0),
        refunds_minor ${AMOUNT} (refunds_minor >= 0),
        CONSTRAINT revenue_day_facts_pk PRIMARY KEY (project_id, env, day, rail, product_id, currency)
      )`);
    await q.query(`
      CREATE TABLE revenue_mrr_movements (
        project_id         text NOT NULL REFERENCES projects (id),
        env                ${ENV},
        day                date NOT NULL,
        rail               text NOT NULL CHECK (rail IN ('all', 'ios_store', 'card_payments', 'android_store')),
        product_id         text NOT NULL CHECK (char_length(product_id) <= 200),
        currency           ${CURRENCY},
        new_minor          ${AMOUNT} (new_minor >= 0),
        expansion_minor    ${AMOUNT} (expansion_minor >= 0),
        contraction_minor  ${AMOUNT} (contraction_minor >= 0),
        churned_minor      ${AMOUNT} (churned_minor >= 0),
        reactivation_minor ${AMOUNT} (reactivation_minor >= 0),
        CONSTRAINT revenue_mrr_movements_all_ck CHECK (rail <> 'all' OR product_id = '*'),
        CONSTRAINT revenue_mrr_movements_pk PRIMARY KEY (project_id, env, day, rail, product_id, currency)
      )`);
    await q.query(`
      CREATE TABLE revenue_customer_products (
        project_id    text    NOT NULL,
        env           ${ENV},
        customer_id   text    NOT NULL,
        rail          ${RAIL},
        product_id    text    NOT NULL,
        currency      ${CURRENCY},
        monthly_minor numeric NOT NULL CHECK (monthly_minor > 0),
        CONSTRAINT revenue_customer_products_pk PRIMARY KEY (project_id, env, customer_id, rail, product_id, currency),
        CONSTRAINT revenue_customer_products_customer_fk FOREIGN KEY (project_id, env, customer_id) REFERENCES customers (project_id, env, id)
      )`);
    await q.query(`
      CREATE TABLE revenue_customer_firsts (
        project_id    text        NOT NULL,
        env           ${ENV},
        customer_id   text        NOT NULL,
        created_day   date        NOT NULL,
        first_paid_at timestamptz NULL,
        first_mrr_day date        NULL,
        CONSTRAINT revenue_customer_firsts_pk PRIMARY KEY (project_id, env, customer_id),
        CONSTRAINT revenue_customer_firsts_customer_fk FOREIGN KEY (project_id, env, customer_id) REFERENCES customers (project_id, env, id)
      )`);
    await q.query(`
      CREATE TABLE revenue_first_paying (
        project_id  text    NOT NULL REFERENCES projects (id),
        env         ${ENV},
        paying_day  date    NOT NULL,
        created_day date    NOT NULL,
        customers   integer NOT NULL CHECK (customers >= 0),
        CONSTRAINT revenue_first_paying_pk PRIMARY KEY (project_id, env, paying_day, created_day)
      )`);
    await q.query(`
      CREATE TABLE revenue_cohorts (
        project_id   text    NOT NULL REFERENCES projects (id),
        env          ${ENV},
        cohort_month date    NOT NULL CHECK (extract(day FROM cohort_month) = 1),
        customers    integer NOT NULL CHECK (customers >= 0),
        CONSTRAINT revenue_cohorts_pk PRIMARY KEY (project_id, env, cohort_month)
      )`);
    await q.query(`
      CREATE TABLE revenue_cohort_months (
        project_id   text    NOT NULL REFERENCES projects (id),
        env          ${ENV},
        cohort_month date    NOT NULL CHECK (extract(day FROM cohort_month) = 1),
        month        date    NOT NULL CHECK (extract(day FROM month) = 1),
        currency     ${CURRENCY},
        net_minor    numeric NOT NULL,
        CONSTRAINT revenue_cohort_months_pk PRIMARY KEY (project_id, env, cohort_month, month, currency)
      )`);
    await q.query(`
      CREATE TABLE subscription_state_days (
        project_id text    NOT NULL REFERENCES projects (id),
        env        ${ENV},
        day        date    NOT NULL,
        rail       ${RAIL},
        product_id text    NOT NULL CHECK (char_length(product_id) <= 200),
        state      text    NOT NULL CHECK (state IN (${SUBSCRIPTION_FACT_STATES.map((s) => `'${s}'`).join(', ')})),
        entered    integer NOT NULL DEFAULT 0 CHECK (entered >= 0),
        "left"     integer NOT NULL DEFAULT 0 CHECK ("left" >= 0),
        CONSTRAINT subscription_state_days_pk PRIMARY KEY (project_id, env, day, rail, product_id, state)
      )`);
    const sharded = (table: string, columns: string) => `
      CREATE TABLE ${table} (
        project_id text     NOT NULL,
        env        ${ENV},
        day        date     NOT NULL,
        shard      smallint NOT NULL CHECK (shard BETWEEN 0 AND ${DAY_FACT_SHARDS - 1}),
        ${columns},
        CONSTRAINT ${table}_pk PRIMARY KEY (project_id, env, day, shard)
      )`;
    await q.query(sharded('customer_day_facts', 'new_customers bigint NOT NULL'));
    await q.query(sharded('event_day_facts', 'events bigint NOT NULL, errors bigint NOT NULL'));
    await q.query(`
      CREATE TABLE active_day_totals (
        project_id text   NOT NULL,
        env        ${ENV},
        day        date   NOT NULL,
        customers  bigint NOT NULL CHECK (customers >= 0),
        CONSTRAINT active_day_totals_pk PRIMARY KEY (project_id, env, day)
      )`);
    await q.query(`CREATE INDEX revenue_payments_customer_idx ON revenue_payments (project_id, env, customer_id)`);

    // New customers per creation day, and events and errors per event day: once per statement,
    // from its new rows (an event delivered again updates its row and is not counted twice).
    await q.query(`
      CREATE FUNCTION chart_customers_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO customer_day_facts AS f (project_id, env, day, shard, new_customers)
        SELECT project_id, env, (created_at AT TIME ZONE 'UTC')::date, pg_backend_pid() % ${DAY_FACT_SHARDS}, count(*)
          FROM inserted GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT ON CONSTRAINT customer_day_facts_pk DO UPDATE SET new_customers = f.new_customers + EXCLUDED.new_customers;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER chart_customers_inserted AFTER INSERT ON customers
        REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION chart_customers_inserted()`);
    await q.query(`
      CREATE FUNCTION chart_events_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO event_day_facts AS f (project_id, env, day, shard, events, errors)
        SELECT project_id, env, client_day, pg_backend_pid() % ${DAY_FACT_SHARDS}, count(*), count(*) FILTER (WHERE fingerprint IS NOT NULL)
          FROM inserted GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
        ON CONFLICT ON CONSTRAINT event_day_facts_pk DO UPDATE SET events = f.events + EXCLUDED.events, errors = f.errors + EXCLUDED.errors;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER chart_events_inserted AFTER INSERT ON events
        REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION chart_events_inserted()`);

    // The facts of the existing data.
    await q.query(`
      INSERT INTO customer_day_facts (project_id, env, day, shard, new_customers)
      SELECT project_id, env, (created_at AT TIME ZONE 'UTC')::date, 0, count(*) FROM customers GROUP BY 1, 2, 3`);
    await q.query(`
      INSERT INTO event_day_facts (project_id, env, day, shard, events, errors)
      SELECT project_id, env, client_day, 0, count(*), count(*) FILTER (WHERE fingerprint IS NOT NULL) FROM events GROUP BY 1, 2, 3`);
    await q.query(`
      INSERT INTO active_day_totals (project_id, env, day, customers)
      SELECT project_id, env, day, count(*) FROM reporting_active_days GROUP BY 1, 2, 3`);
    await q.query(`
      INSERT INTO revenue_day_facts (project_id, env, day, rail, product_id, currency, payments, gross_minor)
      SELECT project_id, env, (paid_at AT TIME ZONE 'UTC')::date, rail, '', currency, count(*), sum(amount_minor) FROM revenue_payments GROUP BY 1, 2, 3, 4, 5, 6`);
    await q.query(`
      INSERT INTO revenue_customer_products (project_id, env, customer_id, rail, product_id, currency, monthly_minor)
      SELECT s.project_id, s.env, s.customer_id, s.rail, COALESCE(r.product_id, ''), s.currency, sum(s.monthly_minor)
        FROM revenue_subscriptions s
        LEFT JOIN rail_subscriptions r ON r.project_id = s.project_id AND r.env = s.env AND r.rail = s.rail AND r.subscription_id = s.subscription_id
       WHERE s.active AND s.monthly_minor > 0
       GROUP BY 1, 2, 3, 4, 5, 6`);
    // Current MRR as new on each subscription's creation day, at the three key levels.
    await q.query(`
      WITH subs AS (
        SELECT s.project_id, s.env, (COALESCE(r.created_at, s.updated_at) AT TIME ZONE 'UTC')::date AS day, s.rail, COALESCE(r.product_id, '') AS product_id,
               s.currency, s.monthly_minor
          FROM revenue_subscriptions s
          LEFT JOIN rail_subscriptions r ON r.project_id = s.project_id AND r.env = s.env AND r.rail = s.rail AND r.subscription_id = s.subscription_id
         WHERE s.active AND s.monthly_minor > 0
      )
      INSERT INTO revenue_mrr_movements (project_id, env, day, rail, product_id, currency, new_minor)
      SELECT project_id, env, day, rail, product_id, currency, sum(monthly_minor) FROM subs GROUP BY 1, 2, 3, 4, 5, 6
      UNION ALL SELECT project_id, env, day, rail, '*', currency, sum(monthly_minor) FROM subs GROUP BY 1, 2, 3, 4, 6
      UNION ALL SELECT project_id, env, day, 'all', '*', currency, sum(monthly_minor) FROM subs GROUP BY 1, 2, 3, 6`);
    await q.query(`
      INSERT INTO subscription_state_days (project_id, env, day, rail, product_id, state, entered)
      SELECT s.project_id, s.env, (COALESCE(r.created_at, s.updated_at) AT TIME ZONE 'UTC')::date, s.rail, COALESCE(r.product_id, ''), 'active', count(*)
        FROM revenue_subscriptions s
        LEFT JOIN rail_subscriptions r ON r.project_id = s.project_id AND r.env = s.env AND r.rail = s.rail AND r.subscription_id = s.subscription_id
       WHERE s.active GROUP BY 1, 2, 3, 4, 5`);
    await q.query(`
      INSERT INTO revenue_customer_firsts (project_id, env, customer_id, created_day, first_paid_at, first_mrr_day)
      SELECT c.project_id, c.env, c.id, (c.created_at AT TIME ZONE 'UTC')::date, p.first_paid_at, m.first_mrr_day
        FROM customers c
        LEFT JOIN (SELECT project_id, env, customer_id, min(paid_at) AS first_paid_at FROM revenue_payments GROUP BY 1, 2, 3) p
               ON p.project_id = c.project_id AND p.env = c.env AND p.customer_id = c.id
        LEFT JOIN (SELECT s.project_id, s.env, s.customer_id, min((COALESCE(r.created_at, s.updated_at) AT TIME ZONE 'UTC')::date) AS first_mrr_day
                     FROM revenue_subscriptions s
                     LEFT JOIN rail_subscriptions r ON r.project_id = s.project_id AND r.env = s.env AND r.rail = s.rail AND r.subscription_id = s.subscription_id
                    WHERE s.monthly_minor > 0 GROUP BY 1, 2, 3) m
               ON m.project_id = c.project_id AND m.env = c.env AND m.customer_id = c.id
       WHERE p.first_paid_at IS NOT NULL OR m.first_mrr_day IS NOT NULL`);
    await q.query(`
      INSERT INTO revenue_first_paying (project_id, env, paying_day, created_day, customers)
      SELECT project_id, env, (first_paid_at AT TIME ZONE 'UTC')::date, created_day, count(*) FROM revenue_customer_firsts
       WHERE first_paid_at IS NOT NULL GROUP BY 1, 2, 3, 4`);
    await q.query(`
      INSERT INTO revenue_cohorts (project_id, env, cohort_month, customers)
      SELECT project_id, env, date_trunc('month', first_paid_at AT TIME ZONE 'UTC')::date, count(*) FROM revenue_customer_firsts
       WHERE first_paid_at IS NOT NULL GROUP BY 1, 2, 3`);
    await q.query(`
      INSERT INTO revenue_cohort_months (project_id, env, cohort_month, month, currency, net_minor)
      SELECT p.project_id, p.env, date_trunc('month', f.first_paid_at AT TIME ZONE 'UTC')::date, date_trunc('month', p.paid_at AT TIME ZONE 'UTC')::date,
             p.currency, sum(p.amount_minor)
        FROM revenue_payments p
        JOIN revenue_customer_firsts f ON f.project_id = p.project_id AND f.env = p.env AND f.customer_id = p.customer_id
       GROUP BY 1, 2, 3, 4, 5`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS chart_events_inserted ON events`);
    await q.query(`DROP TRIGGER IF EXISTS chart_customers_inserted ON customers`);
    await q.query(`DROP FUNCTION IF EXISTS chart_events_inserted()`);
    await q.query(`DROP FUNCTION IF EXISTS chart_customers_inserted()`);
    await q.query(`DROP INDEX IF EXISTS revenue_payments_customer_idx`);
    for (const table of [
      'active_day_totals',
      'event_day_facts',
      'customer_day_facts',
      'subscription_state_days',
      'revenue_cohort_months',
      'revenue_cohorts',
      'revenue_first_paying',
      'revenue_customer_firsts',
      'revenue_customer_products',
      'revenue_mrr_movements',
      'revenue_day_facts',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
