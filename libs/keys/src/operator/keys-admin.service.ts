import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  ApiError,
  BUCKET_NAMES,
  type BucketName,
  type BucketRule,
  Clock,
  ENVIRONMENTS,
  type Env,
} from '../../../platform/src/index.js';
import { AGGREGATE_SCOPES, type KeyKind } from '../auth/auth-context.js';
import { KeyLookupService } from '../auth/key-lookup.service.js';
import { last4, mintApiKey, newId, sha256Hex } from '../domain/api-key-format.js';
import { type ApiKeyRow, type AppRow, KeysRepository, type ProjectRow } from '../domain/keys.repository.js';
import { ProjectRateLimits, type RateLimitTable } from '../rate-limits/project-rate-limits.service.js';
import type { ApiKeyView, AppView, CreateAppDto, KeyActivityList, KeyRotationView, PatchAppDto, ProjectView } from './operator.dto.js';

export const ROTATION_GRACE_SECONDS = 7 * 24 * 60 * 60;
const KINDS: KeyKind[] = ['publishable', 'secret'];
const NON_NULLABLE_APP_FIELDS = ['name', 'allowedOrigins', 'bundleId', 'packageName', 'sdkDeprecatedVersions', 'errorNoiseDenyList'] as const;

const toSeconds = (date: Date | string) => Math.floor(new Date(date).getTime() / 1000);

/** Use cases of the operator API for projects, apps, keys and rate-limit overrides. */
@Injectable()
export class KeysAdminService {
  constructor(
    private readonly keys: KeysRepository,
    private readonly lookup: KeyLookupService,
    private readonly rateLimits: ProjectRateLimits,
    private readonly clock: Clock,
  ) {}

  async createProject(name: string): Promise<ProjectView> {
    const project: ProjectRow = { id: newId('proj'), name, archivedAt: null, createdAt: this.clock.now() };
    await this.keys.insertProject(project);
    return this.projectView(project);
  }

  async getProject(projectId: string): Promise<ProjectView> {
    return this.projectView(await this.requireProject(projectId));
  }

  async archiveProject(projectId: string): Promise<ProjectView> {
    const project = await this.keys.archiveProject(projectId, this.clock.now());
    if (!project) throw ApiError.resourceMissing(`No project ${projectId}`);
    this.lookup.invalidateAll();
    return this.projectView(project);
  }

  /** Creates the app and mints its four keys (publishable and secret, sandbox and production). */
  async createApp(projectId: string, dto: CreateAppDto, requestId: string): Promise<AppView> {
    const project = await this.requireProject(projectId);
    if (project.archivedAt) throw ApiError.invalidParam(`Project ${projectId} is archived`);
    const now = this.clock.now();
    const app: AppRow = {
      id: newId('app'),
      projectId,
      name: dto.name,
      platform: dto.platform,
      bundleId: dto.bundleId ?? null,
      packageName: dto.packageName ?? null,
      allowedOrigins: dto.allowedOrigins ?? [],
      sdkMinVersion: null,
      sdkDeprecatedVersions: [],
      verifierConfig: { logVerifierResults: null, verifyContractsAtBoot: null },
      errorNoiseDenyList: { version: 1, patterns: [] },
      createdAt: now,
    };
    const plaintexts = new Map<string, string>();
    await this.keys.transaction(async (manager) => {
      await this.keys.insertApp(app, manager);
      for (const env of ENVIRONMENTS) {
        for (const kind of KINDS) {
          const { id, plaintext } = await this.mintKey(manager, app, env, kind, kind === 'secret' ? [...AGGREGATE_SCOPES] : [], requestId);
          plaintexts.set(id, plaintext);
        }
      }
    });
    return this.appView(app, await this.keys.listKeysOfApp(app.id), plaintexts);
  }

  async getApp(appId: string): Promise<AppView> {
    const app = await this.requireApp(appId);
    return this.appView(app, await this.keys.listKeysOfApp(appId));
  }

