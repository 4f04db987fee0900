import { Injectable } from '@nestjs/common';
import { Clock } from '#platform';
import { CatalogRepository, type KeyRegistrar } from './catalog.repository.js';

export type { KeyRegistrar } from './catalog.repository.js';

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
    private readonly clock: Clock,
    private readonly catalog: CatalogRepository,
  ) {}

  /** Registers the keys in the caller's transaction (idempotent, safe under concurrency); returns the keys this call registered. */
  async register(projectId: string, keys: readonly string[], registeredBy: KeyRegistrar): Promise<string[]> {
    // Sorted: concurrent registrations of overlapping key sets lock rows in one order (no deadlock).
    const unique = [...new Set(keys)].sort();
    if (unique.length === 0) return [];
    return this.catalog.registerKeys(projectId, unique, registeredBy, this.clock.now());
  }

  async list(projectId: string): Promise<RegisteredKey[]> {
    const rows = await this.catalog.listKeys(projectId);
    return rows.map((row) => ({ key: row.key, registeredBy: row.registeredBy, createdAt: Math.floor(new Date(row.createdAt).getTime() / 1000) }));
  }
}
