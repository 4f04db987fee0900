import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { Clock } from '../../../platform/src/index.js';

export type KeyRegistrar = 'grant' | 'migration' | 'catalog';

export interface RegisteredKey {
  key: string;
  registeredBy: KeyRegistrar;
  /** Unix seconds. */
  createdAt: number;
}

/**
 * The project's entitlement-key registry (per project, both environments). A key is
 * registered by the first of grant, migration or catalogue that names it; later mentions
 * keep the first registration.
 */
@Injectable()
export class EntitlementKeyRegistry {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  /** Registers the keys in the caller's transaction (idempotent, safe under concurrency). */
  async register(projectId: string, keys: readonly string[], registeredBy: KeyRegistrar, manager: EntityManager = this.dataSource.manager): Promise<void> {
    // Sorted: concurrent registrations of overlapping key sets lock rows in one order (no deadlock).
    const unique = [...new Set(keys)].sort();
    if (unique.length === 0) return;
    await manager.query(
      `INSERT INTO entitlement_keys (project_id, key, registered_by, created_at)
       SELECT $1, k, $3, $4 FROM unnest($2::text[]) AS k
       ON CONFLICT (project_id, key) DO NOTHING`,
      [projectId, unique, registeredBy, this.clock.now()],
    );
  }

  async list(projectId: string): Promise<RegisteredKey[]> {
    const rows: { key: string; registered_by: KeyRegistrar; created_at: Date }[] = await this.dataSource.query(
      `SELECT key, registered_by, created_at FROM entitlement_keys WHERE project_id = $1 ORDER BY created_at, key`,
      [projectId],
    );
    return rows.map((row) => ({ key: row.key, registeredBy: row.registered_by, createdAt: Math.floor(new Date(row.created_at).getTime() / 1000) }));
  }
}
