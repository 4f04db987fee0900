import { Sql } from '#platform';
import { Injectable } from '@nestjs/common';
import type { PurchaseRail } from './rail-model.js';

/** The operator's non-secret settings of one rail of a project. */
export interface RailSettingsRecord<T extends object = Record<string, unknown>> {
  rail: PurchaseRail;
  settings: T;
  enabled: boolean;
  /** Counts changes (caches key on it). */
  version: number;
  /** Unix ms. */
  updatedAtMs: number;
}

interface SettingsRow {
  rail: PurchaseRail;
  settings: Record<string, unknown>;
  enabled: boolean;
  version: number;
  updated_at: Date;
}

function toRecord<T extends object>(row: SettingsRow): RailSettingsRecord<T> {
  return { rail: row.rail, settings: row.settings as T, enabled: row.enabled, version: Number(row.version), updatedAtMs: new Date(row.updated_at).getTime() };
}

/**
 * SQL of rail_settings. Rail settings are a project's (the operator API configures rails per
 * project; both environments verify against the same settings), so the scope is the project.
 */
@Injectable()
export class RailSettingsRepository {
  constructor(private readonly sql: Sql) {}

  async find<T extends object = Record<string, unknown>>(project: { projectId: string }, rail: PurchaseRail): Promise<RailSettingsRecord<T> | null> {
    const rows: SettingsRow[] = await this.sql.rows(
      `SELECT rail, settings, enabled, version, updated_at FROM rail_settings WHERE project_id = $1 AND rail = $2`,
      [project.projectId, rail],
    );
    return rows[0] ? toRecord<T>(rows[0]) : null;
  }

  /**
   * The rail's settings when the project exists and is not archived (store webhooks: an
   * archived project is answered as an unknown one).
   */
  async findOfLiveProject<T extends object = Record<string, unknown>>(
    project: { projectId: string },
    rail: PurchaseRail,
  ): Promise<RailSettingsRecord<T> | null> {
    const rows: SettingsRow[] = await this.sql.rows(
      `SELECT s.rail, s.settings, s.enabled, s.version, s.updated_at
         FROM rail_settings s JOIN projects p ON p.id = s.project_id
        WHERE s.project_id = $1 AND s.rail = $2 AND p.archived_at IS NULL`,
      [project.projectId, rail],
    );
    return rows[0] ? toRecord<T>(rows[0]) : null;
  }

  async list(project: { projectId: string }): Promise<RailSettingsRecord[]> {
    const rows: SettingsRow[] = await this.sql.rows(
      `SELECT rail, settings, enabled, version, updated_at FROM rail_settings WHERE project_id = $1 ORDER BY rail`,
      [project.projectId],
    );
    return rows.map((row) => toRecord(row));
  }

  /** Replaces the settings of a rail (enabling it); bumps the version. */
  async put(project: { projectId: string }, rail: PurchaseRail, settings: object, now: Date): Promise<RailSettingsRecord> {
    const rows: SettingsRow[] = await this.sql.rows(
      `INSERT INTO rail_settings (project_id, rail, settings, enabled, version, updated_at)
       VALUES ($1, $2, $3::jsonb, true, 1, $4)
       ON CONFLICT ON CONSTRAINT rail_settings_pk DO UPDATE
          SET settings = EXCLUDED.settings, enabled = true, version = rail_settings.version + 1, updated_at = EXCLUDED.updated_at
       RETURNING rail, settings, enabled, version, updated_at`,
      [project.projectId, rail, JSON.stringify(settings), now],
    );
    return toRecord(rows[0]);
  }
}
