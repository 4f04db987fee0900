import { Injectable } from '@nestjs/common';
import { type CrossTenant, type Env, Sql, type TenantScope } from '#platform';
import { type ChartStateRow, type CustomerFirsts, type FirstsRow, FIRSTS_COLUMNS, firstsCtes, firstsOfRow } from './revenue-facts.repository.js';

/** `all` sums every rail; `*` counts customers whatever their currency (its MRR stays 0). */
export type LedgerRail = 'all' | 'ios_store' | 'card_payments' | 'android_store';
export const ANY_CURRENCY = '*';

export interface LedgerSubscription {
  customerId: string;
  active: boolean;
  /** The end of the current period (null: lifetime or unknown). */
  validUntil: Date | null;
  currency: string | null;
  monthlyMinor: number | null;
}

/** One customer's active priced subscriptions on one rail in one currency. */
export interface CustomerRevenueRow {
  rail: Exclude<LedgerRail, 'all'>;
  currency: string;
  monthlyMinor: number;
  subscriptions: number;
}

export interface TotalsRow {
  rail: LedgerRail;
  currency: string;
  mrrMinor: number;
  payingCustomers: number;
}

export type TotalsDelta = TotalsRow;

export interface DailyRow extends TotalsRow {
  day: string;
}

type Num = string | number;

export interface LapseRow {
  projectId: string;
  env: Env;
  rail: string;
  subscriptionId: string;
  customerId: string;
  validUntil: Date;
}

type SubscriptionRow = { customer_id: string; active: boolean; valid_until: Date | null; currency: string | null; monthly_minor: Num | null };

const ledgerSubscriptionOf = (row: SubscriptionRow): LedgerSubscription => ({
  customerId: row.customer_id,
  active: row.active,
  validUntil: row.valid_until,
  currency: row.currency,
  monthlyMinor: row.monthly_minor === null ? null : Number(row.monthly_minor),
});

/** What a payment or return recorded with its facts: whether this call recorded it, and the customer's firsts row as the statement found it. */
export interface RecordedWithFacts {
  recorded: boolean;
  /** Null when not recorded, or when the row was committed after the statement's snapshot (read it again: RevenueFactsRepository.firsts). */
  firsts: CustomerFirsts | null;
}

function recordedWithFacts(row: ({ recorded: Num } & Partial<FirstsRow>) | undefined): RecordedWithFacts {
  const recorded = Number(row?.recorded ?? 0) > 0;
  const firsts =
    recorded && row?.created_day
      ? firstsOfRow({ created_day: row.created_day, first_paid_at: row.first_paid_at ?? null, first_mrr_day: row.first_mrr_day ?? null })
      : null;
  return { recorded, firsts };
}

/** SQL of the revenue ledger. Every method takes the tenant scope first; writes take the caller's transaction. */
@Injectable()
export class RevenueLedgerRepository {
  constructor(private readonly sql: Sql) {}

  /** Serialises ledger writers of one customer until the transaction ends. */
  async lockCustomer(scope: TenantScope, customerId: string): Promise<void> {
    await this.sql.rows(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [this.lockKey(scope, customerId)]);
  }

