import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { HttpRequest, HttpResponse } from './http-types.js';

const REQUEST_ID = Symbol('requestId');

type WithRequestId = { [REQUEST_ID]?: string };

export function newRequestId(): string {
  return `req_${randomBytes(12).toString('hex')}`;
}

/** Set by the edge's first hook: every response, including preflights and parser errors, carries the id. */
export function assignRequestId(req: HttpRequest, res: HttpResponse): void {
  const id = newRequestId();
  (req as unknown as WithRequestId)[REQUEST_ID] = id;
  res.header('X-Request-Id', id);
}

export function requestIdOf(req: HttpRequest, res?: HttpResponse): string {
  const id = (req as unknown as WithRequestId)[REQUEST_ID];
  if (id) return id;
  const fresh = newRequestId();
  (req as unknown as WithRequestId)[REQUEST_ID] = fresh;
  res?.header('X-Request-Id', fresh);
  return fresh;
}

/** Handler parameter: the request's `req_…` id. */
export const RequestId = createParamDecorator((_data: unknown, ctx: ExecutionContext): string => requestIdOf(ctx.switchToHttp().getRequest<HttpRequest>()));
