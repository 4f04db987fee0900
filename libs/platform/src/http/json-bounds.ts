import { ApiError } from '../errors/api-error.js';

/**
 * Shape bounds of a parsed JSON body, checked before validation runs: class-transformer and
 * class-validator walk a body recursively, so a 32 KB body nested 16,000 levels deep (in a
 * field nobody declared) overflows their stack. The walk here is iterative (an explicit
 * stack, no recursion) and stops at the first bound passed, so its cost is bounded by the
 * bounds themselves, not by the body.
 */
export interface JsonBounds {
  /** Levels of objects and arrays; the body object itself is level 1. */
  maxDepth: number;
  /** Object keys counted over the whole body (array elements are not keys). */
  maxKeys: number;
}

/**
 * Defaults for every JSON body that goes through validation. The deepest declared body is
 * an inline JWKS (`{jwks:{keys:[{x5c:[...]}]}}`, 5 levels); the largest key count is a
 * product catalogue of 1,000 products of 3 fields. See docs/decisions/body-limits-and-bounds.md.
 */
export const DEFAULT_JSON_BOUNDS: JsonBounds = { maxDepth: 32, maxKeys: 10_000 };

export type JsonBoundsViolation = { bound: 'depth'; limit: number } | { bound: 'keys'; limit: number };

/** The first bound `value` passes, or null when it stays within both. Pure; never recurses. */
export function findJsonBoundsViolation(value: unknown, bounds: JsonBounds = DEFAULT_JSON_BOUNDS): JsonBoundsViolation | null {
  if (typeof value !== 'object' || value === null) return null;
  // Parallel stacks of containers still to visit and their depths (the root is depth 1).
  const pending: object[] = [value];
  const depths: number[] = [1];
  let keys = 0;
  while (pending.length > 0) {
    const container = pending.pop()!;
    const depth = depths.pop()!;
    if (depth > bounds.maxDepth) return { bound: 'depth', limit: bounds.maxDepth };
    if (Array.isArray(container)) {
      for (const item of container) {
        if (typeof item === 'object' && item !== null) {
          pending.push(item);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const key in container) {
      if (!Object.prototype.hasOwnProperty.call(container, key)) continue;
      if (++keys > bounds.maxKeys) return { bound: 'keys', limit: bounds.maxKeys };
      const item = (container as Record<string, unknown>)[key];
      if (typeof item === 'object' && item !== null) {
        pending.push(item);
        depths.push(depth + 1);
      }
    }
  }
  return null;
}

/** Throws `400 invalid_param_value` naming the bound when `value` passes one. */
export function assertJsonBounds(value: unknown, bounds: JsonBounds = DEFAULT_JSON_BOUNDS): void {
  const violation = findJsonBoundsViolation(value, bounds);
  if (violation === null) return;
  if (violation.bound === 'depth') {
    throw ApiError.invalidParam(`Request body is nested too deeply: at most ${violation.limit} levels of objects and arrays`);
  }
  throw ApiError.invalidParam(`Request body has too many keys: at most ${violation.limit} object keys in total`);
}