  /**
   * The subscription's row, locked, and the state the state chart counts it in (null: none), in
   * one statement. `renewal`: the state a change leaves the subscription in; when the row counts
   * it alike (same customer, same activity, and the price's currency and amount when the change
   * carries one) and only its period end moves, the statement moves it (`renewed`): a renewal
   * changes no customer row and no total.
   */
  async lockSubscriptionWithChartState(
    scope: TenantScope,
    rail: string,
    subscriptionId: string,
    renewal: { customerId: string; active: boolean; price: { currency: string; monthlyMinor: number } | null; validUntil: Date | null; now: Date },
  ): Promise<{ subscription: LedgerSubscription | null; chartState: ChartStateRow | null; renewed: boolean }> {
    const row = await this.sql.one<SubscriptionRow & { chart_state: string | null; chart_product_id: string | null; renewed: Num }>(
      `WITH sub AS MATERIALIZED (
         SELECT customer_id, active, valid_until, currency, monthly_minor FROM revenue_subscriptions
          WHERE project_id = $1 AND env = $2 AND rail = $3 AND subscription_id = $4 FOR UPDATE),
       renewed AS (
         UPDATE revenue_subscriptions s SET valid_until = $7, updated_at = $8 FROM sub
          WHERE s.project_id = $1 AND s.env = $2 AND s.rail = $3 AND s.subscription_id = $4
            AND sub.customer_id = $5 AND sub.active = $6 AND sub.valid_until IS DISTINCT FROM $7
            AND ($9::text IS NULL OR (sub.currency IS NOT DISTINCT FROM $9::text AND sub.monthly_minor IS NOT DISTINCT FROM $10::numeric))
         RETURNING 1)
       SELECT sub.customer_id, sub.active, sub.valid_until, sub.currency, sub.monthly_minor, c.state AS chart_state, c.product_id AS chart_product_id,
              (SELECT count(*) FROM renewed) AS renewed
         FROM (SELECT 1) AS one
         LEFT JOIN sub ON true
         LEFT JOIN subscription_chart_states c ON c.project_id = $1 AND c.env = $2 AND c.rail = $3 AND c.subscription_id = $4`,
      [
        scope.projectId,
        scope.env,
        rail,
        subscriptionId,
        renewal.customerId,
        renewal.active,
        renewal.validUntil,
        renewal.now,
        renewal.price?.currency ?? null,
        renewal.price?.monthlyMinor ?? null,
      ],
    );
    return {
      subscription: row && row.customer_id !== null ? ledgerSubscriptionOf(row) : null,
      chartState: row && row.chart_state !== null ? { state: row.chart_state, productId: row.chart_product_id ?? '' } : null,
      renewed: Number(row?.renewed ?? 0) > 0,
    };
  }

  async upsertSubscription(scope: TenantScope, rail: string, subscriptionId: string, sub: LedgerSubscription, now: Date): Promise<void> {
    await this.sql.rows(
      `INSERT INTO revenue_subscriptions (project_id, env, rail, subscription_id, customer_id, active, currency, monthly_minor, updated_at, valid_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT ON CONSTRAINT revenue_subscriptions_pk DO UPDATE
          SET customer_id = EXCLUDED.customer_id, active = EXCLUDED.active, currency = EXCLUDED.currency,
              monthly_minor = EXCLUDED.monthly_minor, updated_at = EXCLUDED.updated_at, valid_until = EXCLUDED.valid_until`,
      [scope.projectId, scope.env, rail, subscriptionId, sub.customerId, sub.active, sub.currency, sub.monthlyMinor, now, sub.validUntil],
    );
  }

  /** The subscription's period end (the row is locked by findSubscription). */
  async setPeriodEnd(scope: TenantScope, rail: string, subscriptionId: string, validUntil: Date | null, now: Date): Promise<void> {
    await this.sql.rows(
      `UPDATE revenue_subscriptions SET valid_until = $5, updated_at = $6 WHERE project_id = $1 AND env = $2 AND rail = $3 AND subscription_id = $4`,
      [scope.projectId, scope.env, rail, subscriptionId, validUntil, now],
    );
  }

  async reassignSubscriptions(scope: TenantScope, fromCustomerId: string, toCustomerId: string, now: Date): Promise<void> {
    await this.sql.rows(`UPDATE revenue_subscriptions SET customer_id = $4, updated_at = $5 WHERE project_id = $1 AND env = $2 AND customer_id = $3`, [
      scope.projectId,
      scope.env,
      fromCustomerId,
      toCustomerId,
      now,
    ]);
  }

