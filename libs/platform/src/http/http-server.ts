import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { AppConfig } from '../config/app-config.js';
import { ApiError } from '../errors/api-error.js';
import { newRequestId } from './request-id.js';

/**
 * Node's HTTP server settings that bound how long a slow or silent client holds a
 * connection. Values and reasons: docs/decisions/slow-client-bounds.md. The
 * answer to requests Node's parser refuses is answerClientError, Fastify's
 * `clientErrorHandler`.
 */
export function configureHttpServer(server: Server, config: AppConfig): void {
  trackConnections(server);
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

/** What the drain knows of a connection: its requests not yet answered, and whether it served one. */
interface ConnectionState {
  active: Set<ServerResponse>;
  served: number;
  /** The latest request, whose body may still be on its way after an early answer. */
  last?: TrackedRequest;
}

/**
 * An answer written before the request's body arrived (a refusal: unknown route, 401 …) goes
 * out with `Connection: close`, but the connection is closed only once the rest of the body
 * has arrived, or after this long: the request stays in flight (the drain waits for it) and
 * the client is not reset while still sending. During the drain, the drain's grace bounds it.
 * A 413 is closed at once: its body is refused for its size and never waited for.
 */
export const UNREAD_BODY_LINGER_MS = 1_000;

/**
 * A connection accepted before the drain but without a request yet (the request may be in the
 * socket's buffer, racing the SIGTERM) gets this long to send it; it is then served with
 * `Connection: close`. Longer than a client's write after its connect, short enough that
 * pre-opened connections that never send anything do not hold the shutdown.
 */
export const FRESH_CONNECTION_GRACE_MS = 1_000;

interface Tracker {
  connections: Map<Socket, ConnectionState>;
  /** From SIGTERM: every response says `Connection: close`, and its connection closes after it. */
  closing: boolean;
  draining: boolean;
}

const TRACKED = Symbol('trackedRequest');

type Tracked = { [TRACKED]?: TrackedRequest };

/** One request of a tracked connection: answered (its response closed) and received (its body read to the end). */
interface TrackedRequest {
  req: IncomingMessage;
  res: ServerResponse;
  state: ConnectionState;
  tracker: Tracker;
  responded: boolean;
  received: boolean;
}

function responseClosed(this: ServerResponse): void {
  const request = (this as Tracked)[TRACKED];
  if (!request || request.responded) return;
  request.responded = true;
  settle(request);
}

function requestReceived(this: IncomingMessage): void {
  const request = (this as Tracked)[TRACKED];
  if (!request || request.received) return;
  request.received = true;
  settle(request);
}

function settle({ req, res, state, tracker, responded, received }: TrackedRequest): void {
  if (!responded || !received || !state.active.delete(res)) return;
  state.served++;
  // A response that went out keep-alive before the drain: its connection is now idle.
  if (tracker.draining && state.active.size === 0 && !req.socket.destroyed) req.socket.destroySoon();
}

const trackers = new WeakMap<Server, Tracker>();

function trackConnections(server: Server): void {
  if (trackers.has(server)) return;
  const tracker: Tracker = { connections: new Map(), closing: false, draining: false };
  trackers.set(server, tracker);
  server.on('connection', (socket: Socket) => {
    const state: ConnectionState = { active: new Set(), served: 0 };
    tracker.connections.set(socket, state);
    socket.once('close', () => tracker.connections.delete(socket));
    // Node calls destroySoon after a `Connection: close` response: deferred while the
    // answered request's body is still arriving (UNREAD_BODY_LINGER_MS).
    const destroySoon = socket.destroySoon;
    socket.destroySoon = function lingeringDestroySoon(this: Socket) {
      const last = state.last;
      if (socket.destroyed || !last || !last.res.writableEnded || last.req.complete || last.res.statusCode === 413) {
        return destroySoon.call(this);
      }
      let done = false;
      const close = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (!socket.destroyed) destroySoon.call(socket);
      };
      // While draining, the drain's grace (not this timer) bounds the wait.
      const timer = setTimeout(() => {
        if (!tracker.draining) close();
      }, UNREAD_BODY_LINGER_MS);
      timer.unref();
      last.req.once('end', close);
      last.req.once('close', close);
      socket.once('close', close);
    };
  });
  // Registered before the framework's handler: the header is set before any reply is written.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = tracker.connections.get(req.socket);
    if (!state) return;
    // One record per request and listeners shared by all of them (no closures per request).
    const request: TrackedRequest = { req, res, state, tracker, responded: false, received: req.complete };
    state.last = request;
    state.active.add(res);
    if (tracker.closing) res.setHeader('Connection', 'close');
    // Done when answered and its body fully received (an early answer, e.g. to an unknown
    // route, leaves the rest of the body on its way: the connection is not idle yet).
    (res as Tracked)[TRACKED] = request;
    res.on('close', responseClosed);
    if (!request.received) {
      (req as Tracked)[TRACKED] = request;
      req.on('end', requestReceived);
      req.on('close', requestReceived);
    }
  });
}

