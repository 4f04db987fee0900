import type { Response } from 'express';
import type { ApiError } from './api-error.js';

/** Writes the error envelope. The single place that shapes an error body. */
export function writeErrorResponse(res: Response, error: ApiError, requestId: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
  res.setHeader('Cache-Control', 'no-store');
  // Read by the access log: 4xx/5xx lines carry the error code.
  if (res.locals) res.locals.errorCode = error.code;
  const body: Record<string, unknown> = {
    error: { type: error.type, code: error.code, message: error.message, request_id: requestId, ...error.extra },
  };
  // A 426 also carries minVersion and surface at the top level (docs/decisions.md).
  if (error.status === 426 && error.extra) Object.assign(body, error.extra);
  res.status(error.status).json(body);
}