  /**
   * Active subscriptions whose period ended before `endedBefore`, across tenants (the lapse
   * scan), locked (SKIP LOCKED: a writer of the same row, or another replica, goes first).
   */
  async dueLapses(_scan: CrossTenant, endedBefore: Date, limit: number): Promise<LapseRow[]> {
    const rows = await this.sql.rows<{ project_id: string; env: Env; rail: string; subscription_id: string; customer_id: string; valid_until: Date }>(
      `SELECT project_id, env, rail, subscription_id, customer_id, valid_until FROM revenue_subscriptions
        WHERE active AND valid_until IS NOT NULL AND valid_until < $1
        ORDER BY valid_until LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [endedBefore, limit],
    );
    return rows.map((r) => ({
      projectId: r.project_id,
      env: r.env,
      rail: r.rail,
      subscriptionId: r.subscription_id,
      customerId: r.customer_id,
      validUntil: new Date(r.valid_until),
    }));
  }

  async markLapsed(scope: TenantScope, rail: string, subscriptionId: string, now: Date): Promise<void> {
    await this.sql.rows(
      `UPDATE revenue_subscriptions SET active = false, updated_at = $5 WHERE project_id = $1 AND env = $2 AND rail = $3 AND subscription_id = $4`,
      [scope.projectId, scope.env, rail, subscriptionId, now],
    );
  }

  /**
   * The customer's rows as the ledger last recorded them (`stored`) and what its subscriptions
   * add up to now (`computed`: active and priced above zero), in one statement.
   */
  async customerRows(scope: TenantScope, customerId: string): Promise<{ stored: CustomerRevenueRow[]; computed: CustomerRevenueRow[] }> {
    const rows = await this.sql.rows<{ computed: boolean; rail: CustomerRevenueRow['rail']; currency: string; monthly: Num; n: Num }>(
      `SELECT false AS computed, rail, currency, monthly_minor AS monthly, subscriptions AS n FROM revenue_customers
        WHERE project_id = $1 AND env = $2 AND customer_id = $3
       UNION ALL
       SELECT true, rail, currency, sum(monthly_minor), count(*) FROM revenue_subscriptions
        WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND active AND monthly_minor > 0
        GROUP BY rail, currency`,
      [scope.projectId, scope.env, customerId],
    );
    const of = (computed: boolean): CustomerRevenueRow[] =>
      rows
        .filter((r) => r.computed === computed)
        .map((r) => ({ rail: r.rail, currency: r.currency, monthlyMinor: Number(r.monthly), subscriptions: Number(r.n) }));
    return { stored: of(false), computed: of(true) };
  }

  /**
   * Replaces the customer's per-rail rows and per-currency totals, in one statement: rows no
   * longer computed are deleted, the others written over (the parts touch distinct rows).
   */
  async replaceCustomer(scope: TenantScope, customerId: string, rows: readonly CustomerRevenueRow[]): Promise<void> {
    await this.sql.rows(
      `WITH t AS (SELECT r, c, m, n FROM unnest($4::text[], $5::text[], $6::numeric[], $7::int[]) AS t(r, c, m, n)),
       gone AS (
         DELETE FROM revenue_customers x WHERE x.project_id = $1 AND x.env = $2 AND x.customer_id = $3
            AND NOT EXISTS (SELECT 1 FROM t WHERE t.r = x.rail AND t.c = x.currency)),
       put AS (
         INSERT INTO revenue_customers (project_id, env, customer_id, rail, currency, monthly_minor, subscriptions)
         SELECT $1, $2, $3, r, c, m, n FROM t
         ON CONFLICT ON CONSTRAINT revenue_customers_pk DO UPDATE SET monthly_minor = EXCLUDED.monthly_minor, subscriptions = EXCLUDED.subscriptions),
       gone_totals AS (
         DELETE FROM revenue_customer_totals x WHERE x.project_id = $1 AND x.env = $2 AND x.customer_id = $3
            AND NOT EXISTS (SELECT 1 FROM t WHERE t.c = x.currency)),
       put_totals AS (
         INSERT INTO revenue_customer_totals (project_id, env, customer_id, currency, monthly_minor)
         SELECT $1, $2, $3, c, sum(m) FROM t GROUP BY c
         ON CONFLICT ON CONSTRAINT revenue_customer_totals_pk DO UPDATE SET monthly_minor = EXCLUDED.monthly_minor)
       SELECT 1`,
      [
        scope.projectId,
        scope.env,
        customerId,
        rows.map((r) => r.rail),
        rows.map((r) => r.currency),
        rows.map((r) => r.monthlyMinor),
        rows.map((r) => r.subscriptions),
      ],
    );
  }

  /** Adds the deltas to the totals and records each touched total as the value of `day`. */
  async applyDeltas(scope: TenantScope, deltas: readonly TotalsDelta[], day: string): Promise<void> {
    if (deltas.length === 0) return;
    const keys = [scope.projectId, scope.env, deltas.map((d) => d.rail), deltas.map((d) => d.currency)];
    // Rows first (a concurrent first insert waits, then both updates apply), then the deltas.
    await this.sql.rows(
      `INSERT INTO revenue_totals (project_id, env, rail, currency, mrr_minor, paying_customers)
       SELECT $1, $2, r, c, 0, 0 FROM unnest($3::text[], $4::text[]) AS t(r, c) ORDER BY r, c
       ON CONFLICT ON CONSTRAINT revenue_totals_pk DO NOTHING`,
      keys,
    );
    const updated = await this.sql.rows<{ rail: LedgerRail; currency: string; mrr_minor: Num; paying_customers: Num }>(
      `UPDATE revenue_totals AS rt
          SET mrr_minor = greatest(0, rt.mrr_minor + d.m), paying_customers = greatest(0, rt.paying_customers + d.p)
         FROM unnest($3::text[], $4::text[], $5::numeric[], $6::int[]) AS d(r, c, m, p)
        WHERE rt.project_id = $1 AND rt.env = $2 AND rt.rail = d.r AND rt.currency = d.c
       RETURNING rt.rail, rt.currency, rt.mrr_minor, rt.paying_customers`,
      [...keys, deltas.map((d) => d.mrrMinor), deltas.map((d) => d.payingCustomers)],
    );
    await this.sql.rows(
      `INSERT INTO revenue_daily (project_id, env, rail, currency, day, mrr_minor, paying_customers)
       SELECT $1, $2, r, c, $3::date, m, p FROM unnest($4::text[], $5::text[], $6::numeric[], $7::int[]) AS t(r, c, m, p)
       ON CONFLICT ON CONSTRAINT revenue_daily_pk DO UPDATE SET mrr_minor = EXCLUDED.mrr_minor, paying_customers = EXCLUDED.paying_customers`,
      [
        scope.projectId,
        scope.env,
        day,
        updated.map((u) => u.rail),
        updated.map((u) => u.currency),
        updated.map((u) => u.mrr_minor),
        updated.map((u) => u.paying_customers),
      ],
    );
  }

  /** The key of the customer's ledger lock (lockCustomer). */
  private lockKey(scope: TenantScope, customerId: string): string {
    return `revenue|${scope.projectId}|${scope.env}|${customerId}`;
  }

  /**
   * Takes the customer's ledger lock (lockCustomer), then records a payment once with its facts,
   * in one statement: the payment, its month's cash, its paid day's payment fact under its
   * product, the customer's firsts row (created or locked, RevenueFactsRepository.firsts) and,
   * when the customer first paid no later than this payment, the payment's cash in the
   * customer's cohort. The lock is taken before any row is written (every write reads the lock's
   * row), the customer before the shared rows as every ledger writer does. A payment already
   * recorded moves nothing. A payment the customer's cohort does not hold yet (a first payment,
   * or one older than the first) is the caller's to place (`firsts` as found, cohort untouched).
   */
  async lockAndRecordPayment(
    scope: TenantScope,
    payment: {
      rail: string;
      transactionId: string;
      customerId: string;
      currency: string;
      amountMinor: number;
      recurring: boolean;
      paidAt: Date;
      month: string;
      day: string;
      productId: string;
    },
  ): Promise<RecordedWithFacts> {
    const rows = await this.sql.rows<{ recorded: Num } & Partial<FirstsRow>>(
      `WITH locked AS MATERIALIZED (SELECT pg_advisory_xact_lock(hashtextextended($10, 0)) AS held),
       paid AS (
         INSERT INTO revenue_payments (project_id, env, rail, transaction_id, customer_id, currency, amount_minor, recurring, paid_at)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9 FROM locked
         ON CONFLICT ON CONSTRAINT revenue_payments_pk DO NOTHING RETURNING 1 AS recorded),
       cash AS (
         INSERT INTO revenue_cash_monthly (project_id, env, currency, month, recurring, amount_minor)
         SELECT $1, $2, $6, $11::date, $8, $7 FROM paid
         ON CONFLICT ON CONSTRAINT revenue_cash_monthly_pk DO UPDATE SET amount_minor = revenue_cash_monthly.amount_minor + EXCLUDED.amount_minor),
       day_fact AS (
         INSERT INTO revenue_day_facts AS f (project_id, env, day, rail, product_id, currency, payments, gross_minor)
         SELECT $1, $2, $12::date, $3, $13, $6, 1, $7 FROM paid
         ON CONFLICT ON CONSTRAINT revenue_day_facts_pk DO UPDATE SET payments = f.payments + 1, gross_minor = f.gross_minor + EXCLUDED.gross_minor),
       ${firstsCtes('$5', 'paid')},
       cohort AS (
         INSERT INTO revenue_cohort_months AS c (project_id, env, cohort_month, month, currency, net_minor)
         SELECT $1, $2, date_trunc('month', first_paid_at AT TIME ZONE 'UTC')::date, $11::date, $6, $7 FROM firsts
          WHERE first_paid_at IS NOT NULL AND first_paid_at <= $9
         ON CONFLICT ON CONSTRAINT revenue_cohort_months_pk DO UPDATE SET net_minor = c.net_minor + EXCLUDED.net_minor)
       SELECT (SELECT count(*) FROM paid) AS recorded, f.* FROM (SELECT 1) AS one LEFT JOIN (SELECT ${FIRSTS_COLUMNS} FROM firsts) f ON true`,
      [
        scope.projectId,
        scope.env,
        payment.rail,
        payment.transactionId,
        payment.customerId,
        payment.currency,
        payment.amountMinor,
        payment.recurring,
        payment.paidAt,
        this.lockKey(scope, payment.customerId),
        payment.month,
        payment.day,
        payment.productId,
      ],
    );
    return recordedWithFacts(rows[0]);
  }

  /**
   * Takes the customer's ledger lock, then records a refund, chargeback or reversal once (by its
   * fact id) with its facts, in one statement as lockAndRecordPayment: the month's
   * `refunds_minor` (reversals subtract), its day's refund fact under `productId`, the customer's
   * firsts row (created or locked) and, when the customer has paid, the cohort's net cash in the
   * return's month. Whether this call recorded it, and the firsts row as found.
   */
  async lockAndRecordReturn(
    scope: TenantScope,
    money: {
      rail: string;
      factId: string;
      kind: 'refund' | 'chargeback' | 'reversal';
      transactionId: string | null;
      subscriptionId: string | null;
      customerId: string;
      currency: string;
      amountMinor: number;
      occurredAt: Date;
      month: string;
      day: string;
      productId: string;
    },
  ): Promise<RecordedWithFacts> {
    const reversal = money.kind === 'reversal';
    const signed = reversal ? -money.amountMinor : money.amountMinor;
    const [refunds, refundsMinor, reversals, reversalsMinor] = reversal ? [0, 0, 1, money.amountMinor] : [1, money.amountMinor, 0, 0];
    const rows = await this.sql.rows<{ recorded: Num } & Partial<FirstsRow>>(
      `WITH locked AS MATERIALIZED (SELECT pg_advisory_xact_lock(hashtextextended($12, 0)) AS held),
       returned AS (
         INSERT INTO revenue_refunds (project_id, env, rail, fact_id, kind, transaction_id, subscription_id, customer_id, currency, amount_minor, occurred_at)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 FROM locked
         ON CONFLICT ON CONSTRAINT revenue_refunds_pk DO NOTHING RETURNING 1 AS recorded),
       cash AS (
         INSERT INTO revenue_cash_monthly (project_id, env, currency, month, recurring, amount_minor, refunds_minor)
         SELECT $1, $2, $9, $13::date, $14::boolean, 0, $15 FROM returned
         ON CONFLICT ON CONSTRAINT revenue_cash_monthly_pk DO UPDATE SET refunds_minor = revenue_cash_monthly.refunds_minor + EXCLUDED.refunds_minor),
       day_fact AS (
         INSERT INTO revenue_refund_days AS f (project_id, env, day, rail, product_id, currency, refunds, refunds_minor, reversals, reversals_minor)
         SELECT $1, $2, $16::date, $3, $17, $9, $18, $19, $20, $21 FROM returned
         ON CONFLICT ON CONSTRAINT revenue_refund_days_pk DO UPDATE SET refunds = f.refunds + EXCLUDED.refunds, refunds_minor = f.refunds_minor + EXCLUDED.refunds_minor,
           reversals = f.reversals + EXCLUDED.reversals, reversals_minor = f.reversals_minor + EXCLUDED.reversals_minor),
       ${firstsCtes('$8', 'returned')},
       cohort AS (
         INSERT INTO revenue_cohort_months AS c (project_id, env, cohort_month, month, currency, net_minor)
         SELECT $1, $2, date_trunc('month', first_paid_at AT TIME ZONE 'UTC')::date, $13::date, $9, -$15::numeric FROM firsts
          WHERE first_paid_at IS NOT NULL
         ON CONFLICT ON CONSTRAINT revenue_cohort_months_pk DO UPDATE SET net_minor = c.net_minor + EXCLUDED.net_minor)
       SELECT (SELECT count(*) FROM returned) AS recorded, f.* FROM (SELECT 1) AS one LEFT JOIN (SELECT ${FIRSTS_COLUMNS} FROM firsts) f ON true`,
      [
        scope.projectId,
        scope.env,
        money.rail,
        money.factId,
        money.kind,
        money.transactionId,
        money.subscriptionId,
        money.customerId,
        money.currency,
        money.amountMinor,
        money.occurredAt,
        this.lockKey(scope, money.customerId),
        money.month,
        money.subscriptionId !== null,
        signed,
        money.day,
        money.productId,
        refunds,
        refundsMinor,
        reversals,
        reversalsMinor,
      ],
    );
    return recordedWithFacts(rows[0]);
  }

  // Reads

  /** The payment recorded for the rail's transaction id (an Android order, an iOS transaction), or null. */
  async findPayment(scope: TenantScope, rail: string, transactionId: string): Promise<{ currency: string; amountMinor: number } | null> {
    const row = await this.sql.one<{ currency: string; amount_minor: Num }>(
      `SELECT currency, amount_minor FROM revenue_payments WHERE project_id = $1 AND env = $2 AND rail = $3 AND transaction_id = $4`,
      [scope.projectId, scope.env, rail, transactionId],
    );
    return row ? { currency: row.currency, amountMinor: Number(row.amount_minor) } : null;
  }

  /** Refunds and chargebacks less reversals per day (UTC) of one currency from `fromDay` on. */
  async refundsByDay(scope: TenantScope, currency: string, fromDay: string): Promise<Map<string, number>> {
    const rows = await this.sql.rows<{ day: string; amount: Num }>(
      `SELECT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
              sum(CASE WHEN kind = 'reversal' THEN -amount_minor ELSE amount_minor END) AS amount
         FROM revenue_refunds
        WHERE project_id = $1 AND env = $2 AND currency = $3 AND occurred_at >= $4::date
        GROUP BY 1`,
      [scope.projectId, scope.env, currency, fromDay],
    );
    return new Map(rows.map((r) => [r.day, Number(r.amount)]));
  }

  async totals(scope: TenantScope): Promise<TotalsRow[]> {
    const rows = await this.sql.rows<{ rail: LedgerRail; currency: string; mrr_minor: Num; paying_customers: Num }>(
      `SELECT rail, currency, mrr_minor, paying_customers FROM revenue_totals WHERE project_id = $1 AND env = $2`,
      [scope.projectId, scope.env],
    );
    return rows.map((r) => ({ rail: r.rail, currency: r.currency, mrrMinor: Number(r.mrr_minor), payingCustomers: Number(r.paying_customers) }));
  }

  async payingCustomers(scope: TenantScope): Promise<number> {
    const row = await this.sql.one<{ n: Num }>(
      `SELECT paying_customers AS n FROM revenue_totals WHERE project_id = $1 AND env = $2 AND rail = 'all' AND currency = '*'`,
      [scope.projectId, scope.env],
    );
    return row ? Number(row.n) : 0;
  }

  /** The last `limit` daily values of one total up to `toDay` (newest first). */
  async daily(scope: TenantScope, rail: LedgerRail, currency: string, toDay: string, limit: number): Promise<DailyRow[]> {
    const rows = await this.sql.rows<{ day: string; mrr_minor: Num; paying_customers: Num }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS day, mrr_minor, paying_customers FROM revenue_daily
        WHERE project_id = $1 AND env = $2 AND rail = $3 AND currency = $4 AND day <= $5::date
        ORDER BY day DESC LIMIT $6`,
      [scope.projectId, scope.env, rail, currency, toDay, limit],
    );
    return rows.map((r) => ({ rail, currency, day: r.day, mrrMinor: Number(r.mrr_minor), payingCustomers: Number(r.paying_customers) }));
  }

