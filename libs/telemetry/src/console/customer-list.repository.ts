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

/**
 * A row of the export: the list's row without its sort key, each set of words (rails, products,
 * states) already one text separated by spaces, as the file writes it (no array to parse per row).
 */
export interface CustomerExportRow extends Omit<CustomerListRow, 'rails' | 'products' | 'states' | 'sortKey'> {
  rails: string;
  products: string;
  states: string;
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

/** The scope's reporting currency (the MRR column's), as a value the planner can use as an index key. */
const CURRENCY = `coalesce((SELECT currency FROM reporting_settings WHERE project_id = $1), 'USD')`;

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
 * The ranked sorts' tables: each holds a row for the customers with a key (a total in the
 * reporting currency, a last active day), in an index by (key, customer) both ways; the
 * customers without a row share the lowest key (MRR 0, never seen as -1).
 */
const RANKED = {
  mrr: {
    table: 'revenue_customer_totals',
    match: `k.currency = ${CURRENCY}`,
    key: 'k.monthly_minor',
    from: (p: string) => `${p}::numeric`,
    isNone: (key: string) => Number(key) <= 0,
  },
  last_seen: {
    table: 'reporting_active_last_days',
    match: 'true',
    key: 'k.day',
    from: (p: string) => `date '1970-01-01' + ${p}::integer`,
    isNone: (key: string) => Number(key) < 0,
  },
} as const;

/** The row's columns, over the aliases `c`, `cur`, `u`, `pay`, `ls` and `r` of either shape. */
const COLUMNS = (sortKey: string) => `c.id, u.user_id AS "userId", c.email, c.created_at AS "createdAt",
             pay.mrr::text AS "mrrMinor", cur.currency, pay.paying,
             to_char(ls.day, 'YYYY-MM-DD') AS "lastSeenDay",
             coalesce(r.rails, '{}') AS rails, coalesce(r.products, '{}') AS products, coalesce(r.states, '{}') AS states,
             ${sortKey} AS "sortKey"`;

/** The export's columns, over the same aliases (the rail, product and state columns are never null: their words are never null). */
const EXPORT_COLUMNS = `c.id, u.user_id AS "userId", c.email, c.created_at AS "createdAt",
             pay.mrr::text AS "mrrMinor", cur.currency, pay.paying,
             to_char(ls.day, 'YYYY-MM-DD') AS "lastSeenDay",
             coalesce(array_to_string(r.rails, ' '), '') AS rails, coalesce(array_to_string(r.products, ' '), '') AS products,
             coalesce(array_to_string(r.states, ' '), '') AS states`;

/** The customer's parts, each a probe for this customer (`c`): for a page, a few rows. */
const PROBES = `
        CROSS JOIN (SELECT ${CURRENCY} AS currency) cur
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
        LEFT JOIN reporting_active_last_days ls ON ls.project_id = c.project_id AND ls.env = c.env AND ls.customer_id = c.id
        LEFT JOIN LATERAL (
          SELECT array_agg(DISTINCT w.rail) AS rails, array_agg(DISTINCT w.product_id) AS products,
                 array_remove(array_agg(DISTINCT w.word), CASE WHEN bool_or(w.word <> 'expired') THEN 'expired' END) AS states
            FROM (SELECT s.rail, s.product_id, ${LIST_STATE} AS word
                    FROM rail_subscriptions s WHERE s.project_id = c.project_id AND s.env = c.env AND s.customer_id = c.id) w) r ON true`;

