import { ApiError } from '#platform';

/** The three resource units the read-cost reads sum; other units a reporter sends are ignored. */
export interface UnitCounts {
  read: number;
  write: number;
  delete: number;
}

export interface BucketReport {
  /** UTC day `YYYY-MM-DD`. */
  date: string;
  byLabel: Map<string, UnitCounts>;
  byHour: Record<string, UnitCounts> | null;
  byMinute: Record<string, UnitCounts> | null;
  byActor: Map<string, UnitCounts>;
  byActorLabel: Record<string, UnitCounts> | null;
}

/** Entry bounds per map: past them the report is 413 naming the field. */
export const BUCKET_REPORT_BOUNDS = {
  byLabel: 1_000,
  byHour: 24,
  byMinute: 288,
  byActor: 5_000,
  byActorLabel: 10_000,
} as const;
export const MAX_LABEL_LENGTH = 200;
export const MAX_ACTOR_LENGTH = 256;
/** The reporter's cluster for reads with no identified actor: overhead, never a user. */
export const ANONYMOUS_ACTOR = 'anonymous';
const MAX_COUNT = 1e15;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const HOUR = /^([01]\d|2[0-3])$/;
const MINUTE = /^([01]\d|2[0-3])[0-5]\d$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function tooLarge(field: string, max: number): ApiError {
  return new ApiError(413, 'invalid_request_error', 'invalid_param_value', `${field} has more than ${max} entries`);
}

/** `YYYY-MM-DD` naming a real calendar day. */
export function isCalendarDate(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.toISOString().slice(0, 10) === value;
}

function counts(value: unknown, field: string): UnitCounts {
  if (!isObject(value)) throw ApiError.invalidParam(`${field} must be an object of counts`);
  const out: UnitCounts = { read: 0, write: 0, delete: 0 };
  for (const unit of ['read', 'write', 'delete'] as const) {
    const n = value[unit];
    if (n === undefined || n === null) continue;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0 || n > MAX_COUNT) {
      throw ApiError.invalidParam(`${field}.${unit} must be a non-negative integer`);
    }
    out[unit] = n;
  }
  return out;
}

function entries(value: unknown, field: string, max: number, required: boolean): Array<[string, unknown]> | null {
  if (value === undefined || value === null) {
    if (required) throw ApiError.missingParam(`${field} is required`);
    return null;
  }
  if (!isObject(value)) throw ApiError.invalidParam(`${field} must be an object`);
  const list = Object.entries(value);
  if (list.length > max) throw tooLarge(field, max);
  return list;
}

function keyed(value: unknown, field: string, max: number, keyRule: (key: string) => boolean, keyHint: string): Record<string, UnitCounts> | null {
  const list = entries(value, field, max, false);
  if (!list) return null;
  const out: Record<string, UnitCounts> = {};
  for (const [key, v] of list) {
    if (!keyRule(key)) throw ApiError.invalidParam(`${field} keys must be ${keyHint}`);
    out[key] = counts(v, `${field}.${key}`);
  }
  return out;
}

function named(value: unknown, field: string, max: number, maxLength: number, required: boolean): Map<string, UnitCounts> {
  const out = new Map<string, UnitCounts>();
  for (const [key, v] of entries(value, field, max, required) ?? []) {
    if (key.length < 1 || key.length > maxLength) throw ApiError.invalidParam(`${field} keys must be 1 to ${maxLength} characters`);
    out.set(key, counts(v, `${field}.${key.slice(0, 64)}`));
  }
  return out;
}

/**
 * A bucket reporter's body (buckets-oss `BucketsReport`): `date`, `byLabel` required; the
 * other maps optional. Unknown fields and unknown resource units are ignored; bounds past
 * which a field is 413 are BUCKET_REPORT_BOUNDS.
 */
export function parseBucketReport(body: unknown): BucketReport {
  if (!isObject(body)) throw ApiError.invalidParam('Request body must be a JSON object');
  if (body.date === undefined || body.date === null) throw ApiError.missingParam('date is required');
  if (typeof body.date !== 'string' || !isCalendarDate(body.date)) throw ApiError.invalidParam('date must be a UTC day YYYY-MM-DD');
  return {
    date: body.date,
    byLabel: named(body.byLabel, 'byLabel', BUCKET_REPORT_BOUNDS.byLabel, MAX_LABEL_LENGTH, true),
    byHour: keyed(body.byHour, 'byHour', BUCKET_REPORT_BOUNDS.byHour, (k) => HOUR.test(k), 'UTC hours HH'),
    byMinute: keyed(body.byMinute, 'byMinute', BUCKET_REPORT_BOUNDS.byMinute, (k) => MINUTE.test(k), 'UTC slots HHMM'),
    byActor: named(body.byActor, 'byActor', BUCKET_REPORT_BOUNDS.byActor, MAX_ACTOR_LENGTH, false),
    byActorLabel: keyed(body.byActorLabel, 'byActorLabel', BUCKET_REPORT_BOUNDS.byActorLabel, (k) => k.length >= 1 && k.length <= 512, '1 to 512 characters'),
  };
}

/** The UTC day `offset` days before `nowMs` (0: today), as `YYYY-MM-DD`. */
export function utcDay(nowMs: number, offset = 0): string {
  return new Date(nowMs - offset * 86_400_000).toISOString().slice(0, 10);
}

/**
 * The sum of two stored maps of counts (hours, slots or actor labels): a key in both adds its
 * units, a key in one is kept; null when both are. Reports of one key and day add up.
 */
export function addCountMaps(a: Record<string, UnitCounts> | null, b: Record<string, UnitCounts> | null): Record<string, UnitCounts> | null {
  if (!a) return b;
  if (!b) return a;
  // A Map, so that a key such as `__proto__` stays an ordinary key.
  const sum = new Map(Object.entries(a));
  for (const [key, c] of Object.entries(b)) {
    const prior = sum.get(key);
    sum.set(key, prior ? { read: prior.read + c.read, write: prior.write + c.write, delete: prior.delete + c.delete } : c);
  }
  return Object.fromEntries(sum);
}

/** Totals of a report's labels. */
export function totalsOf(report: BucketReport): UnitCounts {
  const total: UnitCounts = { read: 0, write: 0, delete: 0 };
  for (const c of report.byLabel.values()) {
    total.read += c.read;
    total.write += c.write;
    total.delete += c.delete;
  }
  return total;
}
