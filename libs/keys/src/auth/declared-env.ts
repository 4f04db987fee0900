import { ApiError, type TenantScope } from '#platform';

const MAX_ECHOED_CHARS = 32;

/** How a declared environment is named in the error: strings truncated, other JSON by type. */
function describeDeclared(declared: unknown): string {
  if (typeof declared === 'string') {
    return `"${declared.length > MAX_ECHOED_CHARS ? `${declared.slice(0, MAX_ECHOED_CHARS)}…` : declared}"`;
  }
  if (Array.isArray(declared)) return 'a JSON array';
  return typeof declared === 'object' ? 'a JSON object' : `a JSON ${typeof declared}`;
}

/**
 * A request that declares an environment must declare its key's: otherwise 403 env_mismatch.
 * Any JSON value is accepted here (an object or array simply never matches).
 */
export function assertDeclaredEnv(scope: TenantScope, declared: unknown): void {
  if (declared === undefined || declared === null) return;
  if (declared !== scope.env) {
    throw ApiError.permission('env_mismatch', `The request declares environment ${describeDeclared(declared)} but the API key belongs to "${scope.env}"`);
  }
}
