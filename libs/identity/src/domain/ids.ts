import { randomBytes } from 'node:crypto';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Uniform base62 (rejection sampling over random bytes). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export const CUSTOMER_ID_PREFIX = 'cdcust_';

export function newCustomerId(): string {
  return `${CUSTOMER_ID_PREFIX}${randomBase62(24)}`;
}

export function newMergeReviewId(): string {
  return `mrev_${randomBase62(24)}`;
}
