/**
 * Pure rules of the console's customer list: its query parameters, its opaque cursor and the
 * CSV cells of its export. No I/O.
 */
import { ApiError } from '#platform';

/** A subscription's state in the list: the lifecycle's state of the rail record. */
export const LIST_STATES = ['trialing', 'active', 'in_grace_period', 'in_billing_retry', 'on_hold', 'paused', 'expired', 'refunded'] as const;
/** The state filter's values: each list state, and the earlier words `billing_issue` (any billing problem) and `churned` (`expired`). */
export const CUSTOMER_STATES = [...LIST_STATES, 'billing_issue', 'churned'] as const;
export type CustomerState = (typeof CUSTOMER_STATES)[number];

/** The list states a filter value matches (a customer matches when its row carries one of them). */
export function statesOfFilter(state: CustomerState): string[] {
  if (state === 'billing_issue') return ['in_grace_period', 'in_billing_retry', 'on_hold'];
  if (state === 'churned') return ['expired'];
  return [state];
}

/**
 * A record without a lifecycle state (applied before the lifecycle was stored, or by a rail that
 * does not derive it) takes its list state from the rail's status word: the billing-issue words
 * split into those of a grace period, of an account hold, and the others (billing retry).
 */
export function billingIssueWords(words: Iterable<string>): { grace: string[]; hold: string[]; retry: string[] } {
  const all = [...words];
  const grace = all.filter((w) => /GRACE_PERIOD$/.test(w));
  const hold = all.filter((w) => /ON_HOLD$/.test(w));
  return { grace, hold, retry: all.filter((w) => !grace.includes(w) && !hold.includes(w)) };
}
export const CUSTOMER_SORTS = ['created', 'mrr', 'last_seen'] as const;
export type CustomerSort = (typeof CUSTOMER_SORTS)[number];
export const LIST_RAILS = ['ios_store', 'card_payments', 'android_store'] as const;

export interface CustomerListFilter {
  /** Lower-cased search text; null lists every customer. */
  q: string | null;
  state: CustomerState | null;
  rail: string | null;
  product: string | null;
  paying: boolean | null;
  sort: CustomerSort;
  order: 'asc' | 'desc';
}

export interface CustomerListCursor {
  /** The sort key of the last row (a decimal string: microseconds, minor units or a day number). */
  key: string;
  id: string;
}

/** The list parameters (any of them selects the list over the exact search). */
export const LIST_PARAMS = ['match', 'state', 'rail', 'product', 'paying', 'sort', 'order', 'cursor'] as const;

const Q_MAX = 512;

function oneOf<T extends string>(raw: unknown, name: string, values: readonly T[]): T | null {
  if (raw === undefined || raw === '') return null;
  if (typeof raw !== 'string' || !values.includes(raw as T)) throw ApiError.invalidParam(`${name} must be one of ${values.join(', ')}`);
  return raw as T;
}

/** Validates the list's query parameters, naming the one at fault. */
export function parseListFilter(query: Record<string, unknown>): CustomerListFilter {
  oneOf(query.match, 'match', ['partial']);
  const q = query.q;
  if (q !== undefined && (typeof q !== 'string' || q.length > Q_MAX)) throw ApiError.invalidParam(`q must be at most ${Q_MAX} characters`);
  const product = query.product;
  if (product !== undefined && (typeof product !== 'string' || product.length > 200)) throw ApiError.invalidParam('product must be at most 200 characters');
  const paying = oneOf(query.paying, 'paying', ['true', 'false']);
  const trimmed = typeof q === 'string' ? q.trim().toLowerCase() : '';
  return {
    q: trimmed === '' ? null : trimmed,
    state: oneOf(query.state, 'state', CUSTOMER_STATES),
    rail: oneOf(query.rail, 'rail', LIST_RAILS),
    product: typeof product === 'string' && product !== '' ? product : null,
    paying: paying === null ? null : paying === 'true',
    sort: oneOf(query.sort, 'sort', CUSTOMER_SORTS) ?? 'created',
    order: oneOf(query.order, 'order', ['asc', 'desc'] as const) ?? 'desc',
  };
}

export function encodeCursor(cursor: CustomerListCursor): string {
  return Buffer.from(JSON.stringify([cursor.key, cursor.id])).toString('base64url');
}

export function decodeCursor(raw: unknown): CustomerListCursor | null {
  if (raw === undefined || raw === '') return null;
  const invalid = () => ApiError.invalidParam('cursor must be the nextCursor of a previous page');
  if (typeof raw !== 'string' || raw.length > 1024) throw invalid();
  try {
    const value: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      /^-?\d{1,40}(\.\d{1,20})?$/.test(value[0]) &&
      typeof value[1] === 'string' &&
      value[1].length <= 128
    ) {
      return { key: value[0], id: value[1] };
    }
  } catch {
    // falls through to the error below
  }
  throw invalid();
}

/** `value` as a LIKE pattern's literal text (`%`, `_` and the escape character itself escaped). */
export function likeLiteral(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One CSV cell (RFC 4180 quoting). A text starting with `=`, `+`, `-`, `@`, a tab or a carriage
 * return is prefixed with `'` so that a spreadsheet shows it instead of running it as a formula.
 */
export function csvCell(value: string | number | boolean | null): string {
  if (value === null) return '';
  // Numbers and booleans never need quoting nor the prefix.
  if (typeof value !== 'string') return String(value);
  const first = value.charCodeAt(0);
  const text = first === 61 || first === 43 || first === 45 || first === 64 || first === 9 || first === 13 ? `'${value}` : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(values: readonly (string | number | boolean | null)[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) line += i === 0 ? csvCell(values[i]!) : `,${csvCell(values[i]!)}`;
  return `${line}\r\n`;
}
