/**
 * Pure rules of a migration request: the request-level checks and the validation of each row.
 * No I/O. A bad row never fails the request; it becomes a `details.errors[]` entry.
 */
import { ApiError, findUnstorableText } from '#platform';
import { APP_ACCOUNT_TOKEN_PATTERN, sanitizeTraits, type Traits, USER_ID_PATTERN } from '#identity';
import { CATALOG_KEY_MAX, CATALOG_KEY_PATTERN, type PurchaseRail } from '#entitlements';
import { RAIL_ALIAS_TYPES } from '#rails';

export const MAX_MIGRATION_ROWS = 1000;
export const MAX_DEVELOPER_USER_ID = 256;
export const MAX_EMAIL = 320;
export const MAX_DISPLAY_NAME = 256;
/** customer_aliases.value holds at most 512 chars. */
export const MAX_RAIL_ID = 512;
export const MAX_ENTITLEMENT_KEYS_PER_ROW = 32;

/** The row fields that carry rail ids, the rail they belong to and their alias node type (the rails' own). */
export const RAIL_ID_FIELDS = [
  { field: 'cardCustomerId', rail: 'card_payments', type: RAIL_ALIAS_TYPES.cardCustomerId, purchase: true },
  { field: 'iosStoreOriginalTransactionId', rail: 'ios_store', type: RAIL_ALIAS_TYPES.iosOriginalTransactionId, purchase: true },
  { field: 'iosAppAccountToken', rail: 'ios_store', type: RAIL_ALIAS_TYPES.iosAppAccountToken, purchase: false },
  { field: 'androidPurchaseToken', rail: 'android_store', type: RAIL_ALIAS_TYPES.androidPurchaseToken, purchase: true },
  { field: 'androidObfuscatedAccountId', rail: 'android_store', type: RAIL_ALIAS_TYPES.androidObfuscatedAccountId, purchase: false },
] as const satisfies readonly { field: string; rail: PurchaseRail; type: string; purchase: boolean }[];

export type RailIdField = (typeof RAIL_ID_FIELDS)[number]['field'];

/** Alias node types that stand for a purchase on a rail (not merely an account binding). */
export const PURCHASE_ALIAS_TYPES: readonly string[] = RAIL_ID_FIELDS.filter((f) => f.purchase).map((f) => f.type);

export interface RailIdOfRow {
  field: RailIdField;
  rail: PurchaseRail;
  type: string;
  value: string;
  purchase: boolean;
}

/** A row that passed validation. */
export interface MigrationRow {
  rowIndex: number;
  developerUserId: string;
  email: string | null;
  displayName: string | null;
  /** Sanitised like identify's traits (invalid entries dropped, never rejected). */
  traits: Traits;
  hasTraits: boolean;
  railIds: RailIdOfRow[];
  /** Keys asserted true, in the order sent. */
  entitlementKeys: string[];
}

