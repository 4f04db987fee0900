export const ENVIRONMENTS = ['sandbox', 'production'] as const;
export type Env = (typeof ENVIRONMENTS)[number];

declare const TENANT_SCOPE: unique symbol;
declare const CROSS_TENANT: unique symbol;

/**
 * Every repository method that touches tenant data takes this first. It is branded: a plain
 * `{ projectId, env }` literal does not type-check as one, so a scope can only come from a
 * verified source, through one of the named constructors of `TenantScopes` (the key guard,
 * the operator API, a verified store notification) or from a row found by an explicit
 * cross-tenant scan (`crossTenant()`).
 */
export interface TenantScope {
  readonly projectId: string;
  readonly env: Env;
  readonly [TENANT_SCOPE]: true;
}

function brand(projectId: string, env: Env): TenantScope {
  return { projectId, env } as TenantScope;
}

export const TenantScopes = {
  /** The key guard: the project and environment of a verified API key. */
  ofVerifiedKey: brand,
  /** The operator API: a project the operator named and an environment it chose. */
  operator: brand,
  /** A store notification: the project of the webhook path and the environment its verified payload routes to. */
  ofVerifiedRailPayload: brand,
  /** The events buffer: the scope of the verified key a batch was acknowledged under, carried with the batch. */
  ofAcknowledgedBatch: brand,
} as const;

/**
 * The permission for the few documented scans across tenants (retention purges, job and
 * erasure queues, partition maintenance). Rows such a scan finds carry their own scope.
 */
export interface CrossTenant {
  readonly reason: string;
  readonly [CROSS_TENANT]: true;
  /** The scope of a row the scan found. */
  scopeOf(row: { projectId: string; env: Env }): TenantScope;
}

export function crossTenant(reason: string): CrossTenant {
  return { reason, scopeOf: (row) => brand(row.projectId, row.env) } as CrossTenant;
}

export function isEnv(value: unknown): value is Env {
  return value === 'sandbox' || value === 'production';
}
