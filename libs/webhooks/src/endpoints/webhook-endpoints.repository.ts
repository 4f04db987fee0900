import { Injectable } from '@nestjs/common';
import { type CrossTenant, Sql, type TenantScope } from '#platform';
import type { EndpointStatus } from '../domain/webhook-rules.js';

export interface EndpointRecord {
  id: string;
  projectId: string;
  env: 'sandbox' | 'production';
  url: string;
  eventTypes: string[];
  description: string | null;
  status: EndpointStatus;
  secretVersion: number;
  previousSecretExpiresMs: number | null;
  failingSinceMs: number | null;
  createdAtMs: number;
}

const COLUMNS = `id, project_id AS "projectId", env, url, event_types AS "eventTypes", description, status,
  secret_version AS "secretVersion", previous_secret_expires_ms::float8 AS "previousSecretExpiresMs",
  failing_since_ms::float8 AS "failingSinceMs", created_at_ms::float8 AS "createdAtMs"`;

export interface EndpointPatch {
  url?: string;
  eventTypes?: string[];
  description?: string | null;
  status?: 'enabled' | 'disabled';
}

/** Webhook endpoints. Reads by id are cross-tenant lookups (the operator path names only the id); rows carry their scope. */
@Injectable()
export class WebhookEndpointsRepository {
  constructor(private readonly sql: Sql) {}

  /** Whether the project exists (`projects` belongs to the keys context; read-only here). */
  async projectExists(projectId: string): Promise<boolean> {
    return (await this.sql.one(`SELECT 1 AS one FROM projects WHERE id = $1`, [projectId])) !== null;
  }

  /** Inserts when the scope has fewer than `max` endpoints (the scope's rows are locked meanwhile); null when full. */
  async insertBounded(
    scope: TenantScope,
    endpoint: { id: string; url: string; eventTypes: string[]; description: string | null },
    max: number,
    nowMs: number,
  ): Promise<EndpointRecord | null> {
    await this.sql.rows(`SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || $1 || ':' || $2, 0))`, [scope.projectId, scope.env]);
    const count = await this.sql.one<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_endpoints WHERE project_id = $1 AND env = $2`, [
      scope.projectId,
      scope.env,
    ]);
    if ((count?.n ?? 0) >= max) return null;
    return this.sql.one<EndpointRecord>(
      `INSERT INTO webhook_endpoints (id, project_id, env, url, event_types, description, status, created_at_ms, updated_at_ms)
       VALUES ($3, $1, $2, $4, $5::text[], $6, 'enabled', $7, $7) RETURNING ${COLUMNS}`,
      [scope.projectId, scope.env, endpoint.id, endpoint.url, endpoint.eventTypes, endpoint.description, nowMs],
    );
  }

  list(scope: TenantScope): Promise<EndpointRecord[]> {
    return this.sql.rows<EndpointRecord>(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE project_id = $1 AND env = $2 ORDER BY created_at_ms, id`, [
      scope.projectId,
      scope.env,
    ]);
  }

  listProject(_lookup: CrossTenant, projectId: string): Promise<EndpointRecord[]> {
    return this.sql.rows<EndpointRecord>(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE project_id = $1 ORDER BY created_at_ms, id`, [projectId]);
  }

  find(_lookup: CrossTenant, id: string): Promise<EndpointRecord | null> {
    return this.sql.one<EndpointRecord>(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1`, [id]);
  }

  findMany(_lookup: CrossTenant, ids: readonly string[]): Promise<EndpointRecord[]> {
    return this.sql.rows<EndpointRecord>(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = ANY($1::text[])`, [ids]);
  }

  async patch(scope: TenantScope, id: string, patch: EndpointPatch, nowMs: number): Promise<EndpointRecord | null> {
    return this.sql.one<EndpointRecord>(
      `UPDATE webhook_endpoints
          SET url = COALESCE($4, url), event_types = COALESCE($5::text[], event_types),
              description = CASE WHEN $6::boolean THEN $7 ELSE description END,
              status = COALESCE($8, status), failing_since_ms = CASE WHEN $8 = 'enabled' THEN NULL ELSE failing_since_ms END,
              updated_at_ms = $9
        WHERE project_id = $1 AND env = $2 AND id = $3 RETURNING ${COLUMNS}`,
      [
        scope.projectId,
        scope.env,
        id,
        patch.url ?? null,
        patch.eventTypes ?? null,
        patch.description !== undefined,
        patch.description ?? null,
        patch.status ?? null,
        nowMs,
      ],
    );
  }

  async rotate(scope: TenantScope, id: string, previousExpiresMs: number, nowMs: number): Promise<EndpointRecord | null> {
    return this.sql.one<EndpointRecord>(
      `UPDATE webhook_endpoints SET secret_version = secret_version + 1, previous_secret_expires_ms = $4, updated_at_ms = $5
        WHERE project_id = $1 AND env = $2 AND id = $3 RETURNING ${COLUMNS}`,
      [scope.projectId, scope.env, id, previousExpiresMs, nowMs],
    );
  }

  async delete(scope: TenantScope, id: string): Promise<boolean> {
    return (await this.sql.affected(`DELETE FROM webhook_endpoints WHERE project_id = $1 AND env = $2 AND id = $3`, [scope.projectId, scope.env, id])) === 1;
  }
}
