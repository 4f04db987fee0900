import { randomBase62 } from '#platform';

/** The prefix of every service customer id. */
export const CUSTOMER_ID_PREFIX = 'cdcust_';

export function newCustomerId(): string {
  return `${CUSTOMER_ID_PREFIX}${randomBase62(24)}`;
}

export function newMergeReviewId(): string {
  return `mrev_${randomBase62(24)}`;
}
