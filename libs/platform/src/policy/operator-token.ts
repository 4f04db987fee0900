import { createHash, timingSafeEqual } from 'node:crypto';
import type { AppConfig } from '../config/app-config.js';
import { ApiError } from '../errors/api-error.js';
import { requestIdOf } from '../http/request-id.js';
import type { AppLogger } from '../logging/logger.js';
import { type HttpRequest, type HttpResponse, pathOf } from '../http/http-types.js';

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Constant-time comparison of two secrets of any length. */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/**
 * The operator policy: 404 when OPERATOR_TOKEN is unset (the operator API does not exist),
 * 401 invalid_operator_token unless the bearer token matches. Changing calls are recorded
 * (who/what/when) with the request id.
 */
export function checkOperatorToken(config: AppConfig, logger: AppLogger, req: HttpRequest, res: HttpResponse): void {
  const expected = config.operatorToken;
  if (!expected) throw ApiError.resourceMissing(`No such resource: ${req.method} ${pathOf(req)}`);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (!match || !secretsEqual(match[1], expected)) {
    logger.warn(
      { requestId: requestIdOf(req, res), method: req.method, path: pathOf(req), reason: match ? 'wrong_token' : 'missing_token' },
      'operator auth rejected',
    );
    throw ApiError.authentication('invalid_operator_token', 'Missing or invalid operator token');
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.raw.on('finish', () => {
      logger.info({ requestId: requestIdOf(req), actor: 'operator', method: req.method, path: pathOf(req), status: res.statusCode }, 'operator change');
    });
  }
}
