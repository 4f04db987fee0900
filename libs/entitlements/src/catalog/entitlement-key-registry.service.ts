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

/** (project, key) pairs remembered as registered at most; beyond it the oldest are forgotten (and registered again, a no-op). */
const MAX_KNOWN_KEYS = 50_000;

/**
 * The project's entitlement-key registry (per project, both environments). A key is
 * registered by the first of grant, migration or catalogue that names it; later mentions
 * keep the first registration.
 *
 * A registered key is never removed, so the process remembers the keys it found registered by
 * a committed transaction (its insert met the existing row) and sends no statement for them
 * again: every manual grant names its key, nearly always one registered long before. A key
 * this call inserted is not remembered, since its transaction may still roll back; the next
 * mention registers it again and finds it. That reading of a conflict holds because each caller
 * registers a transaction's keys in one call (a grant, a catalogue replacement, a migration
 * request): a key met twice in one transaction would be taken for a committed one.
 */
@Injectable()
export class EntitlementKeyRegistry {
  private readonly known = new Set<string>();

  constructor(
    private readonly clock: Clock,
    private readonly catalog: CatalogRepository,
  ) {}

  /** Registers the keys in the caller's transaction (idempotent, safe under concurrency); returns the keys this call registered. */
  async register(projectId: string, keys: readonly string[], registeredBy: KeyRegistrar): Promise<string[]> {
    // Sorted: concurrent registrations of overlapping key sets lock rows in one order (no deadlock).
    const unique = [...new Set(keys)].filter((key) => !this.known.has(knownKey(projectId, key))).sort();
    if (unique.length === 0) return [];
    const registered = await this.catalog.registerKeys(projectId, unique, registeredBy, this.clock.now());
    // The others conflicted with a row a committed transaction wrote (an insert in flight is waited for).
    const inserted = new Set(registered);
    for (const key of unique) if (!inserted.has(key)) this.remember(knownKey(projectId, key));
    return registered;
  }

  private remember(entry: string): void {
    if (this.known.size >= MAX_KNOWN_KEYS) this.known.delete(this.known.values().next().value as string);
    this.known.add(entry);
  }

  async list(projectId: string): Promise<RegisteredKey[]> {
    const rows = await this.catalog.listKeys(projectId);
    return rows.map((row) => ({ key: row.key, registeredBy: row.registeredBy, createdAt: Math.floor(new Date(row.createdAt).getTime() / 1000) }));
  }
}

const knownKey = (projectId: string, key: string): string => `${projectId}\u0000${key}`;
