import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { type HttpRequest, type HttpResponse, setResponseHeader } from './http-types.js';

const REQUEST_ID = Symbol('requestId');

type WithRequestId = { [REQUEST_ID]?: string };

const ID_BYTES = 12;
// One call into the CSPRNG per 512 ids instead of one per request (a request id is not a secret).
const POOL_BYTES = ID_BYTES * 512;
let pool = Buffer.alloc(0);
let offset = 0;

export function newRequestId(): string {
  if (offset + ID_BYTES > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  offset += ID_BYTES;
  return `req_${pool.toString('hex', offset - ID_BYTES, offset)}`;
}

/**
 * A request id a client or load balancer sent that the service keeps as its own: 1 to 128
 * letters, digits, `.`, `_`, `:` or `-` (a UUID, `req_…`, an edge's id). Anything else (empty,
 * longer, spaces, quotes, control characters, a repeated header) is replaced by a new id, so
 * the value is always safe in a header, a log line and an error body.
 */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function acceptedRequestId(incoming: string | string[] | undefined): string | undefined {
  return typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : undefined;
}

/**
 * Set by the edge's first hook: every response, including preflights and parser errors, carries
 * the id. An incoming `X-Request-Id` of a safe form is kept, so that a request can be followed
 * from the load balancer's logs into the service's; otherwise the id is a new `req_…`.
 */
export function assignRequestId(req: HttpRequest, res: HttpResponse): void {
  const id = acceptedRequestId(req.headers['x-request-id']) ?? newRequestId();
  (req as unknown as WithRequestId)[REQUEST_ID] = id;
  setResponseHeader(res, 'X-Request-Id', id);
}

export function requestIdOf(req: HttpRequest, res?: HttpResponse): string {
  const id = (req as unknown as WithRequestId)[REQUEST_ID];
  if (id) return id;
  const fresh = newRequestId();
  (req as unknown as WithRequestId)[REQUEST_ID] = fresh;
  if (res) setResponseHeader(res, 'X-Request-Id', fresh);
  return fresh;
}

/** Handler parameter: the request's id (`req_…`, or the caller's own, see `assignRequestId`). */
export const RequestId = createParamDecorator((_data: unknown, ctx: ExecutionContext): string => requestIdOf(ctx.switchToHttp().getRequest<HttpRequest>()));