  /** The monthly totals (every currency) of those of `customerIds` that pay: one row per customer and currency. */
  async totalsAmong(scope: TenantScope, customerIds: readonly string[]): Promise<Array<{ customerId: string; currency: string; monthlyMinor: number }>> {
    if (customerIds.length === 0) return [];
    const rows = await this.sql.rows<{ customer_id: string; currency: string; monthly_minor: Num }>(
      `SELECT customer_id, currency, monthly_minor FROM revenue_customer_totals WHERE project_id = $1 AND env = $2 AND customer_id = ANY($3::text[])`,
      [scope.projectId, scope.env, [...new Set(customerIds)]],
    );
    return rows.map((r) => ({ customerId: r.customer_id, currency: r.currency, monthlyMinor: Number(r.monthly_minor) }));
  }

  /** Customers paying in any currency among `customerIds`. */
  async payingAmong(scope: TenantScope, customerIds: readonly string[]): Promise<Set<string>> {
    if (customerIds.length === 0) return new Set();
    const rows = await this.sql.rows<{ customer_id: string }>(
      `SELECT DISTINCT customer_id FROM revenue_customer_totals WHERE project_id = $1 AND env = $2 AND customer_id = ANY($3::text[])`,
      [scope.projectId, scope.env, [...new Set(customerIds)]],
    );
    return new Set(rows.map((r) => r.customer_id));
  }

