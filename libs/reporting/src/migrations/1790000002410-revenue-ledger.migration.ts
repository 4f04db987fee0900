import type { MigrationInterface, QueryRunner } from 'typeorm';

const ENV = `text NOT NULL CHECK (env IN ('sandbox', 'production'))`;
const RAIL = `text NOT NULL CHECK (rail IN ('ios_store', 'card_payments', 'android_store'))`;
const CURRENCY = `text NOT NULL CHECK (currency ~ '^[A-Z]{3}$')`;
const CUSTOMER_FK = (table: string) => `CONSTRAINT ${table}_customer_fk FOREIGN KEY (project_id, env, customer_id) REFERENCES customers (project_id, env, id)`;

/**
 * The revenue ledger, fed by the rails in the transaction of every rail change, so every
 * revenue read is a point read:
 *
 * - `reporting_settings`: the project's reporting currency (default USD when absent).
 * - `revenue_subscriptions`: per rail subscription, whether it is active and its price
 *   normalised to a month in its currency (minor units; null until a price is seen).
 * - `revenue_customers`: per customer, rail and currency, the active priced subscriptions'
 *   monthly sum; `revenue_customer_totals` the same over every rail (rankings).
 * - `revenue_totals`: per rail (`all` for every rail) and currency (`*` for any currency) the
 *   MRR and the paying customers; `revenue_daily` its value at the end of each day it changed.
 * - `revenue_payments` (each paid transaction once) and `revenue_cash_monthly` (recognised
 *   cash by month, currency, recurring or one-off).
 */
export class RevenueLedger1790000002410 implements MigrationInterface {
  name = 'RevenueLedger1790000002410';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE reporting_settings (
        project_id text        PRIMARY KEY REFERENCES projects (id),
        currency   ${CURRENCY},
        updated_at timestamptz NOT NULL
      )`);
    await q.query(`
      CREATE TABLE revenue_subscriptions (
        project_id      text        NOT NULL REFERENCES projects (id),
        env             ${ENV},
        rail            ${RAIL},
        subscription_id text        NOT NULL CHECK (char_length(subscription_id) BETWEEN 1 AND 512),
        customer_id     text        NOT NULL,
        active          boolean     NOT NULL,
        currency        text        NULL CHECK (currency ~ '^[A-Z]{3}$'),
        monthly_minor   numeric     NULL CHECK (monthly_minor >= 0),
        updated_at      timestamptz NOT NULL,
        CONSTRAINT revenue_subscriptions_price_ck CHECK ((currency IS NULL) = (monthly_minor IS NULL)),
        CONSTRAINT revenue_subscriptions_pk PRIMARY KEY (project_id, env, rail, subscription_id),
        ${CUSTOMER_FK('revenue_subscriptions')}
      )`);
    await q.query(`CREATE INDEX revenue_subscriptions_customer_idx ON revenue_subscriptions (project_id, env, customer_id)`);
    await q.query(`
      CREATE TABLE revenue_customers (
        project_id    text    NOT NULL,
        env           ${ENV},
        customer_id   text    NOT NULL,
        rail          ${RAIL},
        currency      ${CURRENCY},
        monthly_minor numeric NOT NULL CHECK (monthly_minor > 0),
        subscriptions integer NOT NULL CHECK (subscriptions > 0),
        CONSTRAINT revenue_customers_pk PRIMARY KEY (project_id, env, customer_id, rail, currency),
        ${CUSTOMER_FK('revenue_customers')}
      )`);
    await q.query(`
      CREATE TABLE revenue_customer_totals (
        project_id    text    NOT NULL,
        env           ${ENV},
        customer_id   text    NOT NULL,
        currency      ${CURRENCY},
        monthly_minor numeric NOT NULL CHECK (monthly_minor > 0),
        CONSTRAINT revenue_customer_totals_pk PRIMARY KEY (project_id, env, customer_id, currency),
        ${CUSTOMER_FK('revenue_customer_totals')}
      )`);
    await q.query(`CREATE INDEX revenue_customer_totals_rank_idx ON revenue_customer_totals (project_id, env, currency, monthly_minor DESC, customer_id)`);
    const totals = (table: string, extra: string) => `
      CREATE TABLE ${table} (
        project_id       text    NOT NULL REFERENCES projects (id),
        env              ${ENV},
        rail             text    NOT NULL CHECK (rail IN ('all', 'ios_store', 'card_payments', 'android_store')),
        currency         text    NOT NULL CHECK (currency = '*' OR currency ~ '^[A-Z]{3}$'),
        ${extra}
        mrr_minor        numeric NOT NULL CHECK (mrr_minor >= 0),
        paying_customers integer NOT NULL CHECK (paying_customers >= 0),
        CONSTRAINT ${table}_pk PRIMARY KEY (project_id, env, rail, currency${extra ? ', day' : ''})
      )`;
    await q.query(totals('revenue_totals', ''));
    await q.query(totals('revenue_daily', 'day date NOT NULL,'));
    await q.query(`
      CREATE TABLE revenue_payments (
        project_id     text        NOT NULL,
        env            ${ENV},
        rail           ${RAIL},
        transaction_id text        NOT NULL CHECK (char_length(transaction_id) BETWEEN 1 AND 512),
        customer_id    text        NOT NULL,
        currency       ${CURRENCY},
        amount_minor   numeric     NOT NULL CHECK (amount_minor > 0),
        recurring      boolean     NOT NULL,
        paid_at        timestamptz NOT NULL,
        CONSTRAINT revenue_payments_pk PRIMARY KEY (project_id, env, rail, transaction_id),
        ${CUSTOMER_FK('revenue_payments')}
      )`);
    await q.query(`
      CREATE TABLE revenue_cash_monthly (
        project_id   text    NOT NULL REFERENCES projects (id),
        env          ${ENV},
        currency     ${CURRENCY},
        month        date    NOT NULL CHECK (extract(day FROM month) = 1),
        recurring    boolean NOT NULL,
        amount_minor numeric NOT NULL CHECK (amount_minor >= 0),
        CONSTRAINT revenue_cash_monthly_pk PRIMARY KEY (project_id, env, currency, month, recurring)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'revenue_cash_monthly',
      'revenue_payments',
      'revenue_daily',
      'revenue_totals',
      'revenue_customer_totals',
      'revenue_customers',
      'revenue_subscriptions',
      'reporting_settings',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