/**
 * The drain delay's start (SIGTERM): the listener keeps serving, but every response from now
 * on (and every one not yet started) carries `Connection: close`, so a client's connection
 * closes right after its answer, at the server's initiative and never under a request the
 * client is sending. Keep-alive clients move to other replicas one request at a time instead
 * of finding their idle connections closed when the listener stops.
 */
export function announceHttpDrain(server: Server): void {
  const tracker = trackers.get(server);
  if (!tracker || tracker.closing) return;
  tracker.closing = true;
  for (const state of tracker.connections.values()) {
    for (const res of state.active) if (!res.headersSent && !res.writableEnded) res.setHeader('Connection', 'close');
  }
}

/**
 * Stops accepting connections and finishes every request already received, then resolves:
 * - responses not yet started are sent with `Connection: close`, and each connection closes
 *   after its last response;
 * - idle keep-alive connections (a request served, none in progress) are closed at once;
 * - connections accepted without a request yet get FRESH_CONNECTION_GRACE_MS to send its
 *   first bytes (one that has received bytes is a request on its way: it stays);
 * - after graceMs whatever is left is closed.
 * Node's `server.close()` is not used to stop listening: it also destroys every connection
 * whose request has not been parsed yet (its idle list), resetting requests that raced the
 * signal; closing the listener alone keeps them.
 */
export function drainHttpServer(server: Server, graceMs: number): Promise<void> {
  const tracker = trackers.get(server);
  if (!tracker) return new Promise((resolve) => server.close(() => resolve()));
  tracker.closing = true;
  tracker.draining = true;
  const closed = new Promise<void>((resolve) => {
    if (!server.listening) resolve();
    else NetServer.prototype.close.call(server, () => resolve());
  });
  const fresh: Socket[] = [];
  for (const [socket, state] of tracker.connections) {
    if (state.active.size > 0) {
      for (const res of state.active) if (!res.headersSent && !res.writableEnded) res.setHeader('Connection', 'close');
    } else if (state.served > 0) {
      socket.destroySoon();
    } else {
      fresh.push(socket);
    }
  }
  // A fresh connection that has received bytes is a request being parsed: it stays (bounded
  // by graceMs). The check runs after one more I/O poll (setImmediate), so that on a starved
  // event loop the timer does not win against data already waiting on the socket.
  const stillFresh = (socket: Socket) => {
    const state = tracker.connections.get(socket);
    return state !== undefined && state.active.size === 0 && state.served === 0 && socket.bytesRead === 0;
  };
  const freshTimer = setTimeout(() => {
    setImmediate(() => {
      for (const socket of fresh) if (stillFresh(socket)) socket.destroy();
    });
  }, FRESH_CONNECTION_GRACE_MS);
  const forceTimer = setTimeout(() => {
    for (const socket of tracker.connections.keys()) socket.destroy();
  }, graceMs);
  return closed.finally(() => {
    clearTimeout(freshTimer);
    clearTimeout(forceTimer);
  });
}
