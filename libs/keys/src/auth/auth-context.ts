import type { TenantScope } from '#platform';

export type KeyKind = 'publishable' | 'secret';
/** The kind of the key a request was verified with: an app's key, or a workspace key (`cd_wk_…`). */
export type AuthKind = KeyKind | 'workspace';
export type AppPlatform = 'ios' | 'android' | 'web';

/** What the key guard resolves once per request; handlers get it with @CurrentKey(). */
export interface AuthContext extends TenantScope {
  keyId: string;
  kind: AuthKind;
  /** Empty for a workspace key. */
  appId: string;
  /** Secret keys only; empty for publishable keys. */
  scopes: readonly string[];
  platform: AppPlatform;
  requestId: string;
  /** Workspace keys only: the workspace and its projects. */
  workspaceId?: string;
  workspaceProjectIds?: readonly string[];
}

export const AGGREGATE_SCOPES = ['reporting:aggregate', 'revenue:read', 'errors:read', 'buckets:read'] as const;
export const IDENTITY_SCOPES = ['reporting:identity', 'crossmatch:read'] as const;
export const KNOWN_SCOPES: readonly string[] = [...AGGREGATE_SCOPES, ...IDENTITY_SCOPES];
/** Workspace keys only: creating projects and apps (the CLI's POST /v1/projects and POST /v1/apps). */
export const WORKSPACE_WRITE_SCOPE = 'workspace:write';
export const WORKSPACE_KEY_SCOPES: readonly string[] = [...KNOWN_SCOPES, WORKSPACE_WRITE_SCOPE];

export interface KeyRequirement {
  /** Key kinds the endpoint accepts; any other kind is 401 invalid_api_key. */
  kinds: readonly KeyKind[];
  /** Scopes a secret key must hold (403 insufficient_scope before any data is read). */
  scopes?: readonly string[];
  /**
   * Reads that also take workspace keys and the `project` query parameter. `project`: a
   * workspace key must name one of its projects (`project=`, required) and may name `env`
   * (default production); a secret key naming another project is 403 project_not_allowed.
   * `workspace`: the whole workspace is read; `project=` is optional and checked the same way.
   */
  workspace?: 'project' | 'workspace';
  /** Heartbeat only: a web app with an empty allowlist learns the calling Origin. */
  learnOrigin?: boolean;
}
