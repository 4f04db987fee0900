import type { FastifyError, FastifyInstance } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { writeErrorResponse } from '../errors/error-response.js';
import { type AppLogger, logAccess } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { applyCors } from './cors.js';
import type { HttpRequest, HttpResponse } from './http-types.js';
import { assignRequestId, requestIdOf } from './request-id.js';

const HTTP_TIMER = Symbol('httpTimer');

type Timed = { [HTTP_TIMER]?: (labels: Record<string, string>) => void };

/**
 * What runs before routing for every request, answered or not, in this order: the metrics
 * timer, the request id, CORS (a preflight is answered here). The /v1 rewrite is the
 * server's `rewriteUrl` (withV1Prefix). Failures later reach the same exception filter as
 * the controllers'. Authentication and body parsing are not here: the route-policy guard
 * does both, once the route is known, so nothing is read for an unknown route or an
 * unauthenticated caller; that is why the only body parser leaves the body unread.
 */
export function configureHttpEdge(server: FastifyInstance, metrics: Metrics, logger: AppLogger): void {
  server.removeAllContentTypeParsers();
  server.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
  server.addHook('onRequest', (req, res, done) => {
    (res as unknown as Timed)[HTTP_TIMER] = metrics.startHttpTimer();
    assignRequestId(req, res);
    if (!applyCors(req, res)) done();
  });
  server.addHook('onResponse', (req, res, done) => {
    const end = (res as unknown as Timed)[HTTP_TIMER];
    if (end) metrics.observeHttp(end, req.routeOptions.url, req.method, res.statusCode);
    if (logger.isLevelEnabled('info')) logAccess(logger, req, res);
    done();
  });
}

/**
 * Fastify's `frameworkErrors`: what its router refuses before any hook runs (a malformed
 * percent-encoding in the path, for one) is answered with the envelope too.
 */
export function answerFrameworkError(error: FastifyError, req: HttpRequest, res: HttpResponse): void {
  const apiError =
    error.code === 'FST_ERR_BAD_URL' ? ApiError.invalidParam('Malformed percent-encoding in the request path') : ApiError.invalidParam('Malformed request');
  writeErrorResponse(res, apiError, requestIdOf(req, res));
}
