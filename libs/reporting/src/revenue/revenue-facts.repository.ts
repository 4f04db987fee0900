import { Injectable } from '@nestjs/common';
import { Sql, type TenantScope } from '#platform';
import type { ChartStateMoves } from './chart-states.js';
import type { MrrKeyAmount, MrrMovement } from './mrr-movements.js';

type Num = string | number;

export interface CustomerFirsts {
  createdDay: string;
  firstPaidAt: Date | null;
  firstMrrDay: string | null;
}

/** The product of a rail subscription (`''` when unknown), its rail time and its lifecycle state (null: the record has none). */
export interface SubscriptionFacts {
  productId: string;
  railTimeMs: number | null;
  lifecycleState: string | null;
}

/** A firsts row as FIRSTS_COLUMNS reads it. */
export type FirstsRow = { created_day: string; first_paid_at: Date | null; first_mrr_day: string | null };

/** The columns of a firsts row (of `firsts`, or of the table). */
export const FIRSTS_COLUMNS = `to_char(created_day, 'YYYY-MM-DD') AS created_day, first_paid_at, to_char(first_mrr_day, 'YYYY-MM-DD') AS first_mrr_day`;

export const firstsOfRow = (row: FirstsRow): CustomerFirsts => ({
  createdDay: row.created_day,
  firstPaidAt: row.first_paid_at,
  firstMrrDay: row.first_mrr_day,
});

/**
 * CTEs ending in `firsts`: the customer's (`customer`, a parameter; project and env are $1, $2)
 * firsts row, created from its creation day when absent, else the stored row locked. `after`:
 * a CTE the row waits for (a ledger write that took the customer's lock first), none when absent.
 * A row another transaction committed after the statement's snapshot is in neither: `firsts` is
 * then empty and the caller reads it again by a statement of its own (RevenueFactsRepository.firsts).
 */
export function firstsCtes(customer: string, after?: string): string {
  return `created AS (
         INSERT INTO revenue_customer_firsts (project_id, env, customer_id, created_day)
         SELECT c.project_id, c.env, c.id, (c.created_at AT TIME ZONE 'UTC')::date FROM customers c${after ? `, ${after}` : ''}
          WHERE c.project_id = $1 AND c.env = $2 AND c.id = ${customer}
         ON CONFLICT ON CONSTRAINT revenue_customer_firsts_pk DO NOTHING
         RETURNING created_day, first_paid_at, first_mrr_day),
       kept AS MATERIALIZED (
         SELECT created_day, first_paid_at, first_mrr_day FROM revenue_customer_firsts
          WHERE project_id = $1 AND env = $2 AND customer_id = ${customer}${after ? ` AND EXISTS (SELECT 1 FROM ${after})` : ''} FOR UPDATE),
       firsts AS (
         SELECT created_day, first_paid_at, first_mrr_day FROM created
         UNION ALL
         SELECT created_day, first_paid_at, first_mrr_day FROM kept WHERE NOT EXISTS (SELECT 1 FROM created))`;
}

/** The state (and product) a subscription is counted in by the state chart. */
export interface ChartStateRow {
  state: string;
  productId: string;
}

/**
 * SQL of the ledger's per-day facts (the charts' source): written by the revenue ledger in the
 * transaction of the change, keyed by the day the fact belongs to. Every method takes the tenant scope first.
 */
@Injectable()
export class RevenueFactsRepository {
  constructor(private readonly sql: Sql) {}

  /** The rail subscription's product, rail time and lifecycle state, as the rails wrote them in this transaction. */
  async subscriptionFacts(scope: TenantScope, rail: string, subscriptionId: string | null): Promise<SubscriptionFacts> {
    if (!subscriptionId) return { productId: '', railTimeMs: null, lifecycleState: null };
    const row = await this.sql.one<{ product_id: string; rail_time_ms: Num; lifecycle_state: string | null }>(
      `SELECT product_id, rail_time_ms, lifecycle_state FROM rail_subscriptions WHERE project_id = $1 AND env = $2 AND rail = $3 AND subscription_id = $4`,
      [scope.projectId, scope.env, rail, subscriptionId],
    );
    return row
      ? { productId: row.product_id, railTimeMs: Number(row.rail_time_ms), lifecycleState: row.lifecycle_state }
      : { productId: '', railTimeMs: null, lifecycleState: null };
  }

