import { Injectable } from '@nestjs/common';
import { Sql } from '#platform';
import type { AppPlatform } from '../auth/auth-context.js';

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

const APP_COLUMNS = `id, project_id AS "projectId", name, platform, bundle_id AS "bundleId", package_name AS "packageName",
  allowed_origins AS "allowedOrigins", sdk_min_version AS "sdkMinVersion", sdk_deprecated_versions AS "sdkDeprecatedVersions",
  verifier_config AS "verifierConfig", error_noise_deny_list AS "errorNoiseDenyList", created_at AS "createdAt"`;

/** Projects and apps: the tenancy registry (configuration, not per-environment data). */
@Injectable()
export class ProjectsRepository {
  constructor(private readonly sql: Sql) {}

  async insertProject(project: ProjectRow): Promise<void> {
    await this.sql.rows(`INSERT INTO projects (id, name, archived_at, created_at) VALUES ($1, $2, $3, $4)`, [
      project.id,
      project.name,
      project.archivedAt,
      project.createdAt,
    ]);
  }

  async findProject(projectId: string): Promise<ProjectRow | null> {
    const rows = await this.sql.rows<ProjectRow>(`SELECT id, name, archived_at AS "archivedAt", created_at AS "createdAt" FROM projects WHERE id = $1`, [
      projectId,
    ]);
    return rows[0] ?? null;
  }

  /** Projects newest first, `limit` rows after the cursor project (created_at, id) when given. */
  async listProjects(limit: number, startingAfter: ProjectRow | null): Promise<ProjectRow[]> {
    return this.sql.rows<ProjectRow>(
      `SELECT id, name, archived_at AS "archivedAt", created_at AS "createdAt" FROM projects
        WHERE $1::timestamptz IS NULL OR (created_at, id) < ($1::timestamptz, $2::text)
        ORDER BY created_at DESC, id DESC LIMIT $3`,
      [startingAfter?.createdAt ?? null, startingAfter?.id ?? null, limit],
    );
  }

  /** The project's apps, oldest first (apps_project_idx). */
  async listAppsOfProject(projectId: string, limit: number): Promise<AppRow[]> {
    return this.sql.rows<AppRow>(`SELECT ${APP_COLUMNS} FROM apps WHERE project_id = $1 ORDER BY created_at, id LIMIT $2`, [projectId, limit]);
  }

  /** Whether the project exists; with `lock`, holds its row (FOR NO KEY UPDATE) until the transaction ends. */
  async projectExists(projectId: string, lock: boolean): Promise<boolean> {
    const row = await this.sql.one(`SELECT id FROM projects WHERE id = $1${lock ? ' FOR NO KEY UPDATE' : ''}`, [projectId]);
    return row !== null;
  }

  async anyProjectExists(): Promise<boolean> {
    const rows = await this.sql.rows(`SELECT 1 FROM projects LIMIT 1`);
    return rows.length > 0;
  }

  async archiveProject(projectId: string, at: Date): Promise<ProjectRow | null> {
    const rows = await this.sql.rows<ProjectRow>(
      `UPDATE projects SET archived_at = COALESCE(archived_at, $2) WHERE id = $1
       RETURNING id, name, archived_at AS "archivedAt", created_at AS "createdAt"`,
      [projectId, at],
    );
    return rows[0] ?? null;
  }

  async insertApp(app: AppRow): Promise<void> {
    await this.sql.rows(
      `INSERT INTO apps (id, project_id, name, platform, bundle_id, package_name, allowed_origins, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $8)`,
      [app.id, app.projectId, app.name, app.platform, app.bundleId, app.packageName, JSON.stringify(app.allowedOrigins), app.createdAt],
    );
  }

  async findApp(appId: string): Promise<AppRow | null> {
    const rows = await this.sql.rows<AppRow>(`SELECT ${APP_COLUMNS} FROM apps WHERE id = $1`, [appId]);
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
    const rows = await this.sql.rows<AppRow>(
      `UPDATE apps SET updated_at = $2${sets.length ? `, ${sets.join(', ')}` : ''} WHERE id = $1 RETURNING ${APP_COLUMNS}`,
      params,
    );
    return rows[0] ?? null;
  }

  /** Sets the allowlist only if it is still empty (first-heartbeat learning, race-free). */
  async learnOrigins(appId: string, origins: string[], at: Date): Promise<boolean> {
    const rows = await this.sql.rows(
      `UPDATE apps SET allowed_origins = $2::jsonb, updated_at = $3 WHERE id = $1 AND allowed_origins = '[]'::jsonb RETURNING id`,
      [appId, JSON.stringify(origins), at],
    );
    return rows.length > 0;
  }
}
