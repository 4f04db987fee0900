import { Injectable } from '@nestjs/common';
import { Sql } from '#platform';
import type { PurchaseRail } from '../model/rail-model.js';

export interface RailConnectionCheck {
  rail: PurchaseRail;
  env: 'sandbox' | 'production';
  checkedAtMs: number;
  ok: boolean;
  message: string;
  lastWorkedAtMs: number | null;
}

interface CheckRow {
  rail: PurchaseRail;
  env: 'sandbox' | 'production';
  checked_at_ms: string;
  ok: boolean;
  message: string;
  last_worked_at_ms: string | null;
}

const toCheck = (r: CheckRow): RailConnectionCheck => ({
  rail: r.rail,
  env: r.env,
  checkedAtMs: Number(r.checked_at_ms),
  ok: r.ok,
  message: r.message,
  lastWorkedAtMs: r.last_worked_at_ms === null ? null : Number(r.last_worked_at_ms),
});

/** SQL of rail_connection_checks (a project's scope: credentials are per project). */
@Injectable()
export class RailConnectionChecksRepository {
  constructor(private readonly sql: Sql) {}

  /** Stores the outcome of a test; a failure keeps the time the credentials last worked. */
  async record(project: { projectId: string }, check: Omit<RailConnectionCheck, 'lastWorkedAtMs'>): Promise<RailConnectionCheck> {
    const row = await this.sql.one<CheckRow>(
      `INSERT INTO rail_connection_checks AS c (project_id, rail, env, checked_at_ms, ok, message, last_worked_at_ms)
       VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $5 THEN $4::bigint END)
       ON CONFLICT (project_id, rail) DO UPDATE
          SET env = EXCLUDED.env, checked_at_ms = EXCLUDED.checked_at_ms, ok = EXCLUDED.ok, message = EXCLUDED.message,
              last_worked_at_ms = CASE WHEN EXCLUDED.ok THEN EXCLUDED.checked_at_ms ELSE c.last_worked_at_ms END
       RETURNING rail, env, checked_at_ms, ok, message, last_worked_at_ms`,
      [project.projectId, check.rail, check.env, check.checkedAtMs, check.ok, check.message.slice(0, 500)],
    );
    return toCheck(row as CheckRow);
  }

  async list(project: { projectId: string }): Promise<RailConnectionCheck[]> {
    const rows = await this.sql.rows<CheckRow>(
      `SELECT rail, env, checked_at_ms, ok, message, last_worked_at_ms FROM rail_connection_checks WHERE project_id = $1`,
      [project.projectId],
    );
    return rows.map(toCheck);
  }
}
