import { ApiError, type SdkIdentity } from '../../../platform/src/index.js';
import type { EventRow } from '../storage/event-insert.sql.js';

/**
 * The request rules of POST /v1/events as one pure, hand-written pass over the body (the hot
 * path: no class-validator, no per-event allocation beyond the normalised record).
 *
 * All-or-nothing: the first invalid event throws `400 invalid_param_value` naming its index
 * and field (`events[7].name: ...`). `level`, `tags` and `categoryTags` are never rejected:
 * malformed values are dropped (see the soft-drop rules below). Unknown fields are ignored.
 */

export const MAX_EVENTS_PER_BATCH = 100;
export const MAX_NAME_CHARS = 128;
export const MAX_EVENT_ID_CHARS = 64;
export const MAX_PROPERTIES_BYTES = 8192;
export const MAX_CLOCK_SKEW_MS = 24 * 60 * 60 * 1000;
export const MAX_TAGS = 32;
export const MAX_TAG_VALUE_CHARS = 64;
/** Tag keys are not limited by the spec; the same 64 chars keep `tags` from carrying bulk data. */
export const MAX_TAG_KEY_CHARS = 64;
export const MAX_CATEGORY_TAGS = 16;
export const MAX_CATEGORY_TAG_CHARS = 32;
/** Identity hints follow the identify limits (userId 1..256, anonymousId 1..128). */
export const MAX_DEVELOPER_USER_ID_CHARS = 256;
export const MAX_ANONYMOUS_ID_CHARS = 128;
export const MAX_SERVICE_CUSTOMER_ID_CHARS = 256;

export const EVENT_LEVELS = ['error', 'warning', 'info'] as const;
export type EventLevel = (typeof EVENT_LEVELS)[number];

const DAY_MS = 86_400_000;
/** 9999-12-31: the partition day of absurd client clocks is pinned into a fixed range. */
const MAX_CLIENT_DAY = 2_932_896;
const FINGERPRINT = /^[0-9a-fA-F]{8}$/;
// PostgreSQL text and jsonb cannot hold NUL, nor unpaired UTF-16 surrogates.
const UNSTORABLE_CHAR = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A validated event: the stored row, plus what ingestion needs to know about it. */
export interface NormalizedEvent extends EventRow {
  /** Whether the id came from the client (only those can be retried onto themselves). */
  clientEventId: boolean;
  level: EventLevel | null;
  isError: boolean;
}

export interface BatchEnvelope {
  appId: string | null;
  sdk: SdkIdentity | null;
  /** Observed, never enforced. */
  envelopeVersion: number | null;
}

