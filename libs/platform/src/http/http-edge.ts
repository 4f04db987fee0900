import type { ServerOptions } from 'node:http';
import { NotFoundException } from '@nestjs/common';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host.js';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyInstance, FastifyServerOptions } from 'fastify';
import type { AppConfig, TrustProxy } from '../config/app-config.js';
import { AllExceptionsFilter } from '../errors/all-exceptions.filter.js';
import { ApiError } from '../errors/api-error.js';
import { type AppLogger, logAccess } from '../logging/logger.js';
import type { Metrics } from '../metrics/metrics.js';
import { allowOrigin, applyCors } from './cors.js';
import type { RoutePolicyHooks } from '../policy/route-policy.hooks.js';
import type { OperatorAuthenticator } from '../policy/operator-authenticator.js';
import { answerClientError } from './http-server.js';
import { type HttpRequest, type HttpResponse, parseQueryString, pathOf, setResponseHeader } from './http-types.js';
import { assignRequestId } from './request-id.js';
import { withV1Prefix } from './v1-prefix.js';

const HTTP_TIMER = Symbol('httpTimer');

type Timed = { [HTTP_TIMER]?: number };

/** Route parameters are bounded by the 16 KB header limit, not by the router (Fastify's default is 100 characters). */
const MAX_PARAM_LENGTH = 16 * 1024;

