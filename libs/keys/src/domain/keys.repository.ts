import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Env } from '../../../platform/src/index.js';
import type { AppPlatform, KeyKind } from '../auth/auth-context.js';

export interface ProjectRow {
  id: string;
  name: string;
  archivedAt: Date | null;
  createdAt: Date;
}

export interface VerifierConfig {
  logVerifierResults: boolean | null;
  verifyContractsAtBoot: boolean | null;
}

export interface AppRow {
  id: string;
  projectId: string;
  name: string;
  platform: AppPlatform;
  bundleId: string | null;
  packageName: string | null;
  allowedOrigins: string[];
  sdkMinVersion: string | null;
  sdkDeprecatedVersions: string[];
  verifierConfig: VerifierConfig;
  errorNoiseDenyList: Record<string, unknown>;
  createdAt: Date;
}

export type StoredKeyStatus = 'active' | 'rotated_out' | 'revoked';

export interface ApiKeyRow {
  id: string;
  projectId: string;
  appId: string;
  env: Env;
  kind: KeyKind;
  publishableKey: string | null;
  last4: string;
  scopes: string[];
  status: StoredKeyStatus;
  expiresAt: Date | null;
  createdAt: Date;
}

/** A key joined with what authentication needs of its app and project. */
export interface KeyAuthRecord {
  keyId: string;
  kind: KeyKind;
  env: Env;
  status: StoredKeyStatus;
  expiresAtMs: number | null;
  scopes: string[];
  secretHash: string | null;
  projectId: string;
  projectArchived: boolean;
  appId: string;
  platform: AppPlatform;
  allowedOrigins: string[];
  bundleId: string | null;
  packageName: string | null;
}

export interface NewApiKey {
  id: string;
  projectId: string;
  appId: string;
  env: Env;
  kind: KeyKind;
  publishableKey: string | null;
  secretHash: string | null;
  last4: string;
  scopes: string[];
  createdAt: Date;
  rotatedFrom?: string;
}

const APP_COLUMNS = `id, project_id AS "projectId", name, platform, bundle_id AS "bundleId", package_name AS "packageName",
  allowed_origins AS "allowedOrigins", sdk_min_version AS "sdkMinVersion", sdk_deprecated_versions AS "sdkDeprecatedVersions",
  verifier_config AS "verifierConfig", error_noise_deny_list AS "errorNoiseDenyList", created_at AS "createdAt"`;
const KEY_COLUMNS = `id, project_id AS "projectId", app_id AS "appId", env, kind, publishable_key AS "publishableKey", last4, scopes,
  status, expires_at AS "expiresAt", created_at AS "createdAt"`;

/** Projects, apps and keys: the tenancy registry (configuration, not per-environment data). */
@Injectable()
export class KeysRepository {
  constructor(private readonly dataSource: DataSource) {}

  private db(manager?: EntityManager) {
    return manager ?? this.dataSource.manager;
  }

  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  async insertProject(project: ProjectRow, manager?: EntityManager): Promise<void> {
    await this.db(manager).query(`INSERT INTO projects (id, name, archived_at, created_at) VALUES ($1, $2, $3, $4)`, [
      project.id,
      project.name,
      project.archivedAt,
      project.createdAt,
    ]);
  }

  async findProject(projectId: string, manager?: EntityManager): Promise<ProjectRow | null> {
    const rows = await this.db(manager).query(
      `SELECT id, name, archived_at AS "archivedAt", created_at AS "createdAt" FROM projects WHERE id = $1`,
      [projectId],
    );
    return rows[0] ?? null;
  }

  async anyProjectExists(manager?: EntityManager): Promise<boolean> {
    const rows = await this.db(manager).query(`SELECT 1 FROM projects LIMIT 1`);
    return rows.length > 0;
  }

  async archiveProject(projectId: string, at: Date): Promise<ProjectRow | null> {
    const rows = await this.dataSource.query(
      `UPDATE projects SET archived_at = COALESCE(archived_at, $2) WHERE id = $1
       RETURNING id, name, archived_at AS "archivedAt", created_at AS "createdAt"`,
      [projectId, at],
    );
    return rows[0]?.[0] ?? null;
  }

  async insertApp(app: AppRow, manager?: EntityManager): Promise<void> {
    await this.db(manager).query(
      `INSERT INTO apps (id, project_id, name, platform, bundle_id, package_name, allowed_origins, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $8)`,
      [app.id, app.projectId, app.name, app.platform, app.bundleId, app.packageName, JSON.stringify(app.allowedOrigins), app.createdAt],
    );
  }

  async findApp(appId: string, manager?: EntityManager): Promise<AppRow | null> {
    const rows = await this.db(manager).query(`SELECT ${APP_COLUMNS} FROM apps WHERE id = $1`, [appId]);
    return rows[0] ?? null;
  }

