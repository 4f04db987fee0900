import { Inject, Injectable } from '@nestjs/common';
import {
  APP_CONFIG,
  type AppConfig,
  ApiError,
  CONSOLE_SIGN_IN_FAILURES,
  Clock,
  ConsoleSessions,
  RateLimiterService,
  assertAttemptAllowed,
  consoleSessionSetCookie,
  csrfTokenMatches,
  csrfTokenOf,
  failureSubject,
  issueConsoleSession,
  recordFailedAttempt,
  secretsEqual,
} from '#platform';
import type { ConsoleSessionView } from './console-session.dto.js';

/**
 * The console's session: sign-in with the operator token (failures limited per client
 * address), a signed cookie, and sign-out, which ends the session on every replica.
 */
@Injectable()
export class ConsoleSessionService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly limiter: RateLimiterService,
    private readonly sessions: ConsoleSessions,
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
    const subject = failureSubject(expected, address);
    await assertAttemptAllowed(this.limiter, CONSOLE_SIGN_IN_FAILURES, subject);
    if (!secretsEqual(token, expected)) {
      await recordFailedAttempt(this.limiter, CONSOLE_SIGN_IN_FAILURES, subject);
      throw ApiError.authentication('invalid_operator_token', 'Missing or invalid operator token');
    }
    const { cookieValue: value } = issueConsoleSession(expected, this.clock.nowMs());
    return consoleSessionSetCookie(value, this.secureCookies());
  }

  /** The session the request's cookie carries, or 401 (none, expired or signed out). */
  async current(cookieHeader: string | undefined): Promise<ConsoleSessionView> {
    const expected = this.operatorToken();
    const session = await this.sessions.live(cookieHeader);
    if (!session) throw ApiError.authentication('invalid_operator_token', 'No console session: sign in with the operator token');
    return { object: 'console_session', expiresAt: session.expiresAtMs, csrfToken: csrfTokenOf(expected, session) };
  }

  /**
   * Ends the cookie's session on every replica (it carries the session's X-CSRF-Token, like
   * every console change) and answers the `Set-Cookie` that clears it. Without a live session
   * there is nothing to end: the cookie is cleared.
   */
  async signOut(cookieHeader: string | undefined, csrfHeader: string | string[] | undefined): Promise<string> {
    const expected = this.operatorToken();
    const session = await this.sessions.live(cookieHeader);
    if (session) {
      if (!csrfTokenMatches(expected, session, csrfHeader)) {
        throw ApiError.permission('csrf_token_invalid', 'Signing out with the console session cookie needs its X-CSRF-Token header');
      }
      await this.sessions.end(session);
    }
    return consoleSessionSetCookie(null, this.secureCookies());
  }

  private secureCookies(): boolean {
    return this.config.nodeEnv === 'production';
  }
}
