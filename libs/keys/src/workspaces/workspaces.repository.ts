import { Injectable } from '@nestjs/common';
import { Sql } from '#platform';
import type { AppPlatform } from '../auth/auth-context.js';

export interface WorkspaceRow {
  id: string;
  name: string;
  createdAt: Date;
}

export interface WorkspaceKeyRow {
  id: string;
  workspaceId: string;
  name: string | null;
  last4: string;
  scopes: string[];
  status: 'active' | 'revoked';
  createdAt: Date;
  /** Null: never expires (keys the operator mints). */
  expiresAt?: Date | null;
}

export interface WorkspaceProjectRow {
  id: string;
  name: string;
  platforms: AppPlatform[];
}

export interface WorkspaceAppRow {
  appId: string;
  projectId: string;
  platform: AppPlatform;
  allowedOrigins: string[];
  publishableKeyLive: string | null;
  publishableKeyTest: string | null;
}

const KEY_COLUMNS = `id, workspace_id AS "workspaceId", name, last4, scopes, status, created_at AS "createdAt", expires_at AS "expiresAt"`;

/**
 * Workspaces, their projects and their keys. Operator settings above the tenants: a workspace
 * spans projects, so methods take the workspace id (and the project ids it names).
 */
@Injectable()
export class WorkspacesRepository {
  constructor(private readonly sql: Sql) {}

  async insertWorkspace(row: WorkspaceRow): Promise<void> {
    await this.sql.run(`INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)`, [row.id, row.name, row.createdAt]);
  }

  async findWorkspace(workspaceId: string): Promise<WorkspaceRow | null> {
    return this.sql.one<WorkspaceRow>(`SELECT id, name, created_at AS "createdAt" FROM workspaces WHERE id = $1`, [workspaceId]);
  }

  /** Workspaces newest first with their project ids. */
  async listWorkspaces(limit: number): Promise<(WorkspaceRow & { projects: string[] })[]> {
    return this.sql.rows<WorkspaceRow & { projects: string[] }>(
      `SELECT w.id, w.name, w.created_at AS "createdAt",
              COALESCE((SELECT array_agg(p.project_id ORDER BY p.added_at, p.project_id) FROM workspace_projects p WHERE p.workspace_id = w.id), '{}') AS projects
         FROM workspaces w ORDER BY w.created_at DESC, w.id DESC LIMIT $1`,
      [limit],
    );
  }

  /** The workspace's keys (never their hashes), newest first. */
  async listKeys(workspaceId: string, limit: number): Promise<WorkspaceKeyRow[]> {
    return this.sql.rows<WorkspaceKeyRow>(`SELECT ${KEY_COLUMNS} FROM workspace_keys WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`, [
      workspaceId,
      limit,
    ]);
  }

  async projectIds(workspaceId: string): Promise<string[]> {
    const rows = await this.sql.rows<{ projectId: string }>(
      `SELECT project_id AS "projectId" FROM workspace_projects WHERE workspace_id = $1 ORDER BY added_at, project_id`,
      [workspaceId],
    );
    return rows.map((r) => r.projectId);
  }

