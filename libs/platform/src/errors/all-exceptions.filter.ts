import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import type { Request, Response } from 'express';
import { QueryFailedError } from 'typeorm';
import { ApiError } from './api-error.js';
import { writeErrorResponse } from './error-response.js';
import { APP_LOGGER, type AppLogger } from '../logging/logger.js';
import { requestIdOf } from '../http/request-id.js';

interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
}

/** Turns every failure (ours, Nest's, the body parser's, the database's) into the envelope. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(@Inject(APP_LOGGER) private readonly logger: AppLogger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const req = ctx.getRequest<Request>();
    const res = ctx.getResponse<Response>();
    const requestId = requestIdOf(req, res);
    const error = this.toApiError(exception, req);
    if (error.status >= 500) {
      const err = exception instanceof Error ? exception : new Error(String(exception));
      this.logger.error(
        { requestId, method: req.method, path: req.path, err: { name: err.name, message: err.message, stack: err.stack, code: (err as { code?: string }).code } },
        'unhandled error',
      );
    }
    writeErrorResponse(res, error, requestId);
  }

  private toApiError(exception: unknown, req: Request): ApiError {
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
        return ApiError.invalidParam(`Request body exceeds the ${formatBytes(parserError.limit)} limit of this endpoint`);
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return ApiError.invalidParam('Unsupported request body encoding or charset');
      case 'request.aborted':
      case 'request.size.invalid':
        return ApiError.invalidParam('Request body was incomplete');
      default:
        break;
    }
    if (isUnstorableText(original)) {
      return ApiError.invalidParam('The request contains text the service cannot store (a NUL character or an unpaired UTF-16 surrogate)');
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404) {
        return ApiError.missingParam(`Unknown route: ${req.method} ${req.originalUrl.split('?')[0]}`);
      }
      if (status === 413) return ApiError.invalidParam('Request body is too large for this endpoint');
      if (status >= 400 && status < 500) return ApiError.invalidParam(exception.message);
    }
    return ApiError.internal();
  }
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

function formatBytes(limit: number | undefined): string {
  if (!limit) return 'size';
  if (limit >= 1024 * 1024) return `${Math.round((limit / (1024 * 1024)) * 10) / 10} MB`;
  return `${Math.round(limit / 1024)} KB`;
}