  /**
   * The customer's firsts row, created (from its creation day) when absent, locked: one
   * statement (the insert's row, or the stored row locked). A row another transaction committed
   * after the statement's snapshot is read again, locked, by a statement of its own.
   */
  async firsts(scope: TenantScope, customerId: string): Promise<CustomerFirsts> {
    const args = [scope.projectId, scope.env, customerId];
    let row = await this.sql.one<FirstsRow>(`WITH ${firstsCtes('$3')} SELECT ${FIRSTS_COLUMNS} FROM firsts`, args);
    row ??= await this.sql.one<FirstsRow>(
      `SELECT ${FIRSTS_COLUMNS} FROM revenue_customer_firsts WHERE project_id = $1 AND env = $2 AND customer_id = $3 FOR UPDATE`,
      args,
    );
    if (!row) throw new Error(`customer ${customerId} not found`);
    return firstsOfRow(row);
  }

  async setFirstPaid(scope: TenantScope, customerId: string, paidAt: Date): Promise<void> {
    await this.sql.rows(`UPDATE revenue_customer_firsts SET first_paid_at = $4 WHERE project_id = $1 AND env = $2 AND customer_id = $3`, [
      scope.projectId,
      scope.env,
      customerId,
      paidAt,
    ]);
  }

  async setFirstMrr(scope: TenantScope, customerId: string, day: string): Promise<void> {
    await this.sql.rows(
      `UPDATE revenue_customer_firsts SET first_mrr_day = $4::date WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND first_mrr_day IS NULL`,
      [scope.projectId, scope.env, customerId, day],
    );
  }

  /** Adds `delta` customers to those created on `createdDay` who first paid on `payingDay`. */
  async addFirstPaying(scope: TenantScope, payingDay: string, createdDay: string, delta: number): Promise<void> {
    // A row's CHECK applies to the row proposed for insertion too: a decrement updates the row the increment wrote.
    if (delta < 0) {
      await this.sql.rows(
        `UPDATE revenue_first_paying SET customers = customers + $5 WHERE project_id = $1 AND env = $2 AND paying_day = $3::date AND created_day = $4::date`,
        [scope.projectId, scope.env, payingDay, createdDay, delta],
      );
      return;
    }
    await this.sql.rows(
      `INSERT INTO revenue_first_paying AS f (project_id, env, paying_day, created_day, customers) VALUES ($1, $2, $3::date, $4::date, $5)
       ON CONFLICT ON CONSTRAINT revenue_first_paying_pk DO UPDATE SET customers = f.customers + EXCLUDED.customers`,
      [scope.projectId, scope.env, payingDay, createdDay, delta],
    );
  }

  async addCohortCustomers(scope: TenantScope, cohortMonth: string, delta: number): Promise<void> {
    if (delta < 0) {
      await this.sql.rows(`UPDATE revenue_cohorts SET customers = customers + $4 WHERE project_id = $1 AND env = $2 AND cohort_month = $3::date`, [
        scope.projectId,
        scope.env,
        cohortMonth,
        delta,
      ]);
      return;
    }
    await this.sql.rows(
      `INSERT INTO revenue_cohorts AS c (project_id, env, cohort_month, customers) VALUES ($1, $2, $3::date, $4)
       ON CONFLICT ON CONSTRAINT revenue_cohorts_pk DO UPDATE SET customers = c.customers + EXCLUDED.customers`,
      [scope.projectId, scope.env, cohortMonth, delta],
    );
  }

  /** Adds net cash to cohorts' months: one row per (cohort month, month, currency). */
  async addCohortCash(scope: TenantScope, rows: ReadonlyArray<{ cohortMonth: string; month: string; currency: string; netMinor: number }>): Promise<void> {
    if (rows.length === 0) return;
    await this.sql.rows(
      `INSERT INTO revenue_cohort_months AS c (project_id, env, cohort_month, month, currency, net_minor)
       SELECT $1, $2, cm, m, cur, sum(n) FROM unnest($3::date[], $4::date[], $5::text[], $6::numeric[]) AS t(cm, m, cur, n)
        GROUP BY cm, m, cur ORDER BY cm, m, cur
       ON CONFLICT ON CONSTRAINT revenue_cohort_months_pk DO UPDATE SET net_minor = c.net_minor + EXCLUDED.net_minor`,
      [scope.projectId, scope.env, rows.map((r) => r.cohortMonth), rows.map((r) => r.month), rows.map((r) => r.currency), rows.map((r) => r.netMinor)],
    );
  }

  /** The customer's net cash per month and currency (payments, but one, less refunds and chargebacks, plus reversals). */
  async paymentsByMonth(
    scope: TenantScope,
    customerId: string,
    exceptRail: string,
    exceptTransactionId: string,
  ): Promise<Array<{ month: string; currency: string; amountMinor: number }>> {
    const rows = await this.sql.rows<{ month: string; currency: string; amount: Num }>(
      `SELECT to_char(date_trunc('month', at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS month, currency, sum(amount) AS amount FROM (
         SELECT paid_at AS at, currency, amount_minor AS amount FROM revenue_payments
          WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND NOT (rail = $4 AND transaction_id = $5)
         UNION ALL
         SELECT occurred_at, currency, CASE WHEN kind = 'reversal' THEN amount_minor ELSE -amount_minor END FROM revenue_refunds
          WHERE project_id = $1 AND env = $2 AND customer_id = $3
       ) c GROUP BY 1, 2`,
      [scope.projectId, scope.env, customerId, exceptRail, exceptTransactionId],
    );
    return rows.map((r) => ({ month: r.month, currency: r.currency, amountMinor: Number(r.amount) }));
  }

