import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Env, TenantScope } from '../../../platform/src/index.js';

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
  return { customerId: row.customer_id, env: row.env, status: row.status, queuedAt: new Date(row.queued_at), deletedAt: row.deleted_at ? new Date(row.deleted_at) : null };
}

/** The erasure queue (one row per forgotten customer). */
@Injectable()
export class ErasureStore {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  async find(scope: TenantScope, customerId: string, manager?: EntityManager): Promise<ErasureRecord | null> {
    const rows: ErasureRow[] = await (manager ?? this.dataSource.manager).query(
      `SELECT customer_id, env, status, queued_at, deleted_at FROM erasures WHERE project_id = $1 AND env = $2 AND customer_id = $3`,
      [scope.projectId, scope.env, customerId],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async queue(
    scope: TenantScope,
    erasure: { customerId: string; subject: { userIds: string[]; anonymousIds: string[] }; requestId: string | null },
    at: Date,
    manager: EntityManager,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO erasures (project_id, env, customer_id, status, subject, request_id, queued_at)
       VALUES ($1, $2, $3, 'queued', $4::jsonb, $5, $6)
       ON CONFLICT (project_id, env, customer_id) DO NOTHING`,
      [scope.projectId, scope.env, erasure.customerId, JSON.stringify(erasure.subject), erasure.requestId, at],
    );
  }

  /** Operator listing, newest first; both environments when env is absent. */
  async list(projectId: string, env: Env | undefined, limit = 500): Promise<ErasureRecord[]> {
    const rows: ErasureRow[] = await this.dataSource.query(
      `SELECT customer_id, env, status, queued_at, deleted_at FROM erasures
        WHERE project_id = $1 AND ($2::text IS NULL OR env = $2)
        ORDER BY queued_at DESC, customer_id
        LIMIT $3`,
      [projectId, env ?? null, limit],
    );
    return rows.map(toRecord);
  }
}
