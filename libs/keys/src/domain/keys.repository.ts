import { Injectable } from '@nestjs/common';
import { type Env, Sql } from '#platform';
import type { AppPlatform, KeyKind } from '../auth/auth-context.js';

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

const KEY_COLUMNS = `id, project_id AS "projectId", app_id AS "appId", env, kind, publishable_key AS "publishableKey", last4, scopes,
  status, expires_at AS "expiresAt", created_at AS "createdAt"`;

/** API keys and their activity (the keys of the tenancy registry; projects and apps are ProjectsRepository's). */
@Injectable()
export class KeysRepository {
  constructor(private readonly sql: Sql) {}

  async insertKey(key: NewApiKey): Promise<void> {
    await this.sql.rows(
      `INSERT INTO api_keys (id, project_id, app_id, env, kind, publishable_key, secret_hash, last4, scopes, status, rotated_from, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, 'active', $10, $11)`,
      [
        key.id,
        key.projectId,
        key.appId,
        key.env,
        key.kind,
        key.publishableKey,
        key.secretHash,
        key.last4,
        JSON.stringify(key.scopes),
        key.rotatedFrom ?? null,
        key.createdAt,
      ],
    );
  }

  async listKeysOfApp(appId: string): Promise<ApiKeyRow[]> {
    return this.sql.rows<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE app_id = $1 ORDER BY created_at, env, kind, id`, [appId]);
  }

  /** Keys of several apps of one project (api_keys_app_idx). */
  async listKeysOfApps(projectId: string, appIds: readonly string[]): Promise<ApiKeyRow[]> {
    if (appIds.length === 0) return [];
    return this.sql.rows<ApiKeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE app_id = ANY($2::text[]) AND project_id = $1 ORDER BY created_at, env, kind, id`,
      [projectId, appIds],
    );
  }

  async findKeyForUpdate(keyId: string): Promise<ApiKeyRow | null> {
    const rows = await this.sql.rows<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1 FOR UPDATE`, [keyId]);
    return rows[0] ?? null;
  }

  async markRotatedOut(keyId: string, expiresAt: Date): Promise<void> {
    await this.sql.rows(`UPDATE api_keys SET status = 'rotated_out', expires_at = $2 WHERE id = $1`, [keyId, expiresAt]);
  }

  async markRevoked(keyId: string, at: Date): Promise<ApiKeyRow> {
    const rows = await this.sql.rows<ApiKeyRow>(`UPDATE api_keys SET status = 'revoked', revoked_at = $2 WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [keyId, at]);
    return rows[0];
  }

  async recordActivity(projectId: string, keyId: string, action: 'created' | 'rotated' | 'revoked', at: Date, requestId: string | null): Promise<void> {
    await this.sql.rows(`INSERT INTO key_activity (project_id, key_id, action, at, request_id) VALUES ($1, $2, $3, $4, $5)`, [
      projectId,
      keyId,
      action,
      at,
      requestId,
    ]);
  }

  async listActivity(projectId: string, limit = 500): Promise<{ keyId: string; action: string; at: Date; requestId: string | null }[]> {
    return this.sql.rows<{ keyId: string; action: string; at: Date; requestId: string | null }>(
      `SELECT key_id AS "keyId", action, at, request_id AS "requestId" FROM key_activity WHERE project_id = $1 ORDER BY at DESC, id DESC LIMIT $2`,
      [projectId, limit],
    );
  }

  async findAuthRecord(lookup: { publishableKey: string } | { secretHash: string }): Promise<KeyAuthRecord | null> {
    const [column, value] = 'publishableKey' in lookup ? ['publishable_key', lookup.publishableKey] : ['secret_hash', lookup.secretHash];
    const rows = await this.sql.rows<Omit<KeyAuthRecord, 'expiresAtMs'> & { expiresAt: Date | null }>(
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
