import type { TenantScope } from '#platform';

export type KeyKind = 'publishable' | 'secret';
export type AppPlatform = 'ios' | 'android' | 'web';

/** What the key guard resolves once per request; handlers get it with @CurrentKey(). */
export interface AuthContext extends TenantScope {
  keyId: string;
  kind: KeyKind;
  appId: string;
  /** Secret keys only; empty for publishable keys. */
  scopes: readonly string[];
  platform: AppPlatform;
  requestId: string;
}

export const AGGREGATE_SCOPES = ['reporting:aggregate', 'revenue:read', 'errors:read', 'buckets:read'] as const;
export const IDENTITY_SCOPES = ['reporting:identity', 'crossmatch:read'] as const;
export const KNOWN_SCOPES: readonly string[] = [...AGGREGATE_SCOPES, ...IDENTITY_SCOPES];

export interface KeyRequirement {
  /** Key kinds the endpoint accepts; any other kind is 401 invalid_api_key. */
  kinds: readonly KeyKind[];
  /** Scopes a secret key must hold (403 insufficient_scope before any data is read). */
  scopes?: readonly string[];
  /** Heartbeat only: a web app with an empty allowlist learns the calling Origin. */
  learnOrigin?: boolean;
}
