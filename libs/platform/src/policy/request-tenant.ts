import type { TenantScope } from '../tenancy/tenant-scope.js';
import type { HttpRequest } from '../http/http-types.js';

const REQUEST_TENANT = Symbol('requestTenant');
const REQUEST_AUTH = Symbol('requestAuth');

type Carrier = { [REQUEST_TENANT]?: TenantScope; [REQUEST_AUTH]?: unknown };

/** Set once by the route-policy guard when a caller is authenticated. */
// eslint-disable-next-line write-path/scope-first -- the request is what this writes; the scope is the value stored on it
export function setRequestAuth(req: HttpRequest, scope: TenantScope, auth: unknown): void {
  (req as unknown as Carrier)[REQUEST_TENANT] = scope;
  (req as unknown as Carrier)[REQUEST_AUTH] = auth;
}

/** The tenant of an authenticated request (API-key routes); undefined on public and operator routes. */
export function requestTenant(req: HttpRequest): TenantScope | undefined {
  return (req as unknown as Carrier)[REQUEST_TENANT];
}

/** What the authenticator returned for this request (the keys context's AuthContext). */
export function requestAuth<T>(req: HttpRequest): T | undefined {
  return (req as unknown as Carrier)[REQUEST_AUTH] as T | undefined;
}
