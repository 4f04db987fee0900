import { ApiError } from '#platform';
import type { Keyset } from './error-issues-console.repository.js';

/** An opaque cursor for a keyset: base64url of `[value, id]`. */
export function encodeKeyset(keyset: Keyset): string {
  return Buffer.from(JSON.stringify([keyset.value, keyset.id])).toString('base64url');
}

/** The keyset of a cursor this service handed out; anything else is 400 naming the parameter. */
export function decodeKeyset(raw: string | undefined, name: string): Keyset | null {
  if (raw === undefined || raw === '') return null;
  const invalid = () => ApiError.invalidParam(`${name} must be a cursor returned by the previous page (nextCursor)`);
  if (raw.length > 700 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw invalid();
  const [value, id] = parsed as unknown[];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || typeof id !== 'string' || id.length === 0 || id.length > 512) throw invalid();
  return { value, id };
}