  async patchApp(appId: string, dto: PatchAppDto): Promise<AppView> {
    // An explicit null would store SQL or JSON null where authentication and /v1/config expect
    // a value (a null allowlist broke every request of the app). Only sdkMinVersion may be
    // reset with null (back to the manifest floor); a null verifierConfig changes nothing.
    for (const field of NON_NULLABLE_APP_FIELDS) {
      if ((dto as Record<string, unknown>)[field] === null) throw ApiError.invalidParam(`${field} cannot be null`);
    }
    const current = await this.requireApp(appId);
    if (dto.bundleId !== undefined && current.platform !== 'ios') throw ApiError.invalidParam('bundleId applies to ios apps only');
    if (dto.packageName !== undefined && current.platform !== 'android') throw ApiError.invalidParam('packageName applies to android apps only');
    const verifierConfig = dto.verifierConfig
      ? {
          logVerifierResults: dto.verifierConfig.logVerifierResults ?? null,
          verifyContractsAtBoot: dto.verifierConfig.verifyContractsAtBoot ?? null,
        }
      : undefined;
    const updated = await this.keys.updateApp(
      appId,
      {
        name: dto.name,
        allowedOrigins: dto.allowedOrigins,
        bundleId: dto.bundleId,
        packageName: dto.packageName,
        sdkMinVersion: dto.sdkMinVersion,
        sdkDeprecatedVersions: dto.sdkDeprecatedVersions,
        verifierConfig,
        errorNoiseDenyList: dto.errorNoiseDenyList,
      },
      this.clock.now(),
    );
    if (!updated) throw ApiError.resourceMissing(`No app ${appId}`);
    this.lookup.invalidateAll();
    return this.appView(updated, await this.keys.listKeysOfApp(appId));
  }

  /** New key shown once; the old one stays valid for the 7-day grace window. */
  async rotateKey(keyId: string, scopes: string[] | undefined, requestId: string): Promise<KeyRotationView> {
    const result = await this.keys.transaction(async (manager) => {
      const old = await this.keys.findKeyForUpdate(keyId, manager);
      if (!old) throw ApiError.resourceMissing(`No key ${keyId}`);
      if (old.status !== 'active') throw ApiError.invalidParam(`Only an active key can be rotated; key ${keyId} is ${old.status}`);
      if (scopes !== undefined && old.kind !== 'secret') throw ApiError.invalidParam('scopes apply to secret keys only');
      const app = await this.keys.findApp(old.appId, manager);
      const expiresAt = new Date(this.clock.nowMs() + ROTATION_GRACE_SECONDS * 1000);
      await this.keys.markRotatedOut(old.id, expiresAt, manager);
      await this.keys.recordActivity(old.projectId, old.id, 'rotated', this.clock.now(), requestId, manager);
      const minted = await this.mintKey(manager, app!, old.env, old.kind, old.kind === 'secret' ? (scopes ?? old.scopes) : [], requestId, old.id);
      return { old, expiresAt, minted };
    });
    this.lookup.invalidateAll();
    const keys = await this.keys.listKeysOfApp(result.old.appId);
    const fresh = keys.find((k) => k.id === result.minted.id)!;
    return {
      object: 'key_rotation',
      key: this.keyView(fresh, result.minted.plaintext),
      rotatedOut: { id: result.old.id, status: 'rotated_out', expiresAt: toSeconds(result.expiresAt) },
    };
  }

  /** Immediate and irreversible. */
  async revokeKey(keyId: string, requestId: string): Promise<ApiKeyView> {
    const revoked = await this.keys.transaction(async (manager) => {
      const key = await this.keys.findKeyForUpdate(keyId, manager);
      if (!key) throw ApiError.resourceMissing(`No key ${keyId}`);
      if (key.status === 'revoked') return key;
      const row = await this.keys.markRevoked(keyId, this.clock.now(), manager);
      await this.keys.recordActivity(key.projectId, keyId, 'revoked', this.clock.now(), requestId, manager);
      return row;
    });
    this.lookup.invalidateAll();
    return this.keyView(revoked);
  }

  async keyActivity(projectId: string): Promise<KeyActivityList> {
    await this.requireProject(projectId);
    const rows = await this.keys.listActivity(projectId);
    return { object: 'list', data: rows.map((r) => ({ keyId: r.keyId, action: r.action, at: toSeconds(r.at), requestId: r.requestId })) };
  }

  async replaceRateLimits(projectId: string, body: Record<string, unknown>): Promise<RateLimitTable> {
    await this.requireProject(projectId);
    return this.rateLimits.replaceOverrides(projectId, parseRateLimitOverrides(body), this.clock.now());
  }

