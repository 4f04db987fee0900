import { Injectable } from '@nestjs/common';
import { type TenantScope, Sql } from '#platform';
import { ALIAS_TYPES } from '#identity';
import { BILLING_ISSUE_STATUSES, RAIL_ALIAS_TYPES } from '#rails';
import { type CustomerListCursor, type CustomerListFilter, billingIssueWords, likeLiteral, statesOfFilter } from './customer-list-rules.js';

export interface CustomerListRow {
  id: string;
  userId: string | null;
  email: string | null;
  createdAt: Date;
  mrrMinor: string;
  currency: string;
  paying: boolean;
  lastSeenDay: string | null;
  rails: string[];
  products: string[];
  states: string[];
  sortKey: string;
}

const SEARCH_ALIAS_TYPES = [ALIAS_TYPES.developer, ...Object.values(RAIL_ALIAS_TYPES)];
const BILLING_WORDS = billingIssueWords(BILLING_ISSUE_STATUSES);

/**
 * A rail record's list state (`s` the record; $3, $4, $5 the grace, hold and retry words): its
 * lifecycle state, or for a record without one the state its status word names.
 */
const LIST_STATE = `COALESCE(s.lifecycle_state, CASE
    WHEN s.raw_status ~* 'refund|revoke|dispute' THEN 'refunded'
    WHEN s.raw_status ~* 'paus' THEN 'paused'
    WHEN s.raw_status = ANY($3::text[]) THEN 'in_grace_period'
    WHEN s.raw_status = ANY($4::text[]) THEN 'on_hold'
    WHEN s.raw_status = ANY($5::text[]) THEN 'in_billing_retry'
    WHEN s.state = 'active' AND s.raw_status ~* 'trial' THEN 'trialing'
    WHEN s.state = 'active' THEN 'active'
    ELSE 'expired' END)`;

/**
 * Each sort: the ORDER BY expression, the cursor's key as text, and the cursor's key as a value
 * of the expression's type (created: exact microseconds, never a float).
 */
const SORTS = {
  created: {
    expr: 'c.created_at',
    key: '(extract(epoch FROM c.created_at) * 1000000)::bigint::text',
    from: (p: string) => `timestamptz 'epoch' + ${p}::bigint * interval '1 microsecond'`,
  },
  mrr: { expr: 'pay.mrr', key: 'pay.mrr::text', from: (p: string) => `${p}::numeric` },
  last_seen: { expr: `coalesce(ls.day - date '1970-01-01', -1)`, key: `coalesce(ls.day - date '1970-01-01', -1)::text`, from: (p: string) => `${p}::integer` },
} as const;

/**
 * The console's customer list: a read-only composition over the tables of identity (customers,
 * aliases), rails (rail_subscriptions) and reporting (the revenue ledger's per-customer totals,
 * active days), like the read API's reports. Every statement is bounded to the scope.
 *
 * A subscription's list state is the rail record's lifecycle state (`lifecycle_state`); a record
 * without one takes the state its status word names. A customer carries each distinct state of
 * its subscriptions, and `expired` only when none of them is anything else (a churned customer).
 * The state filter first finds the customers with a record in a wanted state through
 * `rail_subscriptions_lifecycle_state_idx`, then keeps those whose row carries it.
 */
@Injectable()
export class CustomerListRepository {
  constructor(private readonly sql: Sql) {}

  async page(scope: TenantScope, filter: CustomerListFilter, cursor: CustomerListCursor | null, limit: number): Promise<CustomerListRow[]> {
    const { text, params } = this.statement(scope, filter, cursor, null);
    params.push(limit);
    return this.sql.rows<CustomerListRow>(`${text} LIMIT $${params.length}`, params);
  }

  /** The list's row of each given customer (the customer page's heading). */
  async rowsOf(scope: TenantScope, customerIds: readonly string[]): Promise<CustomerListRow[]> {
    const filter: CustomerListFilter = { q: null, state: null, rail: null, product: null, paying: null, sort: 'created', order: 'desc' };
    const { text, params } = this.statement(scope, filter, null, customerIds);
    return this.sql.rows<CustomerListRow>(text, params);
  }

  /**
   * Every row of the filtered list through a server-side cursor, `batch` rows at a time, in one
   * read-only transaction; `each` answers false to stop early (the client went away).
   */
  async each(scope: TenantScope, filter: CustomerListFilter, batch: number, each: (rows: CustomerListRow[]) => Promise<boolean>): Promise<void> {
    const { text, params } = this.statement(scope, filter, null, null);
    await this.sql.transaction(async () => {
      await this.sql.run('SET TRANSACTION READ ONLY');
      await this.sql.run(`DECLARE customer_export NO SCROLL CURSOR FOR ${text}`, params);
      for (;;) {
        const rows = await this.sql.rows<CustomerListRow>(`FETCH ${Number(batch)} FROM customer_export`);
        if (rows.length === 0 || !(await each(rows))) break;
        if (rows.length < batch) break;
      }
      await this.sql.run('CLOSE customer_export');
    });
  }

