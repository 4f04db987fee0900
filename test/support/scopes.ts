import { type Env, type TenantScope, TenantScopes } from '#platform';

/** A tenant scope for a test that calls services or repositories directly (privileged, like the operator). */
export function testScope(projectId: string, env: Env = 'sandbox'): TenantScope {
  return TenantScopes.operator(projectId, env);
}
