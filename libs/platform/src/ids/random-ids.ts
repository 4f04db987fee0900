import { randomBytes } from 'node:crypto';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * `length` characters drawn uniformly from `alphabet` with a cryptographic source: bytes at or
 * above the largest multiple of the alphabet's size are rejected (no modulo bias).
 */
function randomFrom(alphabet: string, length: number): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length];
    }
  }
  return out;
}

/** [A-Za-z0-9]: customer, merge-review, project, app and key ids, API key secrets. */
export function randomBase62(length: number): string {
  return randomFrom(BASE62, length);
}

/** [a-z0-9]: audit event ids (the journal's format, e.g. `srv_grant_…`, `rail_evt_…`). */
export function randomLowerAlnum(length: number): string {
  return randomFrom(LOWER_ALNUM, length);
}
