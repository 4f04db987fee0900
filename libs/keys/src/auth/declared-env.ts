import { ApiError, type TenantScope } from '../../../platform/src/index.js';

/** A request that declares an environment must declare its key's: otherwise 403 env_mismatch. */
export function assertDeclaredEnv(scope: TenantScope, declared: unknown): void {
  if (declared === undefined || declared === null) return;
  if (declared !== scope.env) {
    throw ApiError.permission('env_mismatch', `The request declares environment "${String(declared)}" but the API key belongs to "${scope.env}"`);
  }
}
