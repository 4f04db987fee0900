import { createHash, timingSafeEqual } from 'node:crypto';
import type { AppConfig } from '../config/app-config.js';
import { ApiError } from '../errors/api-error.js';
import { requestIdOf } from '../http/request-id.js';
import type { AppLogger } from '../logging/logger.js';
import { type HttpRequest, type HttpResponse, pathOf } from '../http/http-types.js';
import { CONSOLE_SESSION_COOKIE, CSRF_HEADER, type ConsoleSession, cookieValue, csrfTokenMatches, verifyConsoleSession } from './console-session.js';

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Constant-time comparison of two secrets of any length. */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The operator policy: 404 when OPERATOR_TOKEN is unset (the operator API does not exist);
 * otherwise the bearer token, or else the console's signed session cookie, whose changes
 * (any method but GET, HEAD, OPTIONS) also carry the session's X-CSRF-Token (else 403
 * csrf_token_invalid). Anything else is 401 invalid_operator_token. Changing calls are
 * recorded (who/what/when) with the request id. Answers the session when the cookie was
 * used (whether it was signed out is the caller's check: OperatorAuthenticator), null for the bearer token.
 */
export function checkOperatorToken(config: AppConfig, logger: AppLogger, req: HttpRequest, res: HttpResponse, nowMs: number): ConsoleSession | null {
  const expected = config.operatorToken;
  if (!expected) throw ApiError.resourceMissing(`No such resource: ${req.method} ${pathOf(req)}`);
  const authorization = req.headers.authorization;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  let actor = 'operator';
  let session: ConsoleSession | null = null;
  if (match && secretsEqual(match[1], expected)) {
    // The bearer token: no cookie, so no cross-site request can carry it; no CSRF header needed.
  } else {
    session = authorization ? null : verifyConsoleSession(expected, cookieValue(req.headers.cookie, CONSOLE_SESSION_COOKIE), nowMs);
    if (!session) {
      logger.warn(
        { requestId: requestIdOf(req, res), method: req.method, path: pathOf(req), reason: match ? 'wrong_token' : 'missing_token' },
        'operator auth rejected',
      );
      throw ApiError.authentication('invalid_operator_token', 'Missing or invalid operator token');
    }
    if (!SAFE_METHODS.has(req.method) && !csrfTokenMatches(expected, session, req.headers[CSRF_HEADER])) {
      logger.warn({ requestId: requestIdOf(req, res), method: req.method, path: pathOf(req), reason: 'csrf_token' }, 'operator auth rejected');
      throw ApiError.permission('csrf_token_invalid', 'A change made with the console session cookie needs its X-CSRF-Token header');
    }
    actor = 'operator_console';
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.raw.on('finish', () => {
      logger.info({ requestId: requestIdOf(req), actor, method: req.method, path: pathOf(req), status: res.statusCode }, 'operator change');
    });
  }
  return session;
}
