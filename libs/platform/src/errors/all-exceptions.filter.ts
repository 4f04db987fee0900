import { performance } from 'node:perf_hooks';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Inject, Optional } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { ApiError } from './api-error.js';
import { isDatabaseUnreachable } from './database-unreachable.js';
import { writeErrorResponse } from './error-response.js';
import { APP_LOGGER, type AppLogger } from '../logging/logger.js';
import { requestIdOf } from '../http/request-id.js';
import { formatBodyLimit } from '../http/body-parsing.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { checkOperatorToken } from '../policy/operator-token.js';
import { Clock } from '../clock/clock.js';
import { OperatorAuthenticator } from '../policy/operator-authenticator.js';
import { type HttpRequest, type HttpResponse, originalPathOf, pathOf } from '../http/http-types.js';

interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
}

/** How often an unreachable database is logged while it stays unreachable (one line per interval, not a stack per request). */
export const DATABASE_UNREACHABLE_LOG_INTERVAL_MS = 10_000;

/**
 * Turns every failure (ours, Nest's, the body parser's, the database's) into the envelope. A
 * database that cannot be reached (refused, reset or dropped connections, a server shutting
 * down, no answer within the connect or read timeout) answers `503 internal_error` with
 * `Retry-After`, logged once per DATABASE_UNREACHABLE_LOG_INTERVAL_MS with the count of
 * requests answered that way since the previous line.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private unreachableLoggedAt: number | undefined;
  private unreachableSince = 0;

  constructor(
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    @Optional() @Inject(APP_CONFIG) private readonly config?: AppConfig,
    @Optional() private readonly clock?: Clock,
    @Optional() private readonly operatorAuth?: OperatorAuthenticator,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<HttpRequest>();
    const res = ctx.getResponse<HttpResponse>();
    const requestId = requestIdOf(req, res);
    if (isDatabaseUnreachable(exception)) {
      this.logUnreachable(exception as Error);
      writeErrorResponse(res, databaseUnavailable(), requestId);
      return;
    }
    if (this.operatorAuth && exception instanceof HttpException && exception.getStatus() === 404 && isOperatorPath(req) && this.config?.operatorToken) {
      // An unknown operator path answers 401 without the token, like a known one: a guess made
      // there is counted and limited the same way (the authenticator), then it is the 404.
      this.operatorAuth.authenticate(req, res).then(
        () => writeErrorResponse(res, ApiError.resourceMissing(`No such resource: ${req.method} ${pathOf(req)}`), requestId),
        (err: unknown) => this.catch(err, host),
      );
      return;
    }
    const error = this.toApiError(exception, req, res);
    // A deliberate 503 (rail_unavailable, upload_capacity) is an answer, not a failure: its code logs what it needs.
    if (error.status >= 500 && !(exception instanceof ApiError && error.status === 503)) {
      const err = exception instanceof Error ? exception : new Error(String(exception));
      this.logger.error(
        {
          requestId,
          method: req.method,
          path: pathOf(req),
          err: { name: err.name, message: err.message, stack: err.stack, code: databaseErrorCode(err) },
        },
        isDatabaseTimeout(err) ? 'database call timed out' : 'unhandled error',
      );
    }
    writeErrorResponse(res, error, requestId);
  }

  private logUnreachable(err: Error): void {
    this.unreachableSince++;
    const now = performance.now();
    if (this.unreachableLoggedAt !== undefined && now - this.unreachableLoggedAt < DATABASE_UNREACHABLE_LOG_INTERVAL_MS) return;
    this.logger.error(
      {
        err: { name: err.name, message: err.message, code: databaseErrorCode(err) },
        requests: this.unreachableSince,
        intervalMs: DATABASE_UNREACHABLE_LOG_INTERVAL_MS,
      },
      'database unreachable: answering 503',
    );
    this.unreachableLoggedAt = now;
    this.unreachableSince = 0;
  }

  private toApiError(exception: unknown, req: HttpRequest, res: HttpResponse): ApiError {
    if (exception instanceof ApiError) return exception;
    // Nest's adapter wraps body-parser and URI errors in HttpExceptions; look at the original.
    const original = exception instanceof HttpException && exception.cause ? exception.cause : exception;
    if (original instanceof ApiError) return original;
    if (original instanceof URIError) return ApiError.invalidParam('Malformed percent-encoding in the request path');
    const parserError = original as BodyParserError;
    switch (parserError?.type) {
      case 'entity.parse.failed':
        return ApiError.invalidParam('Malformed JSON in request body');
      case 'entity.too.large':
        return ApiError.invalidParam(`Request body exceeds the ${formatBodyLimit(parserError.limit)} limit of this endpoint`);
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return ApiError.invalidParam('Unsupported request body encoding or charset');
      case 'request.aborted':
      case 'request.size.invalid':
        return ApiError.invalidParam('Request body was incomplete');
      default:
        // Any other body-reader failure (a corrupt gzip or deflate stream, for one) is the client's 400.
        if (parserError?.status === 400 && (original as { expose?: boolean }).expose === true) {
          return ApiError.invalidParam('Request body could not be read (malformed content encoding)');
        }
        break;
    }
    if (isUnstorableText(original)) {
      return ApiError.invalidParam('The request contains text the service cannot store (a NUL character or an unpaired UTF-16 surrogate)');
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404) {
        if (isOperatorPath(req)) return this.unknownOperatorRoute(req, res);
        // The documentation is a resource that may be off (DOCS_ENABLED=false), not an unknown route.
        if (pathOf(req) === '/docs' || pathOf(req).startsWith('/docs/')) return ApiError.resourceMissing(`No such resource: ${req.method} ${pathOf(req)}`);
        return ApiError.missingParam(`Unknown route: ${req.method} ${originalPathOf(req)}`);
      }
      if (status === 413) return ApiError.invalidParam('Request body is too large for this endpoint');
      if (status >= 400 && status < 500) return ApiError.invalidParam(exception.message);
    }
    return ApiError.internal();
  }

  /** The operator API's conventions hold on its unknown paths too: 404 when it is off, 401 without the token. */
  private unknownOperatorRoute(req: HttpRequest, res: HttpResponse): ApiError {
    if (!this.config) return ApiError.resourceMissing(`No such resource: ${req.method} ${pathOf(req)}`);
    try {
      // Without the clock no session cookie can be checked for expiry: only the bearer token counts.
      checkOperatorToken(this.config, this.logger, req, res, this.clock ? this.clock.nowMs() : Number.POSITIVE_INFINITY);
    } catch (err) {
      return err as ApiError;
    }
    return ApiError.resourceMissing(`No such resource: ${req.method} ${pathOf(req)}`);
  }
}

