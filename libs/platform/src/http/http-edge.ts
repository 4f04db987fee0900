import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AppConfig } from '../config/app-config.js';
import { type AppLogger, accessLogMiddleware } from '../logging/logger.js';
import { corsMiddleware } from './cors.js';
import { requestIdMiddleware } from './request-id.js';
import { v1PrefixMiddleware } from './v1-prefix.js';

/**
 * Express-level middleware that must run before routing, in this order. Failures here
 * reach the same exception filter as the controllers' (Nest's router error handler).
 * Authentication and body parsing are not here: the route-policy guard does both, once the
 * route is known, so nothing is read for an unknown route or an unauthenticated caller.
 */
export function configureHttpEdge(app: NestExpressApplication, config: AppConfig, logger: AppLogger): void {
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestIdMiddleware);
  app.use(accessLogMiddleware(logger));
  app.use(corsMiddleware);
  app.use(v1PrefixMiddleware);
}
