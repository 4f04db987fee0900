import { randomBytes } from 'node:crypto';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Cryptographic random bytes, drawn from a pool refilled 4 KiB at a time (each byte is used
 * once): one `randomBytes` call per id cost more than the rest of an id's making.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function randomByte(): number {
  if (poolOffset >= pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  return pool[poolOffset++];
}

/**
 * `length` characters drawn uniformly from `alphabet` with a cryptographic source: bytes at or
 * above the largest multiple of the alphabet's size are rejected (no modulo bias).
 */
function randomFrom(alphabet: string, length: number): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < limit) out += alphabet[byte % alphabet.length];
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
