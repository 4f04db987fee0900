import type { IncomingMessage } from 'node:http';
import { withoutQuery } from './http-types.js';

const UNPREFIXED_ROOTS = ['/v1', '/admin', '/docs', '/console', '/oauth', '/.well-known'];

/**
 * Every public path is accepted with or without /v1; the prefixed form is canonical and is
 * what the controllers and the OpenAPI document declare. The bare /healthz belongs to the
 * infrastructure, not the API, so it is not rewritten (it answers as an unknown route).
 * Fastify's `rewriteUrl`: runs before routing; `request.originalUrl` keeps what was sent.
 */
export function withV1Prefix(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const path = withoutQuery(url);
  const alreadyRouted = UNPREFIXED_ROOTS.some((root) => path === root || path.startsWith(`${root}/`));
  return alreadyRouted || path === '/healthz' ? url : `/v1${url}`;
}