  async topByRevenue(scope: TenantScope, currency: string, limit: number): Promise<Array<{ customerId: string; monthlyMinor: number }>> {
    const rows = await this.sql.rows<{ customer_id: string; monthly_minor: Num }>(
      `SELECT customer_id, monthly_minor FROM revenue_customer_totals WHERE project_id = $1 AND env = $2 AND currency = $3
        ORDER BY monthly_minor DESC, customer_id LIMIT $4`,
      [scope.projectId, scope.env, currency, limit],
    );
    return rows.map((r) => ({ customerId: r.customer_id, monthlyMinor: Number(r.monthly_minor) }));
  }

  /** Recognised cash per month, currency and shape; `fromMonth` null: to date. */
  async cash(
    scope: TenantScope,
    fromMonth: string | null,
  ): Promise<Array<{ currency: string; recurring: boolean; amountMinor: number; refundsMinor: number }>> {
    const rows = await this.sql.rows<{ currency: string; recurring: boolean; amount: Num; refunds: Num }>(
      `SELECT currency, recurring, sum(amount_minor) AS amount, sum(refunds_minor) AS refunds FROM revenue_cash_monthly
        WHERE project_id = $1 AND env = $2 AND ($3::date IS NULL OR month >= $3::date)
        GROUP BY currency, recurring`,
      [scope.projectId, scope.env, fromMonth],
    );
    return rows.map((r) => ({ currency: r.currency, recurring: r.recurring, amountMinor: Number(r.amount), refundsMinor: Number(r.refunds) }));
  }

  async reportingCurrency(scope: Pick<TenantScope, 'projectId'>): Promise<string | null> {
    const row = await this.sql.one<{ currency: string }>(`SELECT currency FROM reporting_settings WHERE project_id = $1`, [scope.projectId]);
    return row?.currency ?? null;
  }

  async setReportingCurrency(project: Pick<TenantScope, 'projectId'>, currency: string, now: Date): Promise<void> {
    await this.sql.rows(
      `INSERT INTO reporting_settings (project_id, currency, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (project_id) DO UPDATE SET currency = EXCLUDED.currency, updated_at = EXCLUDED.updated_at`,
      [project.projectId, currency, now],
    );
  }
}
