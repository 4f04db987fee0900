import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { AppConfig } from '../config/app-config.js';
import { ApiError } from '../errors/api-error.js';
import { requestIdOf } from '../http/request-id.js';
import type { AppLogger } from '../logging/logger.js';

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** Constant-time comparison of two secrets of any length. */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/**
 * Guards every /admin path before routing: 404 when OPERATOR_TOKEN is unset, 401
 * invalid_operator_token otherwise unless the bearer token matches. Mutating calls are
 * recorded (who/what/when) with the request id.
 */
export function operatorAuthMiddleware(config: AppConfig, logger: AppLogger) {
  const expected = config.operatorToken;
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!(req.path === '/admin' || req.path.startsWith('/admin/'))) return next();
    if (!expected) return next(ApiError.resourceMissing(`No such resource: ${req.method} ${req.path}`));
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match || !secretsEqual(match[1], expected)) {
      logger.warn({ requestId: requestIdOf(req), method: req.method, path: req.path, reason: match ? 'wrong_token' : 'missing_token' }, 'operator auth rejected');
      return next(ApiError.authentication('invalid_operator_token', 'Missing or invalid operator token'));
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.on('finish', () => {
        logger.info({ requestId: requestIdOf(req), actor: 'operator', method: req.method, path: req.path, status: res.statusCode }, 'operator change');
      });
    }
    next();
  };
}
