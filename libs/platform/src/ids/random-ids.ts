import { randomBytes } from 'node:crypto';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const LOWER_ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Cryptographic random bytes for ids that are not secrets, drawn from a pool refilled 4 KiB at
 * a time (each byte is used once): one `randomBytes` call per id cost more than the rest of
 * its making. Secrets never come from the pool (its future output would sit in memory).
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function pooledBytes(count: number): Buffer {
  if (poolOffset + count > pool.length) {
    pool = randomBytes(Math.max(POOL_BYTES, count));
    poolOffset = 0;
  }
  poolOffset += count;
  return pool.subarray(poolOffset - count, poolOffset);
}

/**
 * `length` characters drawn uniformly from `alphabet` with a cryptographic source: bytes at or
 * above the largest multiple of the alphabet's size are rejected (no modulo bias).
 */
function randomFrom(alphabet: string, length: number, bytes: (count: number) => Buffer): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of bytes(length * 2)) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length];
    }
  }
  return out;
}

/** [A-Za-z0-9]: customer, merge-review, project, app and key ids, API key secrets (fresh bytes each call). */
export function randomBase62(length: number): string {
  return randomFrom(BASE62, length, randomBytes);
}

/** [a-z0-9]: audit event, webhook event and endpoint ids (the journal's format, e.g. `srv_grant_…`, `rail_evt_…`); pooled bytes. */
export function randomLowerAlnum(length: number): string {
  return randomFrom(LOWER_ALNUM, length, pooledBytes);
}
