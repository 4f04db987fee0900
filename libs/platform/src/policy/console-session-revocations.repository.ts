import { Injectable } from '@nestjs/common';
import { Sql, prepared } from '../database/sql.js';

const IS_REVOKED = prepared(`SELECT 1 AS revoked FROM console_session_revocations WHERE session_id = $1`);

/** Console sessions ended by sign-out (operator-level data, above the tenants: keyed by session id). */
@Injectable()
export class ConsoleSessionRevocationsRepository {
  constructor(private readonly sql: Sql) {}

  async isRevoked(sessionId: string): Promise<boolean> {
    return (await this.sql.one(IS_REVOKED, [sessionId])) !== null;
  }

  async revoke(sessionId: string, expiresAt: Date, at: Date): Promise<void> {
    await this.sql.run(`INSERT INTO console_session_revocations (session_id, expires_at, revoked_at) VALUES ($1, $2, $3) ON CONFLICT (session_id) DO NOTHING`, [
      sessionId,
      expiresAt,
      at,
    ]);
  }

  /** Rows whose cookie has expired anyway: nothing to refuse any more. */
  async deleteExpired(now: Date): Promise<void> {
    await this.sql.run(`DELETE FROM console_session_revocations WHERE expires_at <= $1`, [now]);
  }
}
