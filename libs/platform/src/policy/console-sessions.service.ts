import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Clock } from '../clock/clock.js';
import { CONSOLE_SESSION_COOKIE, type ConsoleSession, cookieValue, verifyConsoleSession } from './console-session.js';
import { ConsoleSessionRevocationsRepository } from './console-session-revocations.repository.js';

/**
 * The console's sessions: a signed cookie any replica verifies, plus the server-side list of
 * sessions ended by sign-out (PostgreSQL, so a sign-out holds on every replica at once). A
 * session is live when its signature holds, it has not expired and it is not on that list.
 */
@Injectable()
export class ConsoleSessions {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly revocations: ConsoleSessionRevocationsRepository,
  ) {}

  /** The live session a Cookie header carries, or null (no operator token, no cookie, bad signature, expired, signed out). */
  async live(cookieHeader: string | undefined): Promise<ConsoleSession | null> {
    const token = this.config.operatorToken;
    if (!token) return null;
    const session = verifyConsoleSession(token, cookieValue(cookieHeader, CONSOLE_SESSION_COOKIE), this.clock.nowMs());
    if (!session) return null;
    return (await this.signedOut(session)) ? null : session;
  }

  /** True when the session was ended by sign-out (one primary-key read). */
  signedOut(session: ConsoleSession): Promise<boolean> {
    return this.revocations.isRevoked(session.sessionId);
  }

  /** Ends the session on every replica, until its cookie would have expired. */
  async end(session: ConsoleSession): Promise<void> {
    const now = this.clock.now();
    await this.revocations.deleteExpired(now);
    await this.revocations.revoke(session.sessionId, new Date(session.expiresAtMs), now);
  }
}