/** The same parts for the whole scope at once, each one pass over its table joined by customer (the export). */
const SETS = `
        CROSS JOIN (SELECT ${CURRENCY} AS currency) cur
        LEFT JOIN (
          SELECT DISTINCT ON (a.customer_id) a.customer_id, a.value AS user_id FROM customer_aliases a
           WHERE a.project_id = $1 AND a.env = $2 AND a.type = '${ALIAS_TYPES.developer}'
           ORDER BY a.customer_id, a.created_at DESC, a.value DESC) u ON u.customer_id = c.id
        LEFT JOIN (
          SELECT t.customer_id, max(t.monthly_minor) FILTER (WHERE t.currency = ${CURRENCY}) AS mrr FROM revenue_customer_totals t
           WHERE t.project_id = $1 AND t.env = $2 GROUP BY t.customer_id) pt ON pt.customer_id = c.id
        CROSS JOIN LATERAL (SELECT coalesce(pt.mrr, 0) AS mrr, pt.customer_id IS NOT NULL AS paying) pay
        LEFT JOIN reporting_active_last_days ls ON ls.project_id = $1 AND ls.env = $2 AND ls.customer_id = c.id
        LEFT JOIN (
          SELECT w.customer_id, array_agg(DISTINCT w.rail) AS rails, array_agg(DISTINCT w.product_id) AS products,
                 array_remove(array_agg(DISTINCT w.word), CASE WHEN bool_or(w.word <> 'expired') THEN 'expired' END) AS states
            FROM (SELECT s.customer_id, s.rail, s.product_id, ${LIST_STATE} AS word
                    FROM rail_subscriptions s WHERE s.project_id = $1 AND s.env = $2) w
           GROUP BY w.customer_id) r ON r.customer_id = c.id`;

/** The export's memory for its sort and hash tables (per transaction; the default 4MB spills a list of 20,000 to disk). */
const EXPORT_WORK_MEM = '32MB';

/** The most ranked rows one statement of a filtered walk reads. */
const MAX_CHUNK = 5000;

interface Statement {
  text: string;
  params: unknown[];
}

/**
 * The console's customer list: a read-only composition over the tables of identity (customers,
 * aliases), rails (rail_subscriptions) and reporting (the revenue ledger's per-customer totals,
 * last active days), like the read API's reports. Every statement is bounded to the scope.
 *
 * A subscription's list state is the rail record's lifecycle state (`lifecycle_state`); a record
 * without one takes the state its status word names. A customer carries each distinct state of
 * its subscriptions, and `expired` only when none of them is anything else (a churned customer).
 * The state filter first finds the customers with a record in a wanted state through
 * `rail_subscriptions_lifecycle_state_idx`, then keeps those whose row carries it.
 *
 * A page sorted by MRR or last seen reads in two parts, in the list's order: the customers with
 * a row in the sort's table, walked in its index order (filters applied as it goes) up to the
 * page's end, and the customers without one (the lowest key) by id. A cursor names the part it
 * stopped in by its key, so its format is the one of every sort. The export reads the whole
 * scope set-based: each part one pass over its table, joined by customer, then sorted.
 */
@Injectable()
export class CustomerListRepository {
  constructor(private readonly sql: Sql) {}

  async page(scope: TenantScope, filter: CustomerListFilter, cursor: CustomerListCursor | null, limit: number): Promise<CustomerListRow[]> {
    // A search keeps few customers: its matches are found first, then sorted (whatever the sort).
    if (filter.sort === 'created' || filter.q !== null) return this.limited(this.statement(scope, filter, cursor, null, 'probe'), limit);
    const ranked = RANKED[filter.sort];
    const cursorInNone = cursor !== null && ranked.isNone(cursor.key);
    // MRR's ranked rows are all paying customers: a non-paying filter keeps none of them.
    const skipRanked = filter.sort === 'mrr' && filter.paying === false;
    const readRanked = (c: CustomerListCursor | null, n: number) => (skipRanked ? Promise.resolve([]) : this.walkRanked(scope, filter, c, n));
    const readNone = (c: CustomerListCursor | null, n: number) => this.limited(this.nonePart(scope, filter, c), n);
    if (filter.order === 'desc') {
      const first = cursorInNone ? [] : await readRanked(cursor, limit);
      if (first.length >= limit) return first;
      return [...first, ...(await readNone(cursorInNone ? cursor : null, limit - first.length))];
    }
    const first = cursor && !cursorInNone ? [] : await readNone(cursor, limit);
    if (first.length >= limit) return first;
    return [...first, ...(await readRanked(cursorInNone ? null : cursor, limit - first.length))];
  }

