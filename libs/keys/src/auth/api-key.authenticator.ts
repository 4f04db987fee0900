import { Inject, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import {
  APP_LOGGER,
  ApiError,
  type AppLogger,
  Clock,
  type TenantScope,
  TenantScopes,
  allowOrigin,
  isEnv,
  pathOf,
  requestIdOf,
  type HttpRequest,
  type HttpResponse,
} from '#platform';
import { extractApiKey, sha256Hex } from '../domain/api-key-format.js';
import type { KeyAuthRecord } from '../domain/keys.repository.js';
import { originAllowed } from '../domain/origin-allowlist.js';
import { OriginLearningService } from '../heartbeat/origin-learning.service.js';
import type { AuthContext, KeyRequirement } from './auth-context.js';
import { KeyLookupService } from './key-lookup.service.js';

type Rejection = { error: ApiError; reason: string; keyId?: string };

/**
 * The API-key policy of the platform's route guard (registered with RoutePolicyHooks by
 * KeysModule). The spec's verification order: extract (401 missing_api_key), look up (401
 * invalid_api_key or key_revoked), platform lock for publishable keys (403), then scope (403
 * insufficient_scope). Every rejection writes one log line with the request id and the
 * reason, never the key.
 */
@Injectable()
export class ApiKeyAuthenticator {
  constructor(
    private readonly lookup: KeyLookupService,
    private readonly originLearning: OriginLearningService,
    private readonly clock: Clock,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  async authenticate(requirement: KeyRequirement, req: HttpRequest, res: HttpResponse): Promise<{ scope: TenantScope; auth: AuthContext }> {
    const requestId = requestIdOf(req, res);
    const outcome = await this.verify(requirement, req, res, requestId);
    if ('error' in outcome) {
      this.logger.warn(
        { requestId, method: req.method, path: pathOf(req), reason: outcome.reason, keyId: outcome.keyId, code: outcome.error.code },
        'api key rejected',
      );
      throw outcome.error;
    }
    return { scope: outcome, auth: outcome };
  }

  private async verify(requirement: KeyRequirement, req: HttpRequest, res: HttpResponse, requestId: string): Promise<AuthContext | Rejection> {
    const presented = extractApiKey(req.headers);
    if (presented.status === 'missing' || presented.status === 'malformed') {
      return {
        reason: presented.status === 'missing' ? 'no_key' : 'malformed_key',
        error: ApiError.authentication(
          'missing_api_key',
          'Provide an API key as "Authorization: Bearer <key>", "Service-Api-Key: <key>" or "Crossdeck-Api-Key: <key>"',
        ),
      };
    }
    const invalid = (reason: string, keyId?: string): Rejection => ({ reason, keyId, error: ApiError.authentication('invalid_api_key', 'Invalid API key') });
    if (presented.status === 'unsupported') return invalid('unsupported_key_type');
    if (presented.status === 'workspace') {
      if (!requirement.workspace) return invalid('wrong_key_kind_workspace');
      return this.verifyWorkspaceKey(requirement, req, presented.key, requestId);
    }

    const secretHash = presented.kind === 'secret' ? sha256Hex(presented.key) : undefined;
    const record = await this.lookup.find(presented.kind, presented.key, secretHash);
    if (!record || record.env !== presented.env || record.kind !== presented.kind) return invalid('unknown_key');
    if (record.kind === 'secret' && !this.hashMatches(secretHash ?? sha256Hex(presented.key), record)) return invalid('unknown_key');
    if (record.projectArchived) return invalid('project_archived', record.keyId);
    if (record.status === 'revoked') {
      return { reason: 'key_revoked', keyId: record.keyId, error: ApiError.authentication('key_revoked', 'This API key has been revoked') };
    }
    if (record.status === 'rotated_out' && (record.expiresAtMs === null || this.clock.nowMs() >= record.expiresAtMs)) {
      return invalid('rotated_key_expired', record.keyId);
    }
    if (!requirement.kinds.includes(record.kind)) return invalid(`wrong_key_kind_${record.kind}`, record.keyId);

    if (record.kind === 'publishable') {
      const lock = await this.checkPlatformLock(record, req, requirement);
      if (lock) return { ...lock, keyId: record.keyId };
      allowOrigin(req, res);
    }

    const missingScopes = (requirement.scopes ?? []).filter((scope) => !record.scopes.includes(scope));
    if (missingScopes.length > 0) {
      return {
        reason: 'insufficient_scope',
        keyId: record.keyId,
        error: ApiError.permission('insufficient_scope', `This API key lacks the scope required by this endpoint: ${missingScopes.join(', ')}`),
      };
    }

    if (requirement.workspace) {
      const project = singleQueryParam(req, 'project');
      if (project !== undefined && project !== record.projectId) {
        return { reason: 'project_not_allowed', keyId: record.keyId, error: projectNotAllowed(project) };
      }
    }

    // Not `{ ...TenantScopes.ofVerifiedKey(...), keyId, ... }`: on Node 20 (V8 11) an object
    // built by spread and then extended gets a hidden class of its own on every call, which
    // the young generation then promotes (docs/performance.md, "What the measurements showed").
    return Object.assign(TenantScopes.ofVerifiedKey(record.projectId, record.env), {
      keyId: record.keyId,
      kind: record.kind,
      appId: record.appId,
      scopes: record.scopes,
      platform: record.platform,
      requestId,
    });
  }

  /**
   * For an unknown route: the request carries an active publishable key of a web app whose
   * allowed origins admit its Origin (the same rule as the platform lock of known routes).
   */
  async originAllowedByPresentedKey(req: HttpRequest): Promise<boolean> {
    const presented = extractApiKey(req.headers);
    if (presented.status !== 'ok' || presented.kind !== 'publishable') return false;
    const record = await this.lookup.find(presented.kind, presented.key);
    if (!record || record.kind !== 'publishable' || record.env !== presented.env || record.projectArchived || record.status === 'revoked') return false;
    return record.platform === 'web' && originAllowed(req.headers.origin, record.allowedOrigins);
  }

  /**
   * A workspace key: active (401 key_revoked), holding the route's scopes (403
   * insufficient_scope, before anything is read), then the project it names: required on a
   * project read (400 missing_required_param), one of its workspace's (403 project_not_allowed);
   * `env` production unless it says sandbox.
   */
  private async verifyWorkspaceKey(requirement: KeyRequirement, req: HttpRequest, key: string, requestId: string): Promise<AuthContext | Rejection> {
    const record = await this.lookup.findWorkspaceKey(key);
    if (!record) return { reason: 'unknown_key', error: ApiError.authentication('invalid_api_key', 'Invalid API key') };
    const presentedHash = Buffer.from(sha256Hex(key), 'hex');
    if (!timingSafeEqual(presentedHash, Buffer.from(record.secretHash, 'hex'))) {
      return { reason: 'unknown_key', error: ApiError.authentication('invalid_api_key', 'Invalid API key') };
    }
    if (record.status === 'revoked') {
      return { reason: 'key_revoked', keyId: record.keyId, error: ApiError.authentication('key_revoked', 'This API key has been revoked') };
    }
    if (record.expiresAtMs !== null && this.clock.nowMs() >= record.expiresAtMs) {
      return { reason: 'workspace_key_expired', keyId: record.keyId, error: ApiError.authentication('invalid_api_key', 'This API key has expired') };
    }
    const missingScopes = (requirement.scopes ?? []).filter((scope) => !record.scopes.includes(scope));
    if (missingScopes.length > 0) {
      return {
        reason: 'insufficient_scope',
        keyId: record.keyId,
        error: ApiError.permission('insufficient_scope', `This API key lacks the scope required by this endpoint: ${missingScopes.join(', ')}`),
      };
    }
    const project = singleQueryParam(req, 'project');
    if (project === undefined && requirement.workspace === 'project') {
      return {
        reason: 'missing_project',
        keyId: record.keyId,
        error: ApiError.missingParam('project is required with a workspace key (a proj_ id of its workspace)'),
      };
    }
    if (project !== undefined && !record.projectIds.includes(project)) {
      return { reason: 'project_not_allowed', keyId: record.keyId, error: projectNotAllowed(project) };
    }
    const env = singleQueryParam(req, 'env') ?? 'production';
    if (!isEnv(env)) return { reason: 'bad_env', keyId: record.keyId, error: ApiError.invalidParam('env must be production or sandbox') };
    return Object.assign(TenantScopes.ofVerifiedKey(project ?? record.workspaceId, env), {
      keyId: record.keyId,
      kind: 'workspace' as const,
      appId: '',
      scopes: record.scopes,
      // Not an app's key: no platform lock applies; `web` is never read for a workspace key.
      platform: 'web' as const,
      requestId,
      workspaceId: record.workspaceId,
      workspaceProjectIds: record.projectIds,
    });
  }

  /** Defence in depth: the row was found by its hash; compare the hashes in constant time too. */
  private hashMatches(presentedHash: string, record: KeyAuthRecord): boolean {
    if (!record.secretHash) return false;
    return timingSafeEqual(Buffer.from(presentedHash, 'hex'), Buffer.from(record.secretHash, 'hex'));
  }

  private async checkPlatformLock(record: KeyAuthRecord, req: HttpRequest, requirement: KeyRequirement): Promise<Rejection | undefined> {
    switch (record.platform) {
      case 'web': {
        const origin = req.headers.origin;
        if (originAllowed(origin, record.allowedOrigins)) return undefined;
        if (requirement.learnOrigin && record.allowedOrigins.length === 0) {
          const learned = await this.originLearning.learnFirstOrigin(record.appId, origin);
          if (learned && originAllowed(origin, learned)) return undefined;
        }
        return {
          reason: origin ? 'origin_not_allowed' : 'origin_missing',
          error: ApiError.permission('origin_not_allowed', "The request Origin is not in this app's allowed origins"),
        };
      }
      case 'ios': {
        // Field clients send the Crossdeck- spelling of the lock headers too (docs/decisions/origins-and-platform-locks.md).
        const bundleId = req.headers['x-service-bundle-id'] ?? req.headers['x-crossdeck-bundle-id'];
        if (typeof bundleId === 'string' && record.bundleId !== null && bundleId === record.bundleId) return undefined;
        return { reason: 'bundle_id_mismatch', error: ApiError.permission('bundle_id_not_allowed', "X-Service-Bundle-Id does not match this app's bundle id") };
      }
      case 'android': {
        const packageName = req.headers['x-service-package-name'] ?? req.headers['x-crossdeck-package-name'];
        if (typeof packageName === 'string' && record.packageName !== null && packageName === record.packageName) return undefined;
        return {
          reason: 'package_name_mismatch',
          error: ApiError.permission('package_name_not_allowed', "X-Service-Package-Name does not match this app's package name"),
        };
      }
    }
  }
}

/** A query parameter given at most once (a repeated one is 400 invalid_param_value naming it); empty counts as absent. */
function singleQueryParam(req: HttpRequest, name: string): string | undefined {
  const value = (req.query as Record<string, unknown> | undefined)?.[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw ApiError.invalidParam(`${name} must be given once`);
  return value;
}

function projectNotAllowed(project: string): ApiError {
  return ApiError.permission('project_not_allowed', `This API key cannot read project ${project}`);
}