  /**
   * The customer's MRR per rail, product and currency as last recorded (`stored`) and as its
   * active priced subscriptions add up now (`computed`), in one statement.
   */
  async customerProducts(scope: TenantScope, customerId: string): Promise<{ stored: MrrKeyAmount[]; computed: MrrKeyAmount[] }> {
    const rows = await this.sql.rows<{ computed: boolean; rail: string; product_id: string; currency: string; monthly: Num }>(
      `SELECT false AS computed, rail, product_id, currency, monthly_minor AS monthly FROM revenue_customer_products
        WHERE project_id = $1 AND env = $2 AND customer_id = $3
       UNION ALL
       SELECT true, s.rail, COALESCE(r.product_id, ''), s.currency, sum(s.monthly_minor) FROM revenue_subscriptions s
         LEFT JOIN rail_subscriptions r ON r.project_id = s.project_id AND r.env = s.env AND r.rail = s.rail AND r.subscription_id = s.subscription_id
        WHERE s.project_id = $1 AND s.env = $2 AND s.customer_id = $3 AND s.active AND s.monthly_minor > 0
        GROUP BY s.rail, COALESCE(r.product_id, ''), s.currency`,
      [scope.projectId, scope.env, customerId],
    );
    const of = (computed: boolean): MrrKeyAmount[] =>
      rows
        .filter((r) => r.computed === computed)
        .map((r) => ({ rail: r.rail, productId: r.product_id, currency: r.currency, monthlyMinor: Number(r.monthly) }));
    return { stored: of(false), computed: of(true) };
  }

  /** Replaces the customer's MRR rows per rail and product, in one statement (rows no longer computed deleted, the others written over). */
  async replaceCustomerProducts(scope: TenantScope, customerId: string, rows: readonly MrrKeyAmount[]): Promise<void> {
    await this.sql.rows(
      `WITH t AS (SELECT r, p, c, m FROM unnest($4::text[], $5::text[], $6::text[], $7::numeric[]) AS t(r, p, c, m)),
       gone AS (
         DELETE FROM revenue_customer_products x WHERE x.project_id = $1 AND x.env = $2 AND x.customer_id = $3
            AND NOT EXISTS (SELECT 1 FROM t WHERE t.r = x.rail AND t.p = x.product_id AND t.c = x.currency))
       INSERT INTO revenue_customer_products (project_id, env, customer_id, rail, product_id, currency, monthly_minor)
       SELECT $1, $2, $3, r, p, c, m FROM t
       ON CONFLICT ON CONSTRAINT revenue_customer_products_pk DO UPDATE SET monthly_minor = EXCLUDED.monthly_minor`,
      [
        scope.projectId,
        scope.env,
        customerId,
        rows.map((r) => r.rail),
        rows.map((r) => r.productId),
        rows.map((r) => r.currency),
        rows.map((r) => r.monthlyMinor),
      ],
    );
  }

  async addMovements(scope: TenantScope, day: string, movements: readonly MrrMovement[]): Promise<void> {
    if (movements.length === 0) return;
    const col = (f: (m: MrrMovement) => string | number) => movements.map(f);
    await this.sql.rows(
      `INSERT INTO revenue_mrr_movements AS m (project_id, env, day, rail, product_id, currency, new_minor, expansion_minor, contraction_minor, churned_minor, reactivation_minor)
       SELECT $1, $2, $3::date, r, p, c, n, e, ct, ch, re FROM unnest($4::text[], $5::text[], $6::text[], $7::numeric[], $8::numeric[], $9::numeric[], $10::numeric[], $11::numeric[])
         AS t(r, p, c, n, e, ct, ch, re) ORDER BY r, p, c
       ON CONFLICT ON CONSTRAINT revenue_mrr_movements_pk DO UPDATE SET
         new_minor = m.new_minor + EXCLUDED.new_minor, expansion_minor = m.expansion_minor + EXCLUDED.expansion_minor,
         contraction_minor = m.contraction_minor + EXCLUDED.contraction_minor, churned_minor = m.churned_minor + EXCLUDED.churned_minor,
         reactivation_minor = m.reactivation_minor + EXCLUDED.reactivation_minor`,
      [
        scope.projectId,
        scope.env,
        day,
        col((m) => m.rail),
        col((m) => m.productId),
        col((m) => m.currency),
        col((m) => m.newMinor),
        col((m) => m.expansionMinor),
        col((m) => m.contractionMinor),
        col((m) => m.churnedMinor),
        col((m) => m.reactivationMinor),
      ],
    );
  }

