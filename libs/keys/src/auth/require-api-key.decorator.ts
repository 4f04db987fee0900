import { applyDecorators, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import { API_KEY_BEARER, API_KEY_CLIENT_HEADER, API_KEY_HEADER, DeclarePolicy, type ApiKeyPolicy, requestAuth, type HttpRequest } from '#platform';
import type { AuthContext, KeyRequirement } from './auth-context.js';

/**
 * Declares that a route takes an API key (its route policy). The platform's global guard
 * runs the spec's whole verification order (key, kind, revocation, grace, archive, platform
 * lock, scope) through ApiKeyAuthenticator before the body is read, pipes and handler.
 */
export function RequireApiKey(requirement: KeyRequirement) {
  return applyDecorators(
    DeclarePolicy({ kind: 'api_key', ...requirement } satisfies ApiKeyPolicy),
    ApiSecurity(API_KEY_BEARER),
    ApiSecurity(API_KEY_HEADER),
    ApiSecurity(API_KEY_CLIENT_HEADER),
  );
}

/** The verified key's context of an admitted request (what `@CurrentKey()` gives a handler; a fast path's arguments use it too). */
export function currentKeyOf(req: HttpRequest): AuthContext {
  const auth = requestAuth<AuthContext>(req);
  if (!auth) throw new Error('CurrentKey used on an endpoint without @RequireApiKey');
  return auth;
}

/** The verified key's context: tenant scope (projectId, env), app, kind, scopes. */
export const CurrentKey = createParamDecorator((_data: unknown, ctx: ExecutionContext): AuthContext =>
  currentKeyOf(ctx.switchToHttp().getRequest<HttpRequest>()),
);
