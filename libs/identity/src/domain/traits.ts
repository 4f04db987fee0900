/**
 * Trait rules (spec "Customer and identity"): at most 32 keys; values are strings of at most
 * 1,024 chars, finite numbers, booleans or null. Anything else is dropped, never rejected.
 *
 * Choices where the spec is silent:
 * - A string longer than 1,024 chars is dropped (not truncated): a cut value is a different value.
 * - Keys are kept in the order the client sent them; the first 32 valid keys win.
 * - Keys must be 1 to 128 chars; `__proto__`, `constructor` and `prototype` are dropped.
 * - A key or string value PostgreSQL cannot store in jsonb (U+0000, an unpaired UTF-16
 *   surrogate) is refused by the validation layer before these rules run (400 naming it,
 *   like every other field); sanitizeTraits still drops one, should it get that far.
 * - Merging is additive per key (a later value replaces an earlier one, null is stored as
 *   null); a new key is added only while the stored map holds fewer than 32 keys.
 */
import { isStorableText } from '#platform';

export const MAX_TRAIT_KEYS = 32;
export const MAX_TRAIT_STRING = 1024;
export const MAX_TRAIT_KEY_LENGTH = 128;
/**
 * The body limit of identify: the largest body the rules accept (32 keys of 128 and values
 * of 1,024 UTF-16 units, plus ids, email and idToken) even when a client writes every
 * character as a \uXXXX escape (about 240 KB), with room for the traits that are dropped.
 */
export const IDENTIFY_BODY_LIMIT_BYTES = 512 * 1024;

export type TraitValue = string | number | boolean | null;
export type Traits = Record<string, TraitValue>;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function isTraitValue(value: unknown): value is TraitValue {
  if (value === null || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value === 'string') return value.length <= MAX_TRAIT_STRING && isStorableText(value);
  return false;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keeps the valid entries of `input` (at most 32); a non-object gives `{}`. */
export function sanitizeTraits(input: unknown): Traits {
  const out: Traits = {};
  if (!isPlainObject(input)) return out;
  let count = 0;
  for (const key of Object.keys(input)) {
    if (count >= MAX_TRAIT_KEYS) break;
    if (key.length === 0 || key.length > MAX_TRAIT_KEY_LENGTH || FORBIDDEN_KEYS.has(key) || !isStorableText(key)) continue;
    const value = input[key];
    if (!isTraitValue(value)) continue;
    out[key] = value;
    count += 1;
  }
  return out;
}

/** Additive merge per key, never growing the stored map beyond 32 keys. */
export function mergeTraits(stored: Traits, incoming: Traits): Traits {
  const merged: Traits = { ...stored };
  let size = Object.keys(merged).length;
  for (const [key, value] of Object.entries(incoming)) {
    if (Object.prototype.hasOwnProperty.call(merged, key)) {
      merged[key] = value;
    } else if (size < MAX_TRAIT_KEYS) {
      merged[key] = value;
      size += 1;
    }
  }
  return merged;
}