export interface RowError {
  rowIndex: number;
  developerUserId: string | null;
  reason: string;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Request-level checks: `users` missing or empty 400 missing_required_param; not an array or
 * over 1,000 rows 400 invalid_param_value; a string or key anywhere in the rows that
 * PostgreSQL cannot store as sent (NUL, an unpaired surrogate) 400 invalid_param_value naming
 * its path (`users[3].email`), the validation layer's rule for every other body.
 */
export function usersOf(body: unknown): unknown[] {
  const users = isPlainObject(body) ? body.users : undefined;
  if (users === undefined || users === null) throw ApiError.missingParam('users is required');
  if (!Array.isArray(users)) throw ApiError.invalidParam('users must be an array of rows');
  if (users.length === 0) throw ApiError.missingParam('users must hold at least 1 row');
  if (users.length > MAX_MIGRATION_ROWS) throw ApiError.invalidParam(`users holds ${users.length} rows; at most ${MAX_MIGRATION_ROWS} per request`);
  const unstorable = findUnstorableText(users, 'users');
  if (unstorable !== null) throw ApiError.invalidParam(`${unstorable}: must not contain NUL characters or unpaired surrogates`);
  return users;
}

/** An optional string field: absent, null and '' mean absent. */
function optionalString(row: Record<string, unknown>, field: string, max: number): { value: string | null } | { reason: string } {
  const value = row[field];
  if (value === undefined || value === null || value === '') return { value: null };
  if (typeof value !== 'string') return { reason: `${field}_invalid_type` };
  if (value.length > max) return { reason: `${field}_too_long` };
  // PostgreSQL text cannot hold U+0000.
  if (value.includes('\u0000')) return { reason: `${field}_invalid_value` };
  return { value };
}

/**
 * Validates one row. Reasons (the first failure wins): `row_invalid_type`,
 * `developerUserId_required`, `developerUserId_invalid_type`, `developerUserId_too_long`,
 * `developerUserId_invalid_value` (characters identify does not accept), `<field>_invalid_type`,
 * `<field>_too_long`, `<field>_invalid_value` (U+0000), `iosAppAccountToken_invalid_value`, `entitlements_invalid_key`,
 * `entitlements_too_many_keys`.
 */
export function validateRow(input: unknown, rowIndex: number): MigrationRow | RowError {
  if (!isPlainObject(input)) return { rowIndex, developerUserId: null, reason: 'row_invalid_type' };
  const raw = input.developerUserId;
  const fail = (reason: string): RowError => ({ rowIndex, developerUserId: typeof raw === 'string' ? raw : null, reason });
  if (raw === undefined || raw === null || raw === '') return fail('developerUserId_required');
  if (typeof raw !== 'string') return fail('developerUserId_invalid_type');
  if (raw.length > MAX_DEVELOPER_USER_ID) return fail('developerUserId_too_long');
  if (!USER_ID_PATTERN.test(raw)) return fail('developerUserId_invalid_value');

  const email = optionalString(input, 'email', MAX_EMAIL);
  if ('reason' in email) return fail(email.reason);
  const displayName = optionalString(input, 'displayName', MAX_DISPLAY_NAME);
  if ('reason' in displayName) return fail(displayName.reason);

  const railIds: RailIdOfRow[] = [];
  for (const spec of RAIL_ID_FIELDS) {
    const checked = optionalString(input, spec.field, MAX_RAIL_ID);
    if ('reason' in checked) return fail(checked.reason);
    if (checked.value === null) continue;
    let value = checked.value;
    if (spec.field === 'iosAppAccountToken') {
      value = value.toLowerCase();
      if (!APP_ACCOUNT_TOKEN_PATTERN.test(value)) return fail('iosAppAccountToken_invalid_value');
    }
    railIds.push({ field: spec.field, rail: spec.rail, type: spec.type, value, purchase: spec.purchase });
  }

  const traitsInput = input.traits;
  if (traitsInput !== undefined && traitsInput !== null && !isPlainObject(traitsInput)) return fail('traits_invalid_type');
  const traits = sanitizeTraits(traitsInput);

  const entitlementsInput = input.entitlements;
  const entitlementKeys: string[] = [];
  if (entitlementsInput !== undefined && entitlementsInput !== null) {
    if (!isPlainObject(entitlementsInput)) return fail('entitlements_invalid_type');
    const entries = Object.entries(entitlementsInput);
    if (entries.length > MAX_ENTITLEMENT_KEYS_PER_ROW) return fail('entitlements_too_many_keys');
    for (const [key, value] of entries) {
      if (typeof value !== 'boolean') return fail('entitlements_invalid_type');
      if (key.length > CATALOG_KEY_MAX || !CATALOG_KEY_PATTERN.test(key)) return fail('entitlements_invalid_key');
      if (value) entitlementKeys.push(key);
    }
  }

  return {
    rowIndex,
    developerUserId: raw,
    email: email.value,
    displayName: displayName.value,
    traits,
    hasTraits: Object.keys(traits).length > 0,
    railIds,
    entitlementKeys,
  };
}

export function isRowError(row: MigrationRow | RowError): row is RowError {
  return 'reason' in row;
}
