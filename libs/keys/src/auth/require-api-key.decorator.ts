import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata, UseGuards } from '@nestjs/common';
import { ApiSecurity } from '@nestjs/swagger';
import { API_KEY_BEARER, API_KEY_HEADER, ApiErrors } from '../../../platform/src/index.js';
import type { AuthContext, KeyRequirement } from './auth-context.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { AUTH_CONTEXT, KEY_REQUIREMENT } from './auth-metadata.js';


/**
 * Declares which API keys an endpoint accepts. Runs the whole verification order of the
 * spec (key, kind, revocation, grace, archive, platform lock, scope) before pipes and handler.
 */
export function RequireApiKey(requirement: KeyRequirement) {
  return applyDecorators(
    SetMetadata(KEY_REQUIREMENT, requirement),
    UseGuards(ApiKeyGuard),
    ApiSecurity(API_KEY_BEARER),
    ApiSecurity(API_KEY_HEADER),
    ApiErrors(401, 403),
  );
}

/** The verified key's context: tenant scope (projectId, env), app, kind, scopes. */
export const CurrentKey = createParamDecorator((_data: unknown, ctx: ExecutionContext): AuthContext => {
  const req = ctx.switchToHttp().getRequest();
  const auth = req[AUTH_CONTEXT] as AuthContext | undefined;
  if (!auth) throw new Error('CurrentKey used on an endpoint without @RequireApiKey');
  return auth;
});
