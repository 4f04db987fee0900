import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AppConfig } from '../config/app-config.js';
import { ApiError } from '../errors/api-error.js';
import { newRequestId } from './request-id.js';

/**
 * Node's HTTP server settings that bound how long a slow or silent client holds a
 * connection. Values and reasons: docs/decisions.md ("The edge: limits and timeouts"). The
 * answer to requests Node's parser refuses is answerClientError, Fastify's
 * `clientErrorHandler`.
 */
export function configureHttpServer(server: Server, config: AppConfig): void {
  server.headersTimeout = config.httpHeadersTimeoutMs;
  server.requestTimeout = config.httpRequestTimeoutMs;
  // Above the idle timeout of common load balancers (60 s), so they close idle connections first.
  server.keepAliveTimeout = config.httpKeepAliveTimeoutMs;
  // Node checks both timeouts on this interval (30 s by default): make it a fraction of them.
  // It is read when the server starts listening, so setting it here (before listen) applies.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.max(
    50,
    Math.min(5_000, Math.floor(Math.min(config.httpHeadersTimeoutMs, config.httpRequestTimeoutMs) / 4)),
  );
  // An Expect other than 100-continue: Node would answer a bare 417 and keep the connection.
  server.on('checkExpectation', answerUnmetExpectation);
}

/** `417` with the envelope and an `X-Request-Id` for an `Expect` the service cannot meet; the connection is closed. */
export function answerUnmetExpectation(_req: IncomingMessage, res: ServerResponse): void {
  const requestId = newRequestId();
  const body = JSON.stringify({
    error: { type: 'invalid_request_error', code: 'invalid_param_value', message: 'Expect: only 100-continue is supported', request_id: requestId },
  });
  res.writeHead(417, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'X-Request-Id': requestId,
    'Cache-Control': 'no-store',
    Connection: 'close',
  });
  res.end(body);
}

/** The envelope and status for an error Node's parser (or its timeouts) raised on a connection. */
export function clientErrorResponse(code: string | undefined): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(431, 'invalid_request_error', 'invalid_param_value', 'The request line or headers are too large (at most 16 KB)');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(408, 'invalid_request_error', 'request_timeout', 'The request was not received in time');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiError(413, 'invalid_request_error', 'invalid_param_value', 'The chunk extensions of the request body are too large');
    default:
      return ApiError.invalidParam('Malformed HTTP request');
  }
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 413: 'Payload Too Large', 431: 'Request Header Fields Too Large' };

/**
 * Replaces Node's bare `400`/`408`/`431` with the envelope and an `X-Request-Id` (the one the
 * request already has when the edge got that far). Like Node's own handler, it answers only
 * when nothing of a response has been written yet, and closes the connection.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent: boolean; getHeader(name: string): unknown } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || (inFlight && inFlight.headersSent)) {
    socket.destroy();
    return;
  }
  const existing = inFlight?.getHeader('x-request-id');
  const requestId = typeof existing === 'string' ? existing : newRequestId();
  const error = clientErrorResponse(err.code);
  const body = JSON.stringify({ error: { type: error.type, code: error.code, message: error.message, request_id: requestId } });
  socket.end(
    `HTTP/1.1 ${error.status} ${REASONS[error.status] ?? 'Bad Request'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      'Cache-Control: no-store\r\n' +
      'Connection: close\r\n' +
      '\r\n' +
      body,
  );
  socket.destroySoon();
}