function isOperatorPath(req: HttpRequest): boolean {
  return pathOf(req) === '/admin' || pathOf(req).startsWith('/admin/');
}

/**
 * PostgreSQL refuses U+0000 in text (22021) and in jsonb (22P05), and an unpaired surrogate
 * escape in jsonb (22P02 "invalid input syntax for type json"). Such values can only come
 * from the client, so they are its 400, not our 500.
 */
function isUnstorableText(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const driver = (error as { driverError?: { code?: string; message?: string } }).driverError;
  const code = driver?.code ?? (error as { code?: string }).code;
  if (code === '22021' || code === '22P05') return true;
  return code === '22P02' && /type json/.test(driver?.message ?? error.message);
}

function databaseErrorCode(error: Error): string | undefined {
  return (error as { code?: string }).code ?? (error as { driverError?: { code?: string } }).driverError?.code;
}

/**
 * A statement past DB_STATEMENT_TIMEOUT_MS (57014, query_canceled) or no pooled connection
 * within DB_POOL_ACQUIRE_TIMEOUT_MS: still `500 internal_error` for the client, named in the log.
 */
function isDatabaseTimeout(error: Error): boolean {
  return databaseErrorCode(error) === '57014' || /timeout exceeded when trying to connect/i.test(error.message);
}

function databaseUnavailable(): ApiError {
  return new ApiError(503, 'internal_error', 'internal_error', 'The service is temporarily unavailable; retry later', undefined, { 'Retry-After': '1' });
}

export { isDatabaseUnreachable } from './database-unreachable.js';
