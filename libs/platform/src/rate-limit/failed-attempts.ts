import { createHash } from 'node:crypto';
import { ApiError } from '../errors/api-error.js';
import type { RateLimiterService } from './rate-limiter.service.js';
import type { BucketRule } from './token-bucket.js';

/** A limit on failed attempts at one secret (the operator token), per client address. */
export interface FailedAttemptLimit {
  /** The bucket's name (and its metric label). */
  bucket: string;
  rule: BucketRule;
}

/** Five failed console sign-ins per minute per client address. */
export const CONSOLE_SIGN_IN_FAILURES: FailedAttemptLimit = { bucket: 'console_sign_in', rule: { sustained: 5 / 60, burst: 5 } };
/** Ten failed operator bearer authentications per minute per client address. */
export const OPERATOR_AUTH_FAILURES: FailedAttemptLimit = { bucket: 'operator_auth_failures', rule: { sustained: 10 / 60, burst: 10 } };

/**
 * The subject of a failure bucket: the deployment (a digest of its operator token, so installs
 * sharing one Redis keep apart) and the client address (`req.ip`, which TRUST_PROXY decides).
 */
export function failureSubject(operatorToken: string, address: string): string {
  return `${createHash('sha256').update(operatorToken).digest('hex').slice(0, 16)}:${address}`;
}

/** How long until a bucket holding `tokensLeft` has one whole token again (at least a second). */
export function msUntilNextAttempt(tokensLeft: number, rule: BucketRule): number {
  return Math.max(1000, Math.ceil(((1 - tokensLeft) / rule.sustained) * 1000));
}

/**
 * Only failures are counted: the subject's bucket is looked at first (cost 0) and an empty one
 * is `429 rate_limited` with Retry-After, whatever the attempt; a failure then charges it
 * (`recordFailedAttempt`). The buckets live where every limit does (Redis with REDIS_URL, so
 * they hold across replicas); on a storage failure the attempt goes through (fail open).
 */
export async function assertAttemptAllowed(limiter: RateLimiterService, limit: FailedAttemptLimit, subject: string): Promise<void> {
  const before = await limiter.takeFor(subject, limit.bucket, limit.rule, 0);
  if (!before.failedOpen && before.tokensLeft < 1) {
    throw ApiError.rateLimited(msUntilNextAttempt(before.tokensLeft, limit.rule), 0, 'Too many failed authentications from this address; retry later');
  }
}

export async function recordFailedAttempt(limiter: RateLimiterService, limit: FailedAttemptLimit, subject: string): Promise<void> {
  await limiter.takeFor(subject, limit.bucket, limit.rule, 1);
}
