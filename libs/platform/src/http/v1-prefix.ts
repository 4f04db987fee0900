import type { NextFunction, Request, Response } from 'express';

const UNPREFIXED_ROOTS = ['/v1', '/admin', '/docs'];

/**
 * Every public path is accepted with or without /v1; the prefixed form is canonical and is
 * what the controllers and the OpenAPI document declare. The bare /healthz belongs to the
 * infrastructure, not the API, so it is not rewritten (it answers as an unknown route).
 */
export function v1PrefixMiddleware(req: Request, _res: Response, next: NextFunction): void {
  const path = req.path;
  const alreadyRouted = UNPREFIXED_ROOTS.some((root) => path === root || path.startsWith(`${root}/`));
  if (!alreadyRouted && path !== '/healthz') req.url = `/v1${req.url}`;
  next();
}
