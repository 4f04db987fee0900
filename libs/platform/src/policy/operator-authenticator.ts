import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Clock } from '../clock/clock.js';
import { ApiError } from '../errors/api-error.js';
import { requestIdOf } from '../http/request-id.js';
import { type HttpRequest, type HttpResponse, pathOf } from '../http/http-types.js';
import { APP_LOGGER, type AppLogger } from '../logging/logger.js';
import { RateLimiterService } from '../rate-limit/rate-limiter.service.js';
import { OPERATOR_AUTH_FAILURES, assertAttemptAllowed, failureSubject, recordFailedAttempt } from '../rate-limit/failed-attempts.js';
import { ConsoleSessions } from './console-sessions.service.js';
import { checkOperatorToken } from './operator-token.js';

/**
 * The operator policy of a route (checkOperatorToken), with what needs state: an
 * `Authorization` header that fails is a guess of the operator token, counted per client
 * address (OPERATOR_AUTH_FAILURES; the address TRUST_PROXY names), and an address past the
 * limit is `429` for any token until its bucket refills; a console cookie whose session was
 * signed out is refused on every replica.
 */
@Injectable()
export class OperatorAuthenticator {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    private readonly clock: Clock,
    private readonly limiter: RateLimiterService,
    private readonly sessions: ConsoleSessions,
  ) {}

  async authenticate(req: HttpRequest, res: HttpResponse): Promise<void> {
    const expected = this.config.operatorToken;
    const guessing = expected !== undefined && req.headers.authorization !== undefined;
    const subject = guessing ? failureSubject(expected, req.ip) : '';
    if (guessing) await assertAttemptAllowed(this.limiter, OPERATOR_AUTH_FAILURES, subject);
    let session;
    try {
      session = checkOperatorToken(this.config, this.logger, req, res, this.clock.nowMs());
    } catch (err) {
      if (guessing && err instanceof ApiError && err.status === 401) await recordFailedAttempt(this.limiter, OPERATOR_AUTH_FAILURES, subject);
      throw err;
    }
    if (session && (await this.sessions.signedOut(session))) {
      this.logger.warn({ requestId: requestIdOf(req, res), method: req.method, path: pathOf(req), reason: 'signed_out' }, 'operator auth rejected');
      throw ApiError.authentication('invalid_operator_token', 'The console session has ended: sign in with the operator token');
    }
  }
}
