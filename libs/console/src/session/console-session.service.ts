import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  APP_CONFIG,
  type AppConfig,
  ApiError,
  type BucketRule,
  CONSOLE_SESSION_COOKIE,
  Clock,
  RateLimiterService,
  consoleSessionSetCookie,
  cookieValue,
  csrfTokenOf,
  issueConsoleSession,
  secretsEqual,
  verifyConsoleSession,
} from '#platform';
import type { ConsoleSessionView } from './console-session.dto.js';

/** Five failed sign-ins per minute per client address; the sixth and later are 429 until the bucket refills. */
export const SIGN_IN_FAILURES: BucketRule = { sustained: 5 / 60, burst: 5 };
const SIGN_IN_BUCKET = 'console_sign_in';

/** The console's session: sign-in with the operator token, a signed cookie (no server state), sign-out. */
@Injectable()
export class ConsoleSessionService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly limiter: RateLimiterService,
  ) {}

  /** 404 when the operator API is off; the token otherwise. */
  private operatorToken(): string {
    const token = this.config.operatorToken;
    if (!token) throw ApiError.resourceMissing('No such resource: /console/api/session');
    return token;
  }

  /** Checks the token and answers the `Set-Cookie` of a new session. */
  async signIn(token: string, address: string): Promise<string> {
    const expected = this.operatorToken();
    // Only failures are counted: look at the address's bucket first (cost 0), charge it on a failure.
    // Per deployment (a digest of its token: installs sharing one Redis keep apart) and address.
    const subject = `${createHash('sha256').update(expected).digest('hex').slice(0, 16)}:${address}`;
    const before = await this.limiter.takeFor(subject, SIGN_IN_BUCKET, SIGN_IN_FAILURES, 0);
    if (!before.failedOpen && before.tokensLeft < 1)
      throw ApiError.rateLimited(Math.max(1000, ((1 - before.tokensLeft) / SIGN_IN_FAILURES.sustained) * 1000), 0);
    if (!secretsEqual(token, expected)) {
      await this.limiter.takeFor(subject, SIGN_IN_BUCKET, SIGN_IN_FAILURES, 1);
      throw ApiError.authentication('invalid_operator_token', 'Missing or invalid operator token');
    }
    const { cookieValue: value } = issueConsoleSession(expected, this.clock.nowMs());
    return consoleSessionSetCookie(value, this.secureCookies());
  }

  /** The session the request's cookie carries, or 401. */
  current(cookieHeader: string | undefined): ConsoleSessionView {
    const expected = this.operatorToken();
    const session = verifyConsoleSession(expected, cookieValue(cookieHeader, CONSOLE_SESSION_COOKIE), this.clock.nowMs());
    if (!session) throw ApiError.authentication('invalid_operator_token', 'No console session: sign in with the operator token');
    return { object: 'console_session', expiresAt: session.expiresAtMs, csrfToken: csrfTokenOf(expected, session) };
  }

  /** The `Set-Cookie` that clears the session cookie. */
  signOut(): string {
    this.operatorToken();
    return consoleSessionSetCookie(null, this.secureCookies());
  }

  private secureCookies(): boolean {
    return this.config.nodeEnv === 'production';
  }
}
