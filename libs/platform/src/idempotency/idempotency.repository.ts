import { Injectable } from '@nestjs/common';
import { Sql } from '../database/sql.js';
import type { CrossTenant, TenantScope } from '../tenancy/tenant-scope.js';

export interface StoredAnswer {
  bodyHash: string;
  statusCode: number;
  response: unknown;
  expiresAtMs: number;
}

interface StoredRow {
  body_hash: string;
  status_code: number | null;
  response: unknown;
  expires_at_ms: string;
}

/** Stored first answers of idempotent requests, keyed by (project, env, endpoint, key). */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly sql: Sql) {}

  async find(scope: TenantScope, endpoint: string, key: string): Promise<StoredAnswer | null> {
    const row = await this.sql.one<StoredRow>(
      `SELECT body_hash, status_code, response, expires_at_ms FROM idempotency_keys
        WHERE project_id = $1 AND env = $2 AND endpoint = $3 AND idempotency_key = $4 AND status_code IS NOT NULL`,
      [scope.projectId, scope.env, endpoint, key],
    );
    return row ? { bodyHash: row.body_hash, statusCode: Number(row.status_code), response: row.response, expiresAtMs: Number(row.expires_at_ms) } : null;
  }

  /**
   * Claims the key in the ambient transaction: inserts a pending row, or takes over an expired
   * one. A concurrent claim of the same key waits here until the first transaction ends
   * (within the transaction's lock_timeout). False when a live row already exists.
   */
  async claim(scope: TenantScope, endpoint: string, key: string, bodyHash: string, nowMs: number, expiresAtMs: number): Promise<boolean> {
    const claimed = await this.sql.rows(
      `INSERT INTO idempotency_keys (project_id, env, endpoint, idempotency_key, body_hash, created_at_ms, expires_at_ms)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (project_id, env, endpoint, idempotency_key) DO UPDATE
          SET body_hash = EXCLUDED.body_hash, status_code = NULL, response = NULL,
              created_at_ms = EXCLUDED.created_at_ms, expires_at_ms = EXCLUDED.expires_at_ms
        WHERE idempotency_keys.expires_at_ms <= $6
       RETURNING 1 AS claimed`,
      [scope.projectId, scope.env, endpoint, key, bodyHash, nowMs, expiresAtMs],
    );
    return claimed.length > 0;
  }

  /** Stores the answer on the claimed row (same transaction as the handler's writes). */
  async complete(scope: TenantScope, endpoint: string, key: string, statusCode: number, response: unknown): Promise<void> {
    await this.sql.affected(
      `UPDATE idempotency_keys SET status_code = $5, response = $6::json
        WHERE project_id = $1 AND env = $2 AND endpoint = $3 AND idempotency_key = $4`,
      [scope.projectId, scope.env, endpoint, key, statusCode, JSON.stringify(response)],
    );
  }

  /** Bounds the wait for a concurrent claim of the same key (SET LOCAL: this transaction only). */
  async limitLockWait(ms: number): Promise<void> {
    await this.sql.run(`SELECT set_config('lock_timeout', $1, true)`, [`${Math.max(1, Math.floor(ms))}ms`]);
  }

  /** Deletes expired answers across tenants, in batches; returns how many. */
  async purgeExpired(_scan: CrossTenant, nowMs: number, batch = 5_000): Promise<number> {
    return this.sql.affected(`DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at_ms <= $1 LIMIT $2)`, [
      nowMs,
      batch,
    ]);
  }
}