/** The media-type rule Fastify applies before any parser (type/subtype tokens; parameters are not checked). */
const MEDIA_TYPE_TOKEN = /^[\w!#$%&'*+.^`|~-]+$/;

/**
 * The HTTP edge: what runs for every request before (and regardless of) routing, and the
 * server options that keep Express's behaviour where clients could tell the difference.
 * - Before routing, in this order: the metrics timer, the request id, CORS (a preflight is
 *   answered here). After the response: the metric and the access line.
 * - The /v1 rewrite is the server's `rewriteUrl` (withV1Prefix).
 * - Authentication and body parsing are not here: the route-policy guard does both, once the
 *   route is known, so nothing is read for an unknown route or an unauthenticated caller;
 *   that is why the only content-type parser leaves the body unread.
 * - What the router refuses before any hook runs (a malformed percent-encoding) goes through
 *   the same steps and the same exception filter as every other request.
 */
export class HttpEdge {
  private metrics?: Metrics;
  private logger?: AppLogger;
  private filter?: AllExceptionsFilter;
  private server?: FastifyInstance;

  /**
   * Options of the Fastify server, given to the adapter before the application exists.
   * `trustProxy` (TRUST_PROXY) decides whether `req.ip` comes from X-Forwarded-For: only the
   * proxies the deployment names may name the client (the rate limits key on it).
   */
  serverOptions(config: Pick<AppConfig, 'trustProxy'>): FastifyServerOptions {
    const options: FastifyServerOptions & { http: ServerOptions } = {
      trustProxy: fastifyTrustProxy(config.trustProxy),
      rewriteUrl: withV1Prefix,
      clientErrorHandler: answerClientError,
      // Node would answer a request without Host with a bare 400; the edge answers it (beforeRouting).
      http: { requireHostHeader: false },
      frameworkErrors: (error, req, res) => this.answerFrameworkError(error, req, res),
      // Requests on kept-alive connections during the shutdown's drain are served (main.ts), not refused.
      return503OnClosing: false,
      routerOptions: { ignoreTrailingSlash: true, caseSensitive: false, maxParamLength: MAX_PARAM_LENGTH, querystringParser: parseQueryString },
    };
    return options;
  }

  /** Installs the parser and hooks once the application exists. */
  attach(
    server: FastifyInstance,
    metrics: Metrics,
    logger: AppLogger,
    config: AppConfig,
    hooks?: RoutePolicyHooks,
    operatorAuth?: OperatorAuthenticator,
  ): void {
    this.server = server;
    this.metrics = metrics;
    this.logger = logger;
    // With the authenticator, a malformed path under /admin counts a wrong bearer token like any other.
    this.filter = new AllExceptionsFilter(logger, config, undefined, operatorAuth);
    server.removeAllContentTypeParsers();
    server.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    server.addHook('onRequest', (req, res, done) => {
      if (this.beforeRouting(req, res)) return;
      // An unknown route's error is readable by a browser whose origin the presented key's app allows.
      if (req.is404 && hooks && typeof req.headers.origin === 'string') {
        void hooks.unknownRouteOriginAllowed(req).then((allowed) => {
          if (allowed) allowOrigin(req, res);
          done();
        });
        return;
      }
      done();
    });
    server.addHook('onResponse', (req, res, done) => {
      this.afterResponse(req, res);
      done();
    });
  }

  /** True when it answered the request (a preflight, or an HTTP/1.1 request without Host). */
  private beforeRouting(req: HttpRequest, res: HttpResponse): boolean {
    (res as unknown as Timed)[HTTP_TIMER] = this.metrics!.startHttpTimer();
    assignRequestId(req, res);
    if (req.raw.headers.host === undefined && req.raw.httpVersionMajor === 1 && req.raw.httpVersionMinor >= 1) {
      // RFC 9112 §3.2: a server answers 400 to an HTTP/1.1 request without Host.
      this.filter!.catch(
        new ApiError(400, 'invalid_request_error', 'invalid_param_value', 'The Host header is required in HTTP/1.1', undefined, { Connection: 'close' }),
        new ExecutionContextHost([req, res]),
      );
      return true;
    }
    dropMalformedContentType(req);
    return applyCors(req, res);
  }

  private afterResponse(req: HttpRequest, res: HttpResponse): void {
    const startedAt = (res as unknown as Timed)[HTTP_TIMER];
    if (startedAt !== undefined) this.metrics!.observeHttp(startedAt, req.routeOptions?.url, req.method, res.statusCode);
    if (this.logger!.isLevelEnabled('info')) logAccess(this.logger!, req, res);
  }

  /**
   * Fastify's `frameworkErrors`. A path whose percent-encoding does not decode is refused by
   * the router before any hook: it answers as Express did, a preflight with 204, an unknown
   * route as unknown, a known route with `400 invalid_param_value`.
   */
  private answerFrameworkError(error: FastifyError, req: HttpRequest, res: HttpResponse): void {
    res.raw.once('finish', () => this.afterResponse(req, res));
    if (this.beforeRouting(req, res)) return;
    const exception =
      error.code !== 'FST_ERR_BAD_URL'
        ? ApiError.invalidParam('Malformed request')
        : this.routeExists(req)
          ? ApiError.invalidParam('Malformed percent-encoding in the request path')
          : new NotFoundException();
    this.filter!.catch(exception, new ExecutionContextHost([req, res]));
  }

  private routeExists(req: HttpRequest): boolean {
    const path = pathOf(req).replace(/%[0-9A-Fa-f]{2}|%/g, '_');
    return this.server!.findRoute({ method: req.method as 'GET', url: path }) !== null;
  }
}

/**
 * TRUST_PROXY as Fastify takes it. A hop count trusts that many proxies nearest the service
 * (Fastify itself now trusts none for a bare number): right only when nothing reaches the
 * service but through them; addresses or CIDR ranges of the proxies are safer.
 */
export function fastifyTrustProxy(value: TrustProxy): boolean | string[] | ((address: string, hop: number) => boolean) {
  if (typeof value !== 'number') return value;
  return (_address, hop) => hop < value;
}

/**
 * A Content-Type header that is not a media type (`garbage`) is dropped before Fastify checks
 * it, so the request goes on as one without a type, as it did under Express: the body reader
 * never matched such a header either.
 */
function dropMalformedContentType(req: HttpRequest): void {
  const header = req.raw.headers['content-type'];
  if (header === undefined || header === '') return;
  const mediaType = header.split(';', 1)[0];
  const slash = mediaType.indexOf('/');
  const wellFormed = slash > 0 && MEDIA_TYPE_TOKEN.test(mediaType.slice(0, slash).trimStart()) && MEDIA_TYPE_TOKEN.test(mediaType.slice(slash + 1).trimEnd());
  if (!wellFormed) delete req.raw.headers['content-type'];
}

/** The Fastify handler of a route served without Nest's per-request pipeline (policy/fast-path.ts). */
export type FastRouteHandler = (request: HttpRequest, reply: HttpResponse) => Promise<unknown>;

/**
 * Nest's Fastify adapter, writing the headers handlers declare (`@Header`) with their names as
 * written, and registering a fast path's handler in place of Nest's for the GET routes given
 * to `serveFast` (before `app.init()`, which registers the routes). Fastify's hooks, the HEAD
 * route it derives, Nest's empty-parameter check and the tracing plugin's wrapper all apply to
 * it as they would to Nest's handler, whose name it takes.
 */
export class ServiceHttpAdapter extends FastifyAdapter {
  private readonly fastRoutes = new Map<string, FastRouteHandler>();
  private readonly servedFast: string[] = [];

  override setHeader(response: HttpResponse, name: string, value: string): void {
    setResponseHeader(response, name, value);
  }

  serveFast(path: string, handler: FastRouteHandler): void {
    this.fastRoutes.set(path, handler);
  }

  /** The GET paths whose route was registered with a fast path's handler. */
  fastPaths(): readonly string[] {
    return this.servedFast;
  }

  override get(...args: Parameters<FastifyAdapter['get']>): ReturnType<FastifyAdapter['get']> {
    const path: unknown = args[0];
    const fast = args.length === 2 && typeof path === 'string' ? this.fastRoutes.get(path) : undefined;
    if (!fast) return super.get(...args);
    Object.defineProperty(fast, 'name', { configurable: true, value: (args[1] as { name: string }).name });
    this.servedFast.push(path as string);
    return super.get(path, fast);
  }
}
