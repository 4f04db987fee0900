import { parse } from 'node:querystring';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The request and reply objects handlers, guards and filters receive (the Fastify adapter's). */
export type HttpRequest = FastifyRequest;
export type HttpResponse = FastifyReply;

/** The request path (after the /v1 rewrite), without the query string, not decoded. */
export function pathOf(req: HttpRequest): string {
  return withoutQuery(req.url);
}

/** The path the client sent (before the /v1 rewrite), without the query string. */
export function originalPathOf(req: HttpRequest): string {
  return withoutQuery(req.originalUrl);
}

/** A URL's path: everything before the query string. */
export function withoutQuery(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/** Query strings parse as Node's `querystring` does (a repeated key becomes an array), as Express's "simple" parser did. */
export function parseQueryString(query: string): Record<string, string | string[]> {
  return parse(query) as Record<string, string | string[]>;
}

/**
 * Sets a response header with its name as written (`X-Request-Id`, `Retry-After`). Fastify's
 * `reply.header()` lower-cases names; the names are case-insensitive in HTTP, but published
 * clients may look some up by their documented spelling, as they read them from Express
 * before. Written on the raw response, which Fastify merges into the head it sends (and which
 * Node's parser-error handler can read for the request's id).
 */
export function setResponseHeader(res: HttpResponse, name: string, value: string): void {
  res.raw.setHeader(name, value);
}