export interface ValidatedBatch {
  events: NormalizedEvent[];
  /** How many level / tags / categoryTags values (or entries) were dropped. */
  softDropped: number;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Length in characters (code points); cheap when the UTF-16 length already decides it. */
export function charLength(value: string, max: number): number {
  if (value.length <= max) return value.length;
  let count = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

/** The UTF-8 byte length of `value` when it is above `max`, else false (skipped when the UTF-16 length already decides it). */
export function utf8BytesOver(value: string, max: number): number | false {
  // One UTF-16 code unit is at most 3 UTF-8 bytes (a surrogate pair, two units, is 4).
  if (value.length * 3 <= max) return false;
  const bytes = Buffer.byteLength(value, 'utf8');
  return bytes > max ? bytes : false;
}

export function dayOf(ms: number): number {
  const day = Math.floor(ms / DAY_MS);
  return day < 0 ? 0 : day > MAX_CLIENT_DAY ? MAX_CLIENT_DAY : day;
}

/** `timestamp` clamped to the receive time when it is more than 24 h away from it. */
export function clampTimestamp(clientMs: number, receivedAtMs: number): number {
  return Math.abs(clientMs - receivedAtMs) > MAX_CLOCK_SKEW_MS ? receivedAtMs : clientMs;
}

/** False when PostgreSQL cannot store the string (NUL or an unpaired surrogate). */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE_CHAR.test(value);
}

/**
 * The same for JSON text made by JSON.stringify (which escapes both as \\uXXXX: \\u0000, and
 * \\ud800 to \\udfff, since only unpaired surrogates are escaped). One linear pass from escape
 * to escape (a regular expression over runs of backslashes backtracks quadratically).
 */
export function isStorableJson(json: string): boolean {
  for (let i = json.indexOf('\\'); i !== -1; ) {
    if (json.charCodeAt(i + 1) !== 0x75 /* u */) {
      // A two-character escape (backslash, quote, n, t, ...): what follows it is not escaped.
      i = json.indexOf('\\', i + 2);
      continue;
    }
    const hex = json.slice(i + 2, i + 6).toLowerCase();
    if (hex === '0000' || (hex.charCodeAt(0) === 0x64 /* d */ && '89abcdef'.includes(hex[1]))) return false;
    i = json.indexOf('\\', i + 6);
  }
  return true;
}

/**
 * JSON.stringify of a value made by JSON.parse, without recursion. The native serialiser
 * recurses and overflows the stack past a few thousand levels of nesting, which a 1 MB body
 * easily holds; this one is only the fallback for that case (same output, slower).
 */
export function stringifyParsedJson(root: unknown): string {
  let out = '';
  const open: { values: unknown[]; keys: string[] | null; next: number }[] = [];
  let value: unknown = root;
  for (;;) {
    if (Array.isArray(value)) {
      out += '[';
      open.push({ values: value, keys: null, next: 0 });
    } else if (typeof value === 'object' && value !== null) {
      const object = value as Record<string, unknown>;
      const keys = Object.keys(object);
      out += '{';
      open.push({ values: keys.map((key) => object[key]), keys, next: 0 });
    } else {
      out += JSON.stringify(value) ?? 'null';
    }
    for (;;) {
      const frame = open[open.length - 1];
      if (frame === undefined) return out;
      if (frame.next < frame.values.length) {
        if (frame.next > 0) out += ',';
        if (frame.keys) out += `${JSON.stringify(frame.keys[frame.next])}:`;
        value = frame.values[frame.next++];
        break;
      }
      out += frame.keys ? '}' : ']';
      open.pop();
    }
  }
}

/** JSON text of a parsed JSON value; deep nesting falls back to the non-recursive serialiser. */
export function serializeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (err instanceof RangeError) return stringifyParsedJson(value);
    throw err;
  }
}

const UNSTORABLE = 'must not contain NUL characters or unpaired surrogates';

function fail(path: string, reason: string): never {
  throw ApiError.invalidParam(`${path}: ${reason}`);
}

/** The batch envelope: `appId`, `sdk`, `envelopeVersion` (the environment is checked against the key before). */
export function readEnvelope(body: Record<string, unknown>): BatchEnvelope {
  const { appId, sdk, envelopeVersion } = body;
  if (appId !== undefined && appId !== null && typeof appId !== 'string') fail('appId', 'must be a string');
  let identity: SdkIdentity | null = null;
  if (sdk !== undefined && sdk !== null) {
    if (!isPlainObject(sdk)) fail('sdk', 'must be an object with name and version');
    if (typeof sdk.name !== 'string' || sdk.name.length === 0 || sdk.name.length > 128) fail('sdk.name', 'must be a string of 1 to 128 characters');
    if (typeof sdk.version !== 'string' || sdk.version.length === 0 || sdk.version.length > 64) fail('sdk.version', 'must be a string of 1 to 64 characters');
    if (!isStorableText(sdk.name)) fail('sdk.name', UNSTORABLE);
    if (!isStorableText(sdk.version)) fail('sdk.version', UNSTORABLE);
    identity = { name: sdk.name, version: sdk.version };
  }
  return {
    appId: typeof appId === 'string' ? appId : null,
    sdk: identity,
    envelopeVersion: Number.isSafeInteger(envelopeVersion) ? (envelopeVersion as number) : null,
  };
}