  async updateApp(appId: string, changes: Partial<Omit<AppRow, 'id' | 'projectId' | 'platform' | 'createdAt'>>, at: Date): Promise<AppRow | null> {
    const columns: Record<string, [string, boolean]> = {
      name: ['name', false],
      bundleId: ['bundle_id', false],
      packageName: ['package_name', false],
      allowedOrigins: ['allowed_origins', true],
      sdkMinVersion: ['sdk_min_version', false],
      sdkDeprecatedVersions: ['sdk_deprecated_versions', true],
      verifierConfig: ['verifier_config', true],
      errorNoiseDenyList: ['error_noise_deny_list', true],
    };
    const sets: string[] = [];
    const params: unknown[] = [appId, at];
    for (const [field, value] of Object.entries(changes)) {
      const column = columns[field];
      if (!column || value === undefined) continue;
      params.push(column[1] ? JSON.stringify(value) : value);
      sets.push(`${column[0]} = $${params.length}${column[1] ? '::jsonb' : ''}`);
    }
    const rows = await this.dataSource.query(
      `UPDATE apps SET updated_at = $2${sets.length ? `, ${sets.join(', ')}` : ''} WHERE id = $1 RETURNING ${APP_COLUMNS}`,
      params,
    );
    return rows[0]?.[0] ?? null;
  }

  /** Sets the allowlist only if it is still empty (first-heartbeat learning, race-free). */
  async learnOrigins(appId: string, origins: string[], at: Date): Promise<boolean> {
    const rows = await this.dataSource.query(
      `UPDATE apps SET allowed_origins = $2::jsonb, updated_at = $3 WHERE id = $1 AND allowed_origins = '[]'::jsonb RETURNING id`,
      [appId, JSON.stringify(origins), at],
    );
    return (rows[0]?.length ?? 0) > 0;
  }

  async insertKey(key: NewApiKey, manager?: EntityManager): Promise<void> {
    await this.db(manager).query(
      `INSERT INTO api_keys (id, project_id, app_id, env, kind, publishable_key, secret_hash, last4, scopes, status, rotated_from, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, 'active', $10, $11)`,
      [key.id, key.projectId, key.appId, key.env, key.kind, key.publishableKey, key.secretHash, key.last4, JSON.stringify(key.scopes), key.rotatedFrom ?? null, key.createdAt],
    );
  }

  async listKeysOfApp(appId: string, manager?: EntityManager): Promise<ApiKeyRow[]> {
    return this.db(manager).query(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE app_id = $1 ORDER BY created_at, env, kind, id`, [appId]);
  }

  async findKeyForUpdate(keyId: string, manager: EntityManager): Promise<ApiKeyRow | null> {
    const rows = await manager.query(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1 FOR UPDATE`, [keyId]);
    return rows[0] ?? null;
  }

  async markRotatedOut(keyId: string, expiresAt: Date, manager: EntityManager): Promise<void> {
    await manager.query(`UPDATE api_keys SET status = 'rotated_out', expires_at = $2 WHERE id = $1`, [keyId, expiresAt]);
  }

  async markRevoked(keyId: string, at: Date, manager: EntityManager): Promise<ApiKeyRow> {
    const rows = await manager.query(`UPDATE api_keys SET status = 'revoked', revoked_at = $2 WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [keyId, at]);
    return rows[0][0];
  }

  async recordActivity(projectId: string, keyId: string, action: 'created' | 'rotated' | 'revoked', at: Date, requestId: string | null, manager?: EntityManager): Promise<void> {
    await this.db(manager).query(`INSERT INTO key_activity (project_id, key_id, action, at, request_id) VALUES ($1, $2, $3, $4, $5)`, [
      projectId,
      keyId,
      action,
      at,
      requestId,
    ]);
  }

  async listActivity(projectId: string, limit = 500): Promise<{ keyId: string; action: string; at: Date; requestId: string | null }[]> {
    return this.dataSource.query(
      `SELECT key_id AS "keyId", action, at, request_id AS "requestId" FROM key_activity WHERE project_id = $1 ORDER BY at DESC, id DESC LIMIT $2`,
      [projectId, limit],
    );
  }

  async findAuthRecord(lookup: { publishableKey: string } | { secretHash: string }): Promise<KeyAuthRecord | null> {
    const [column, value] = 'publishableKey' in lookup ? ['publishable_key', lookup.publishableKey] : ['secret_hash', lookup.secretHash];
    const rows = await this.dataSource.query(
      `SELECT k.id AS "keyId", k.kind, k.env, k.status, k.expires_at AS "expiresAt", k.scopes, k.secret_hash AS "secretHash",
              k.project_id AS "projectId", (p.archived_at IS NOT NULL) AS "projectArchived", k.app_id AS "appId",
              a.platform, a.allowed_origins AS "allowedOrigins", a.bundle_id AS "bundleId", a.package_name AS "packageName"
       FROM api_keys k JOIN apps a ON a.id = k.app_id JOIN projects p ON p.id = k.project_id
       WHERE k.${column} = $1`,
      [value],
    );
    const row = rows[0];
    if (!row) return null;
    const { expiresAt, ...rest } = row;
    return { ...rest, expiresAtMs: expiresAt ? new Date(expiresAt).getTime() : null };
  }
}