  /** The list's row of each given customer (the customer page's heading). */
  async rowsOf(scope: TenantScope, customerIds: readonly string[]): Promise<CustomerListRow[]> {
    const filter: CustomerListFilter = { q: null, state: null, rail: null, product: null, paying: null, sort: 'created', order: 'desc' };
    const { text, params } = this.statement(scope, filter, null, customerIds, 'probe');
    return this.sql.rows<CustomerListRow>(text, params);
  }

  /**
   * Every row of the filtered list, in the export's columns, through a server-side cursor,
   * `batch` rows at a time, in one read-only transaction; `each` answers false to stop early (the
   * client went away). The statement is planned for all its rows (hash joins over the scope), not
   * for the first ones, with room to sort a list of tens of thousands in memory, not on disk.
   */
  async each(scope: TenantScope, filter: CustomerListFilter, batch: number, each: (rows: CustomerExportRow[]) => Promise<boolean>): Promise<void> {
    const { text, params } = this.statement(scope, filter, null, null, 'set');
    const fetch = `FETCH ${Number(batch)} FROM customer_export`;
    await this.sql.transaction(async () => {
      await this.sql.run('SET TRANSACTION READ ONLY');
      await this.sql.run(`SELECT set_config('cursor_tuple_fraction', '1', true), set_config('work_mem', '${EXPORT_WORK_MEM}', true)`);
      await this.sql.run(`DECLARE customer_export NO SCROLL CURSOR FOR ${text}`, params);
      for (;;) {
        const rows = await this.sql.rows<CustomerExportRow>(fetch);
        if (rows.length === 0 || !(await each(rows))) break;
        if (rows.length < batch) break;
      }
      await this.sql.run('CLOSE customer_export');
    });
  }

  /**
   * The ranked part's first `limit` rows kept by the filter, read in chunks of the ranked index
   * (the page's size unfiltered, growing while a filter keeps few) so that each statement stays
   * an index walk of a known length whatever the planner guesses of the filter.
   */
  private async walkRanked(scope: TenantScope, filter: CustomerListFilter, cursor: CustomerListCursor | null, limit: number): Promise<CustomerListRow[]> {
    const filtered = filter.state !== null || filter.rail !== null || filter.product !== null || filter.paying !== null;
    const out: CustomerListRow[] = [];
    let chunk = filtered ? 4 * limit : limit;
    let at = cursor;
    while (out.length < limit) {
      const rows = await this.sql.rows<CustomerListRow & { keep: boolean }>(...this.rankedPart(scope, filter, at, chunk));
      for (const { keep, ...row } of rows) if (keep && out.length < limit) out.push(row);
      const last = rows[rows.length - 1];
      if (rows.length < chunk || !last) break;
      at = { key: last.sortKey, id: last.id };
      chunk = Math.min(4 * chunk, MAX_CHUNK);
    }
    return out;
  }

  private limited(statement: Statement, limit: number): Promise<CustomerListRow[]> {
    if (limit <= 0) return Promise.resolve([]);
    statement.params.push(limit);
    return this.sql.rows<CustomerListRow>(`${statement.text} LIMIT $${statement.params.length}`, statement.params);
  }