  private async mintKey(
    manager: EntityManager,
    app: AppRow,
    env: Env,
    kind: KeyKind,
    scopes: string[],
    requestId: string,
    rotatedFrom?: string,
  ): Promise<{ id: string; plaintext: string }> {
    const plaintext = mintApiKey(kind, env);
    const id = newId('key');
    await this.keys.insertKey(
      {
        id,
        projectId: app.projectId,
        appId: app.id,
        env,
        kind,
        publishableKey: kind === 'publishable' ? plaintext : null,
        secretHash: kind === 'secret' ? sha256Hex(plaintext) : null,
        last4: last4(plaintext),
        scopes,
        createdAt: this.clock.now(),
        rotatedFrom,
      },
      manager,
    );
    await this.keys.recordActivity(app.projectId, id, 'created', this.clock.now(), requestId, manager);
    return { id, plaintext };
  }

  private async requireProject(projectId: string): Promise<ProjectRow> {
    const project = await this.keys.findProject(projectId);
    if (!project) throw ApiError.resourceMissing(`No project ${projectId}`);
    return project;
  }

  private async requireApp(appId: string): Promise<AppRow> {
    const app = await this.keys.findApp(appId);
    if (!app) throw ApiError.resourceMissing(`No app ${appId}`);
    return app;
  }

  private projectView(project: ProjectRow): ProjectView {
    return { object: 'project', id: project.id, name: project.name, archived: project.archivedAt !== null, createdAt: toSeconds(project.createdAt) };
  }

  private keyView(key: ApiKeyRow, secretPlaintext?: string): ApiKeyView {
    const expired = key.status === 'rotated_out' && key.expiresAt !== null && new Date(key.expiresAt).getTime() <= this.clock.nowMs();
    const view: ApiKeyView = {
      object: 'api_key',
      id: key.id,
      appId: key.appId,
      kind: key.kind,
      env: key.env,
      last4: key.last4,
      status: expired ? 'expired' : key.status,
      createdAt: toSeconds(key.createdAt),
    };
    if (key.kind === 'publishable') view.key = key.publishableKey!;
    else {
      if (secretPlaintext) view.key = secretPlaintext;
      view.scopes = key.scopes;
    }
    if (key.expiresAt) view.expiresAt = toSeconds(key.expiresAt);
    return view;
  }

  private appView(app: AppRow, keys: ApiKeyRow[], plaintexts = new Map<string, string>()): AppView {
    return {
      object: 'app',
      id: app.id,
      projectId: app.projectId,
      name: app.name,
      platform: app.platform,
      bundleId: app.bundleId,
      packageName: app.packageName,
      allowedOrigins: app.allowedOrigins,
      sdkMinVersion: app.sdkMinVersion,
      sdkDeprecatedVersions: app.sdkDeprecatedVersions,
      verifierConfig: app.verifierConfig,
      errorNoiseDenyList: app.errorNoiseDenyList,
      createdAt: toSeconds(app.createdAt),
      keys: keys.map((k) => this.keyView(k, plaintexts.get(k.id))),
    };
  }
}

/** Validates `{ "<bucket>": { sustained, burst } }` with messages that name the field. */
export function parseRateLimitOverrides(body: Record<string, unknown>): Partial<Record<BucketName, BucketRule>> {
  const overrides: Partial<Record<BucketName, BucketRule>> = {};
  for (const [bucket, value] of Object.entries(body)) {
    if (!(BUCKET_NAMES as readonly string[]).includes(bucket)) {
      throw ApiError.invalidParam(`${bucket} is not a rate-limit bucket (expected one of ${BUCKET_NAMES.join(', ')})`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw ApiError.invalidParam(`${bucket} must be an object { sustained, burst }`);
    const { sustained, burst } = value as Record<string, unknown>;
    if (sustained === undefined) throw ApiError.missingParam(`${bucket}.sustained is required`);
    if (burst === undefined) throw ApiError.missingParam(`${bucket}.burst is required`);
    if (typeof sustained !== 'number' || !Number.isFinite(sustained) || sustained <= 0 || sustained > 1e6) {
      throw ApiError.invalidParam(`${bucket}.sustained must be a number greater than 0`);
    }
    if (typeof burst !== 'number' || !Number.isFinite(burst) || burst < 1 || burst > 1e7) {
      throw ApiError.invalidParam(`${bucket}.burst must be a number of at least 1`);
    }
    overrides[bucket as BucketName] = { sustained, burst };
  }
  return overrides;
}