  /** Idempotent: adding a project twice keeps the first time. */
  async addProject(projectId: string, workspaceId: string, at: Date): Promise<void> {
    await this.sql.run(`INSERT INTO workspace_projects (workspace_id, project_id, added_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
      workspaceId,
      projectId,
      at,
    ]);
  }

  /** The workspace's projects its keys may read: those not archived (an archived project is out of every key's reach). */
  async readableProjectIds(workspaceId: string): Promise<string[]> {
    const rows = await this.sql.rows<{ projectId: string }>(
      `SELECT w.project_id AS "projectId" FROM workspace_projects w JOIN projects p ON p.id = w.project_id
        WHERE w.workspace_id = $1 AND p.archived_at IS NULL ORDER BY w.added_at, w.project_id`,
      [workspaceId],
    );
    return rows.map((r) => r.projectId);
  }

  /** Whether the workspace holds the project and it is not archived. */
  async hasProject(projectId: string, workspaceId: string): Promise<boolean> {
    return (
      (await this.sql.one(
        `SELECT 1 FROM workspace_projects w JOIN projects p ON p.id = w.project_id WHERE w.workspace_id = $1 AND w.project_id = $2 AND p.archived_at IS NULL`,
        [workspaceId, projectId],
      )) !== null
    );
  }

  /** The workspace's projects that are not archived, with the platforms of their apps. */
  async listProjects(workspaceId: string, onlyProjectId?: string): Promise<WorkspaceProjectRow[]> {
    return this.sql.rows<WorkspaceProjectRow>(
      `SELECT p.id, p.name,
              COALESCE(array_agg(DISTINCT a.platform ORDER BY a.platform) FILTER (WHERE a.id IS NOT NULL), '{}') AS platforms
         FROM workspace_projects w JOIN projects p ON p.id = w.project_id LEFT JOIN apps a ON a.project_id = p.id
        WHERE w.workspace_id = $1 AND p.archived_at IS NULL AND ($2::text IS NULL OR p.id = $2)
        GROUP BY p.id, p.name, w.added_at ORDER BY w.added_at, p.id`,
      [workspaceId, onlyProjectId ?? null],
    );
  }

  /** One project with the platforms of its apps (a secret key's own project). */
  async describeProject(projectId: string): Promise<WorkspaceProjectRow | null> {
    return this.sql.one<WorkspaceProjectRow>(
      `SELECT p.id, p.name,
              COALESCE(array_agg(DISTINCT a.platform ORDER BY a.platform) FILTER (WHERE a.id IS NOT NULL), '{}') AS platforms
         FROM projects p LEFT JOIN apps a ON a.project_id = p.id WHERE p.id = $1 GROUP BY p.id, p.name`,
      [projectId],
    );
  }

  /** Apps of the given projects with their active publishable keys. */
  async listApps(projectIds: readonly string[]): Promise<WorkspaceAppRow[]> {
    if (projectIds.length === 0) return [];
    return this.sql.rows<WorkspaceAppRow>(
      `SELECT a.id AS "appId", a.project_id AS "projectId", a.platform, a.allowed_origins AS "allowedOrigins",
              (SELECT k.publishable_key FROM api_keys k WHERE k.app_id = a.id AND k.kind = 'publishable' AND k.env = 'production' AND k.status = 'active' LIMIT 1) AS "publishableKeyLive",
              (SELECT k.publishable_key FROM api_keys k WHERE k.app_id = a.id AND k.kind = 'publishable' AND k.env = 'sandbox' AND k.status = 'active' LIMIT 1) AS "publishableKeyTest"
         FROM apps a WHERE a.project_id = ANY($1::text[]) ORDER BY a.created_at, a.id`,
      [projectIds],
    );
  }

  async insertKey(row: WorkspaceKeyRow & { secretHash: string }): Promise<void> {
    await this.sql.run(
      `INSERT INTO workspace_keys (id, workspace_id, name, secret_hash, last4, scopes, status, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6::jsonb, 'active', $7, $8)`,
      [row.id, row.workspaceId, row.name, row.secretHash, row.last4, JSON.stringify(row.scopes), row.createdAt, row.expiresAt ?? null],
    );
  }

  async revokeKey(keyId: string, at: Date): Promise<WorkspaceKeyRow | null> {
    return this.sql.one<WorkspaceKeyRow>(
      `UPDATE workspace_keys SET status = 'revoked', revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING ${KEY_COLUMNS}`,
      [keyId, at],
    );
  }

  async findKeyByHash(secretHash: string): Promise<(WorkspaceKeyRow & { secretHash: string }) | null> {
    return this.sql.one<WorkspaceKeyRow & { secretHash: string }>(
      `SELECT ${KEY_COLUMNS}, secret_hash AS "secretHash" FROM workspace_keys WHERE secret_hash = $1`,
      [secretHash],
    );
  }

  async revokeKeys(keyIds: readonly string[], at: Date): Promise<void> {
    if (keyIds.length === 0) return;
    await this.sql.run(`UPDATE workspace_keys SET status = 'revoked', revoked_at = COALESCE(revoked_at, $2) WHERE id = ANY($1::text[])`, [keyIds, at]);
  }
}