function optionalString(raw: Record<string, unknown>, field: string, index: number, max: number): string | null {
  const value = raw[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') fail(`events[${index}].${field}`, 'must be a string');
  const length = charLength(value, max);
  if (length < 1 || length > max) fail(`events[${index}].${field}`, `must be 1 to ${max} characters (got ${length})`);
  if (!isStorableText(value)) fail(`events[${index}].${field}`, UNSTORABLE);
  return value;
}

function validTag(key: string, tag: unknown): tag is string {
  return (
    typeof tag === 'string' &&
    charLength(tag, MAX_TAG_VALUE_CHARS) <= MAX_TAG_VALUE_CHARS &&
    key.length > 0 &&
    charLength(key, MAX_TAG_KEY_CHARS) <= MAX_TAG_KEY_CHARS &&
    isStorableText(key) &&
    isStorableText(tag)
  );
}

function validCategoryTag(entry: unknown): entry is string {
  return typeof entry === 'string' && entry.length > 0 && charLength(entry, MAX_CATEGORY_TAG_CHARS) <= MAX_CATEGORY_TAG_CHARS && isStorableText(entry);
}

/**
 * tags: kept only when an object; entries whose value is not a string of at most 64
 * characters, or whose key is empty or longer than 64 characters, are dropped one by one;
 * of the rest, the first 32 are kept.
 */
export function sanitizeTags(value: unknown): { json: string | null; dropped: number } {
  if (value === undefined || value === null) return { json: null, dropped: 0 };
  if (!isPlainObject(value)) return { json: null, dropped: 1 };
  const keys = Object.keys(value);
  if (keys.length <= MAX_TAGS && keys.every((key) => validTag(key, value[key]))) {
    // The common case: nothing to drop, no copy.
    return { json: keys.length > 0 ? JSON.stringify(value) : null, dropped: 0 };
  }
  const kept: Record<string, string> = Object.create(null);
  let keptCount = 0;
  let dropped = 0;
  for (const key of keys) {
    const tag = value[key];
    if (keptCount >= MAX_TAGS || !validTag(key, tag)) {
      dropped++;
      continue;
    }
    kept[key] = tag;
    keptCount++;
  }
  return { json: keptCount > 0 ? JSON.stringify(kept) : null, dropped };
}

/**
 * categoryTags: kept only when an array; entries that are not strings of 1 to 32 characters
 * are dropped one by one; of the rest, the first 16 are kept.
 */
export function sanitizeCategoryTags(value: unknown): { json: string | null; dropped: number } {
  if (value === undefined || value === null) return { json: null, dropped: 0 };
  if (!Array.isArray(value)) return { json: null, dropped: 1 };
  if (value.length <= MAX_CATEGORY_TAGS && value.every(validCategoryTag)) {
    return { json: value.length > 0 ? JSON.stringify(value) : null, dropped: 0 };
  }
  const kept: string[] = [];
  let dropped = 0;
  for (const entry of value) {
    if (kept.length >= MAX_CATEGORY_TAGS || !validCategoryTag(entry)) {
      dropped++;
      continue;
    }
    kept.push(entry);
  }
  return { json: kept.length > 0 ? JSON.stringify(kept) : null, dropped };
}

export function isEventLevel(value: unknown): value is EventLevel {
  return value === 'error' || value === 'warning' || value === 'info';
}

function normalizeEvent(raw: unknown, index: number, receivedAtMs: number, newEventId: () => string): { event: NormalizedEvent; softDropped: number } {
  if (!isPlainObject(raw)) fail(`events[${index}]`, 'must be an object');

  const name = raw.name;
  if (name === undefined || name === null) fail(`events[${index}].name`, 'is required');
  if (typeof name !== 'string') fail(`events[${index}].name`, 'must be a string');
  const nameLength = charLength(name, MAX_NAME_CHARS);
  if (nameLength < 1 || nameLength > MAX_NAME_CHARS) fail(`events[${index}].name`, `must be 1 to ${MAX_NAME_CHARS} characters (got ${nameLength})`);
  if (!isStorableText(name)) fail(`events[${index}].name`, UNSTORABLE);

  const clientEventId = optionalString(raw, 'eventId', index, MAX_EVENT_ID_CHARS);

  const timestamp = raw.timestamp;
  let clientTimestampMs: number | null = null;
  if (timestamp !== undefined && timestamp !== null) {
    if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp)) fail(`events[${index}].timestamp`, 'must be an integer (Unix milliseconds)');
    clientTimestampMs = timestamp;
  }

  const properties = raw.properties;
  let propertiesJson: string | null = null;
  if (properties !== undefined && properties !== null) {
    if (!isPlainObject(properties)) fail(`events[${index}].properties`, 'must be an object');
    propertiesJson = serializeJson(properties);
    const bytes = utf8BytesOver(propertiesJson, MAX_PROPERTIES_BYTES);
    if (bytes !== false) fail(`events[${index}].properties`, `must be at most ${MAX_PROPERTIES_BYTES} bytes when JSON-serialised (got ${bytes})`);
    if (!isStorableJson(propertiesJson)) fail(`events[${index}].properties`, UNSTORABLE);
  }

  const developerUserId = optionalString(raw, 'developerUserId', index, MAX_DEVELOPER_USER_ID_CHARS);
  const anonymousId = optionalString(raw, 'anonymousId', index, MAX_ANONYMOUS_ID_CHARS);
  const serviceCustomerId = optionalString(raw, 'serviceCustomerId', index, MAX_SERVICE_CUSTOMER_ID_CHARS);
  if (developerUserId === null && anonymousId === null && serviceCustomerId === null) {
    fail(`events[${index}]`, 'at least one identity hint is required (developerUserId, anonymousId or serviceCustomerId)');
  }

  let softDropped = 0;
  let level: EventLevel | null = null;
  if (raw.level !== undefined && raw.level !== null) {
    if (isEventLevel(raw.level)) level = raw.level;
    else softDropped++;
  }
  const tags = sanitizeTags(raw.tags);
  const categoryTags = sanitizeCategoryTags(raw.categoryTags);
  softDropped += tags.dropped + categoryTags.dropped;

  const isError = level !== null || name.startsWith('error.');
  let fingerprint: string | null = null;
  if (isError && properties !== undefined && properties !== null) {
    const candidate = (properties as Record<string, unknown>).fingerprint;
    if (typeof candidate === 'string' && FINGERPRINT.test(candidate)) fingerprint = candidate.toLowerCase();
  }

  return {
    event: {
      eventId: clientEventId ?? newEventId(),
      clientEventId: clientEventId !== null,
      clientDay: dayOf(clientTimestampMs ?? receivedAtMs),
      name,
      timestampMs: clientTimestampMs === null ? receivedAtMs : clampTimestamp(clientTimestampMs, receivedAtMs),
      clientTimestampMs,
      level,
      fingerprint,
      propertiesJson,
      tagsJson: tags.json,
      categoryTagsJson: categoryTags.json,
      developerUserId,
      anonymousId,
      serviceCustomerId,
      isError,
    },
    softDropped,
  };
}

/** Validates and normalises `events`; throws ApiError (400) on the first invalid event. */
export function validateEvents(body: Record<string, unknown>, receivedAtMs: number, newEventId: () => string): ValidatedBatch {
  const events = body.events;
  if (events === undefined || events === null) throw ApiError.missingParam('events is required');
  if (!Array.isArray(events)) fail('events', 'must be an array');
  if (events.length < 1 || events.length > MAX_EVENTS_PER_BATCH) {
    fail('events', `must contain 1 to ${MAX_EVENTS_PER_BATCH} events (got ${events.length})`);
  }
  const normalized: NormalizedEvent[] = new Array(events.length);
  let softDropped = 0;
  for (let i = 0; i < events.length; i++) {
    const outcome = normalizeEvent(events[i], i, receivedAtMs, newEventId);
    normalized[i] = outcome.event;
    softDropped += outcome.softDropped;
  }
  return { events: normalized, softDropped };
}