  private statement(
    scope: TenantScope,
    filter: CustomerListFilter,
    cursor: CustomerListCursor | null,
    ids: readonly string[] | null,
  ): { text: string; params: unknown[] } {
    const params: unknown[] = [scope.projectId, scope.env, BILLING_WORDS.grace, BILLING_WORDS.hold, BILLING_WORDS.retry];
    const p = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    const where: string[] = ['c.project_id = $1', 'c.env = $2'];
    if (ids) where.push(`c.id = ANY(${p(ids)}::text[])`);
    if (filter.q !== null) {
      const prefix = p(`${likeLiteral(filter.q)}%`);
      // Three characters and more: any substring of the email (the trigram index); fewer: its prefix.
      const email = filter.q.length >= 3 ? p(`%${likeLiteral(filter.q)}%`) : prefix;
      const types = p(SEARCH_ALIAS_TYPES);
      where.push(`c.id IN (
          SELECT id FROM customers WHERE project_id = $1 AND env = $2 AND lower(id) LIKE ${prefix}
          UNION SELECT id FROM customers WHERE project_id = $1 AND env = $2 AND email IS NOT NULL AND lower(email) LIKE ${email}
          UNION SELECT customer_id FROM customer_aliases WHERE project_id = $1 AND env = $2 AND type = ANY(${types}::text[]) AND lower(value) LIKE ${prefix}
          UNION SELECT customer_id FROM rail_subscriptions WHERE project_id = $1 AND env = $2 AND lower(subscription_id) LIKE ${prefix})`);
    }
    if (filter.state) {
      const states = p(statesOfFilter(filter.state));
      where.push(`c.id IN (
          SELECT s.customer_id FROM rail_subscriptions s WHERE s.project_id = $1 AND s.env = $2 AND s.lifecycle_state = ANY(${states}::text[])
          UNION ALL SELECT s.customer_id FROM rail_subscriptions s WHERE s.project_id = $1 AND s.env = $2 AND s.lifecycle_state IS NULL AND ${LIST_STATE} = ANY(${states}::text[]))`);
      where.push(`r.states && ${states}::text[]`);
    }
    if (filter.rail) where.push(`${p(filter.rail)} = ANY(r.rails)`);
    if (filter.product) where.push(`${p(filter.product)} = ANY(r.products)`);
    if (filter.paying !== null) where.push(`${filter.paying ? '' : 'NOT '}pay.paying`);
    const sort = SORTS[filter.sort];
    const dir = filter.order === 'asc' ? 'ASC' : 'DESC';
    if (cursor) where.push(`(${sort.expr}, c.id) ${filter.order === 'asc' ? '>' : '<'} (${sort.from(p(cursor.key))}, ${p(cursor.id)})`);
    const text = `
      SELECT c.id, u.user_id AS "userId", c.email, c.created_at AS "createdAt",
             pay.mrr::text AS "mrrMinor", cur.currency, pay.paying,
             to_char(ls.day, 'YYYY-MM-DD') AS "lastSeenDay",
             coalesce(r.rails, '{}') AS rails, coalesce(r.products, '{}') AS products, coalesce(r.states, '{}') AS states,
             ${sort.key} AS "sortKey"
        FROM customers c
        CROSS JOIN (SELECT coalesce((SELECT currency FROM reporting_settings WHERE project_id = $1), 'USD') AS currency) cur
        LEFT JOIN LATERAL (
          SELECT a.value AS user_id FROM customer_aliases a
           WHERE a.project_id = c.project_id AND a.env = c.env AND a.customer_id = c.id AND a.type = '${ALIAS_TYPES.developer}'
           ORDER BY a.created_at DESC, a.value DESC LIMIT 1) u ON true
        -- Scalar subqueries, each a probe for this customer; OFFSET 0 keeps them evaluated once per row, not once per mention.
        CROSS JOIN LATERAL (
          SELECT coalesce((SELECT t.monthly_minor FROM revenue_customer_totals t
                            WHERE t.project_id = c.project_id AND t.env = c.env AND t.customer_id = c.id AND t.currency = cur.currency), 0) AS mrr,
                 EXISTS (SELECT 1 FROM revenue_customer_totals t WHERE t.project_id = c.project_id AND t.env = c.env AND t.customer_id = c.id) AS paying
          OFFSET 0) pay
        LEFT JOIN LATERAL (
          SELECT d.day FROM reporting_active_days d WHERE d.project_id = c.project_id AND d.env = c.env AND d.customer_id = c.id
           ORDER BY d.day DESC LIMIT 1) ls ON true
        LEFT JOIN LATERAL (
          SELECT array_agg(DISTINCT w.rail) AS rails, array_agg(DISTINCT w.product_id) AS products,
                 array_remove(array_agg(DISTINCT w.word), CASE WHEN bool_or(w.word <> 'expired') THEN 'expired' END) AS states
            FROM (SELECT s.rail, s.product_id, ${LIST_STATE} AS word
                    FROM rail_subscriptions s WHERE s.project_id = c.project_id AND s.env = c.env AND s.customer_id = c.id) w) r ON true
       WHERE ${where.join(' AND ')}
       ORDER BY ${sort.expr} ${dir}, c.id ${dir}`;
    return { text, params };
  }
}
