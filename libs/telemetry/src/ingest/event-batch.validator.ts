import { ApiError, type SdkIdentity, charLength, isStorableJson, isStorableText, serializeJson, stringifyParsedJson, utf8BytesOver } from '#platform';
import type { EventRow } from '../storage/event-insert.sql.js';

/**
 * The request rules of POST /v1/events as one pure, hand-written pass over the body (the hot
 * path: no class-validator, no per-event allocation beyond the normalised record).
 *
 * All-or-nothing: the first invalid event throws `400 invalid_param_value` naming its index
 * and field (`events[7].name: ...`). `level`, `tags`, `categoryTags` and `context` are never rejected:
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
/** Event `context` (appVersion, os, browser, sdkName, sdkVersion, locale, ...): string values only. */
export const MAX_CONTEXT_ENTRIES = 32;
export const MAX_CONTEXT_KEY_CHARS = 64;
export const MAX_CONTEXT_VALUE_CHARS = 256;
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

export function dayOf(ms: number): number {
  const day = Math.floor(ms / DAY_MS);
  return day < 0 ? 0 : day > MAX_CLIENT_DAY ? MAX_CLIENT_DAY : day;
}

/** `timestamp` clamped to the receive time when it is more than 24 h away from it. */
export function clampTimestamp(clientMs: number, receivedAtMs: number): number {
  return Math.abs(clientMs - receivedAtMs) > MAX_CLOCK_SKEW_MS ? receivedAtMs : clientMs;
}

/** The platform's generic storable-text and JSON checks, re-exported for the ingestion tests and benches. */
export { charLength, isStorableJson, isStorableText, serializeJson, stringifyParsedJson, utf8BytesOver };

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

function validContextEntry(key: string, value: unknown): value is string {
  return (
    typeof value === 'string' &&
    charLength(value, MAX_CONTEXT_VALUE_CHARS) <= MAX_CONTEXT_VALUE_CHARS &&
    key.length > 0 &&
    charLength(key, MAX_CONTEXT_KEY_CHARS) <= MAX_CONTEXT_KEY_CHARS &&
    isStorableText(key) &&
    isStorableText(value)
  );
}

/** The common case, cheaply: short string values and keys (UTF-16 lengths already within the bounds). */
function plainContext(value: Record<string, unknown>, keys: string[]): boolean {
  if (keys.length > MAX_CONTEXT_ENTRIES) return false;
  for (const key of keys) {
    const entry = value[key];
    if (typeof entry !== 'string' || entry.length > MAX_CONTEXT_VALUE_CHARS || key.length === 0 || key.length > MAX_CONTEXT_KEY_CHARS) return false;
  }
  return true;
}

/**
 * context: kept only when an object; entries whose value is not a string of at most 256
 * characters, or whose key is empty or longer than 64 characters, are dropped one by one;
 * of the rest, the first 32 are kept. Never rejected (like tags). On the hot path: one pass
 * over the entries, one JSON.stringify, and the NUL / lone-surrogate check on its escapes.
 */
export function sanitizeContext(value: unknown): { json: string | null; dropped: number } {
  if (value === undefined || value === null) return { json: null, dropped: 0 };
  if (!isPlainObject(value)) return { json: null, dropped: 1 };
  const keys = Object.keys(value);
  if (keys.length === 0) return { json: null, dropped: 0 };
  if (plainContext(value, keys)) {
    const json = JSON.stringify(value);
    if (isStorableJson(json)) return { json, dropped: 0 };
  }
  const kept: Record<string, string> = Object.create(null);
  let keptCount = 0;
  let dropped = 0;
  for (const key of keys) {
    const entry = value[key];
    if (keptCount >= MAX_CONTEXT_ENTRIES || !validContextEntry(key, entry)) {
      dropped++;
      continue;
    }
    kept[key] = entry;
    keptCount++;
  }
  return { json: keptCount > 0 ? JSON.stringify(kept) : null, dropped };
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
  // `crossdeckCustomerId` is the public clients' name for the same id; `serviceCustomerId` wins when both are sent.
  const serviceCustomerId =
    optionalString(raw, 'serviceCustomerId', index, MAX_SERVICE_CUSTOMER_ID_CHARS) ??
    optionalString(raw, 'crossdeckCustomerId', index, MAX_SERVICE_CUSTOMER_ID_CHARS);
  if (developerUserId === null && anonymousId === null && serviceCustomerId === null) {
    fail(`events[${index}]`, 'at least one identity hint is required (developerUserId, anonymousId or serviceCustomerId / crossdeckCustomerId)');
  }

  let softDropped = 0;
  let level: EventLevel | null = null;
  // The public web client sends an error's level in `properties.level`; the top-level field wins.
  const levelValue = raw.level ?? (name.startsWith('error.') && isPlainObject(properties) ? properties.level : undefined);
  if (levelValue !== undefined && levelValue !== null) {
    if (isEventLevel(levelValue)) level = levelValue;
    else softDropped++;
  }
  const tags = sanitizeTags(raw.tags);
  const categoryTags = sanitizeCategoryTags(raw.categoryTags);
  const context = sanitizeContext(raw.context);
  softDropped += tags.dropped + categoryTags.dropped + context.dropped;

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
      contextJson: context.json,
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
