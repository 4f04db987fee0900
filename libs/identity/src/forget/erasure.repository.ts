import { Injectable } from '@nestjs/common';
import { type Env, Sql, type TenantScope } from '#platform';
import { PERSONAL_ALIAS_TYPES } from '../domain/identifier-rules.js';

export interface ErasureRecord {
  customerId: string;
  env: Env;
  status: 'queued' | 'deleted';
  queuedAt: Date;
  deletedAt: Date | null;
}

interface ErasureRow {
  customer_id: string;
  env: Env;
  status: 'queued' | 'deleted';
  queued_at: Date;
  deleted_at: Date | null;
}

function toRecord(row: ErasureRow): ErasureRecord {
  return {
    customerId: row.customer_id,
    env: row.env,
    status: row.status,
    queuedAt: new Date(row.queued_at),
    deletedAt: row.deleted_at ? new Date(row.deleted_at) : null,
  };
}

/** The erasure queue (one row per forgotten customer) and the statements that erase a customer. */
@Injectable()
export class ErasureRepository {
  constructor(private readonly sql: Sql) {}

  async find(scope: TenantScope, customerId: string): Promise<ErasureRecord | null> {
    const rows = await this.sql.rows<ErasureRow>(
      `SELECT customer_id, env, status, queued_at, deleted_at FROM erasures WHERE project_id = $1 AND env = $2 AND customer_id = $3`,
      [scope.projectId, scope.env, customerId],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async queue(
    scope: TenantScope,
    erasure: { customerId: string; subject: { userIds: string[]; anonymousIds: string[] }; requestId: string | null },
    at: Date,
  ): Promise<void> {
    await this.sql.run(
      `INSERT INTO erasures (project_id, env, customer_id, status, subject, request_id, queued_at)
       VALUES ($1, $2, $3, 'queued', $4::jsonb, $5, $6)
       ON CONFLICT (project_id, env, customer_id) DO NOTHING`,
      [scope.projectId, scope.env, erasure.customerId, JSON.stringify(erasure.subject), erasure.requestId, at],
    );
  }

  /** Operator listing, newest first; both environments when env is absent. */
  async list(projectId: string, env: Env | undefined, limit = 500): Promise<ErasureRecord[]> {
    const rows = await this.sql.rows<ErasureRow>(
      `SELECT customer_id, env, status, queued_at, deleted_at FROM erasures
        WHERE project_id = $1 AND ($2::text IS NULL OR env = $2)
        ORDER BY queued_at DESC, customer_id
        LIMIT $3`,
      [projectId, env ?? null, limit],
    );
    return rows.map(toRecord);
  }

  /** A queued erasure, or null when it is done or unknown. */
  async findQueued(
    scope: TenantScope,
    customerId: string,
  ): Promise<{ subject: { userIds?: string[]; anonymousIds?: string[] } | null; queuedAt: Date } | null> {
    const row = await this.sql.one<{ subject: { userIds?: string[]; anonymousIds?: string[] } | null; queued_at: Date }>(
      `SELECT subject, queued_at FROM erasures WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND status = 'queued'`,
      [scope.projectId, scope.env, customerId],
    );
    return row ? { subject: row.subject, queuedAt: new Date(row.queued_at) } : null;
  }

  /** The personal alias nodes (developer and anonymous ids) the customer still holds. */
  personalAliasNodes(scope: TenantScope, customerId: string): Promise<{ type: string; value: string }[]> {
    return this.sql.rows(`SELECT type, value FROM customer_aliases WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND type = ANY($4::text[])`, [
      scope.projectId,
      scope.env,
      customerId,
      PERSONAL_ALIAS_TYPES,
    ]);
  }

  /** Deletes personal aliases, merge reviews and profile data; keeps the id, rail aliases and records. */
  async erasePersonalData(scope: TenantScope, customerId: string, at: Date): Promise<void> {
    const params = [scope.projectId, scope.env, customerId];
    await this.sql.run(`DELETE FROM customer_aliases WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND type = ANY($4::text[])`, [
      ...params,
      PERSONAL_ALIAS_TYPES,
    ]);
    await this.sql.run(`DELETE FROM merge_reviews WHERE project_id = $1 AND env = $2 AND (canonical_customer_id = $3 OR other_customer_id = $3)`, params);
    await this.sql.run(
      `UPDATE customers SET email = NULL, first_name = NULL, traits = '{}'::jsonb, updated_at = $4 WHERE project_id = $1 AND env = $2 AND id = $3`,
      [...params, at],
    );
    await this.sql.run(
      `UPDATE erasures SET status = 'deleted', deleted_at = $4, subject = NULL, last_error = NULL WHERE project_id = $1 AND env = $2 AND customer_id = $3`,
      [...params, at],
    );
  }

  /** Counts a failed attempt (after its transaction rolled back). */
  async recordFailure(scope: TenantScope, customerId: string, error: string): Promise<void> {
    await this.sql.run(
      `UPDATE erasures SET attempts = attempts + 1, last_error = $4 WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND status = 'queued'`,
      [scope.projectId, scope.env, customerId, error.slice(0, 500)],
    );
  }
}
