export const ENVIRONMENTS = ['sandbox', 'production'] as const;
export type Env = (typeof ENVIRONMENTS)[number];

/** Every repository method takes this first: no query without a tenant. */
export interface TenantScope {
  readonly projectId: string;
  readonly env: Env;
}

export function isEnv(value: unknown): value is Env {
  return value === 'sandbox' || value === 'production';
}
