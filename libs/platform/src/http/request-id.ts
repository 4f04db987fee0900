import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

const REQUEST_ID = Symbol('requestId');

type WithRequestId = { [REQUEST_ID]?: string };

export function newRequestId(): string {
  return `req_${randomBytes(12).toString('hex')}`;
}

/** First middleware: every response, including preflights and parser errors, carries the id. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const id = newRequestId();
  (req as unknown as WithRequestId)[REQUEST_ID] = id;
  res.setHeader('X-Request-Id', id);
  next();
}

export function requestIdOf(req: Request, res?: Response): string {
  const id = (req as unknown as WithRequestId)[REQUEST_ID];
  if (id) return id;
  const fresh = newRequestId();
  (req as unknown as WithRequestId)[REQUEST_ID] = fresh;
  res?.setHeader('X-Request-Id', fresh);
  return fresh;
}

/** Handler parameter: the request's `req_…` id. */
export const RequestId = createParamDecorator((_data: unknown, ctx: ExecutionContext): string => requestIdOf(ctx.switchToHttp().getRequest<Request>()));