  /** The query's parameters (the scope first) and the WHERE conditions of the filter over the row's aliases. */
  private conditions(scope: TenantScope, filter: CustomerListFilter, ids: readonly string[] | null, statePrefilter = true) {
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
      if (statePrefilter)
        where.push(`c.id IN (
          SELECT s.customer_id FROM rail_subscriptions s WHERE s.project_id = $1 AND s.env = $2 AND s.lifecycle_state = ANY(${states}::text[])
          UNION ALL SELECT s.customer_id FROM rail_subscriptions s WHERE s.project_id = $1 AND s.env = $2 AND s.lifecycle_state IS NULL AND ${LIST_STATE} = ANY(${states}::text[]))`);
      where.push(`r.states && ${states}::text[]`);
    }
    if (filter.rail) where.push(`${p(filter.rail)} = ANY(r.rails)`);
    if (filter.product) where.push(`${p(filter.product)} = ANY(r.products)`);
    if (filter.paying !== null) where.push(`${filter.paying ? '' : 'NOT '}pay.paying`);
    return { params, p, where };
  }

  /** The whole list (or the given customers) in the sort's order, from `customers`: the list's rows by probes, or the export's by sets. */
  private statement(
    scope: TenantScope,
    filter: CustomerListFilter,
    cursor: CustomerListCursor | null,
    ids: readonly string[] | null,
    shape: 'probe' | 'set',
  ): Statement {
    const { params, p, where } = this.conditions(scope, filter, ids);
    const sort = SORTS[filter.sort];
    const dir = filter.order === 'asc' ? 'ASC' : 'DESC';
    if (cursor) where.push(`(${sort.expr}, c.id) ${filter.order === 'asc' ? '>' : '<'} (${sort.from(p(cursor.key))}, ${p(cursor.id)})`);
    const text = `
      SELECT ${shape === 'probe' ? COLUMNS(sort.key) : EXPORT_COLUMNS}
        FROM customers c${shape === 'probe' ? PROBES : SETS}
       WHERE ${where.join(' AND ')}
       ORDER BY ${sort.expr} ${dir}, c.id ${dir}`;
    return { text, params };
  }

  /**
   * The next `chunk` customers with a row in the ranked sort's table, in its index order from
   * the cursor on, each with whether the filter keeps it (`keep`).
   */
  private rankedPart(scope: TenantScope, filter: CustomerListFilter, cursor: CustomerListCursor | null, chunk: number): [string, unknown[]] {
    const sort = filter.sort as keyof typeof RANKED;
    const ranked = RANKED[sort];
    const { params, p, where } = this.conditions(scope, filter, null, false);
    const dir = filter.order === 'asc' ? 'ASC' : 'DESC';
    const walk = ['k.project_id = $1', 'k.env = $2', ranked.match];
    if (cursor) walk.push(`(${ranked.key}, k.customer_id) ${filter.order === 'asc' ? '>' : '<'} (${ranked.from(p(cursor.key))}, ${p(cursor.id)})`);
    const text = `
      SELECT ${COLUMNS(SORTS[sort].key)}, coalesce(${where.join(' AND ')}, false) AS keep
        FROM (SELECT k.* FROM ${ranked.table} k
               WHERE ${walk.join(' AND ')}
               ORDER BY ${ranked.key} ${dir}, k.customer_id ${dir} LIMIT ${p(chunk)}) k
        JOIN customers c ON c.project_id = $1 AND c.env = $2 AND c.id = k.customer_id${PROBES}
       ORDER BY ${ranked.key} ${dir}, k.customer_id ${dir}`;
    return [text, params];
  }

  /** The customers without a row in the ranked sort's table (all on the lowest key), by id from the cursor on. */
  private nonePart(scope: TenantScope, filter: CustomerListFilter, cursor: CustomerListCursor | null): Statement {
    const sort = filter.sort as keyof typeof RANKED;
    const ranked = RANKED[sort];
    const { params, p, where } = this.conditions(scope, filter, null);
    const dir = filter.order === 'asc' ? 'ASC' : 'DESC';
    where.push(`NOT EXISTS (SELECT 1 FROM ${ranked.table} k WHERE k.project_id = c.project_id AND k.env = c.env AND k.customer_id = c.id AND ${ranked.match})`);
    // Paying customers without a total in the reporting currency have one in another: start from those.
    if (sort === 'mrr' && filter.paying === true)
      where.push(`c.id IN (SELECT t.customer_id FROM revenue_customer_totals t WHERE t.project_id = $1 AND t.env = $2 AND t.currency <> ${CURRENCY})`);
    if (cursor) where.push(`c.id ${filter.order === 'asc' ? '>' : '<'} ${p(cursor.id)}`);
    const text = `
      SELECT ${COLUMNS(SORTS[sort].key)}
        FROM customers c${PROBES}
       WHERE ${where.join(' AND ')}
       ORDER BY c.id ${dir}`;
    return { text, params };
  }
}