  /** A subscription entered (+1) or left (−1) a state on `day`. */
  async moveState(scope: TenantScope, fact: { day: string; rail: string; productId: string; state: string; delta: 1 | -1 }): Promise<void> {
    await this.sql.rows(
      `INSERT INTO subscription_state_days AS s (project_id, env, day, rail, product_id, state, entered, "left") VALUES ($1, $2, $3::date, $4, $5, $6, $7, $8)
       ON CONFLICT ON CONSTRAINT subscription_state_days_pk DO UPDATE SET entered = s.entered + EXCLUDED.entered, "left" = s."left" + EXCLUDED."left"`,
      [scope.projectId, scope.env, fact.day, fact.rail, fact.productId, fact.state, fact.delta > 0 ? 1 : 0, fact.delta < 0 ? 1 : 0],
    );
  }

  /** The state the subscription is counted in now (null: none). */
  async chartState(scope: TenantScope, rail: string, subscriptionId: string): Promise<ChartStateRow | null> {
    const row = await this.sql.one<{ state: string; product_id: string }>(
      `SELECT state, product_id FROM subscription_chart_states WHERE project_id = $1 AND env = $2 AND rail = $3 AND subscription_id = $4`,
      [scope.projectId, scope.env, rail, subscriptionId],
    );
    return row ? { state: row.state, productId: row.product_id } : null;
  }

  /**
   * The state chart's facts of one move on `day`, in one statement: the state left (−1) and the
   * state entered (+1), a trial's start, end or conversion, and the subscription's counted state
   * set to `moves.entered` (deleted when none). The two states differ (chartStateMoves); their
   * day rows are written in key order, so that two moves between the same states in opposite
   * directions lock them in one order.
   */
  async writeChartMoves(scope: TenantScope, rail: string, subscriptionId: string, day: string, moves: ChartStateMoves): Promise<void> {
    // The day rows are written in key order (product, state): the sums per split that triggers keep
    // with them lock a row per day and segment, and writers taking the day rows in one order do not deadlock.
    const lifecycle = [...(moves.left ? [{ ...moves.left, entered: 0, left: 1 }] : []), ...(moves.entered ? [{ ...moves.entered, entered: 1, left: 0 }] : [])];
    const trial = moves.trial;
    await this.sql.rows(
      `WITH lifecycle AS (
         INSERT INTO subscription_lifecycle_days AS s (project_id, env, day, rail, product_id, state, entered, "left")
         SELECT $1, $2, $5::date, $3, p, st, e, l FROM unnest($6::text[], $7::text[], $8::int[], $9::int[]) AS t(p, st, e, l) ORDER BY p, st
         ON CONFLICT ON CONSTRAINT subscription_lifecycle_days_pk DO UPDATE SET entered = s.entered + EXCLUDED.entered, "left" = s."left" + EXCLUDED."left"),
       trial AS (
         INSERT INTO subscription_trial_days AS t (project_id, env, day, rail, product_id, started, ended, converted)
         SELECT $1, $2, $5::date, $3, $10, $11, $12, $13 WHERE $10::text IS NOT NULL
         ON CONFLICT ON CONSTRAINT subscription_trial_days_pk DO UPDATE
           SET started = t.started + EXCLUDED.started, ended = t.ended + EXCLUDED.ended, converted = t.converted + EXCLUDED.converted),
       gone AS (
         DELETE FROM subscription_chart_states WHERE project_id = $1 AND env = $2 AND rail = $3 AND subscription_id = $4 AND $14::text IS NULL)
       INSERT INTO subscription_chart_states (project_id, env, rail, subscription_id, state, product_id)
       SELECT $1, $2, $3, $4, $14, $15 WHERE $14::text IS NOT NULL
       ON CONFLICT ON CONSTRAINT subscription_chart_states_pk DO UPDATE SET state = EXCLUDED.state, product_id = EXCLUDED.product_id`,
      [
        scope.projectId,
        scope.env,
        rail,
        subscriptionId,
        day,
        lifecycle.map((r) => r.productId),
        lifecycle.map((r) => r.state),
        lifecycle.map((r) => r.entered),
        lifecycle.map((r) => r.left),
        trial?.productId ?? null,
        trial?.started ?? 0,
        trial?.ended ?? 0,
        trial?.converted ?? 0,
        moves.entered?.state ?? null,
        moves.entered?.productId ?? null,
      ],
    );
  }
}
