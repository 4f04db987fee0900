import { type HttpResponse, setResponseHeader } from '../http/http-types.js';
import type { ApiError } from './api-error.js';

const ERROR_CODE = Symbol('errorCode');

type WithErrorCode = { [ERROR_CODE]?: string };

/** Writes the error envelope. The single place that shapes an error body. */
export function writeErrorResponse(res: HttpResponse, error: ApiError, requestId: string): void {
  if (res.sent || res.raw.headersSent) {
    if (!res.raw.writableEnded) res.raw.end();
    return;
  }
  for (const [name, value] of Object.entries(error.headers ?? {})) setResponseHeader(res, name, value);
  setResponseHeader(res, 'Cache-Control', 'no-store');
  // Refused before its body was read (401, 404, 413 …): close, so the unread body is never waited for.
  if (res.request && !res.request.raw.complete) setResponseHeader(res, 'Connection', 'close');
  // Read by the access log: 4xx/5xx lines carry the error code.
  (res as unknown as WithErrorCode)[ERROR_CODE] = error.code;
  const body: Record<string, unknown> = {
    error: { type: error.type, code: error.code, message: error.message, request_id: requestId, ...error.extra },
  };
  // A 426 also carries minVersion and surface at the top level (docs/decisions/426-and-client-versions.md).
  if (error.status === 426 && error.extra) Object.assign(body, error.extra);
  res.status(error.status).header('Content-Type', 'application/json; charset=utf-8').send(JSON.stringify(body));
}

/** The code the access log carries for a 4xx/5xx answered without the envelope (the readiness probe's 503). */
export function setLogCode(res: HttpResponse, code: string): void {
  (res as unknown as WithErrorCode)[ERROR_CODE] = code;
}

/** The error code written for this response, if it was an error envelope (or set by setLogCode). */
export function errorCodeOf(res: HttpResponse): string | undefined {
  return (res as unknown as WithErrorCode)[ERROR_CODE];
}
