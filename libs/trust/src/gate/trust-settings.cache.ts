import { Injectable } from '@nestjs/common';
import type { TrustSettings } from './trust-rules.js';
import { TrustSettingsRepository } from './trust-settings.repository.js';

/** Within this long of its last check a cached entry is used as it is: the bound on staleness across replicas. */
export const TRUST_SETTINGS_FRESH_MS = 1_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  settings: TrustSettings;
  version: number;
  checkedAt: number;
}

/**
 * The trust settings per project, cached in memory. A replace clears this replica's entry at
 * once; another replica sees it within TRUST_SETTINGS_FRESH_MS: past that an entry is
 * checked by its version (one primary-key read) and reloaded only when it changed, so a
 * resolve no longer reads the block lists.
 */
@Injectable()
export class TrustSettingsCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly repository: TrustSettingsRepository) {}

  async get(projectId: string): Promise<TrustSettings> {
    const now = performance.now();
    const entry = this.entries.get(projectId);
    if (entry && now - entry.checkedAt < TRUST_SETTINGS_FRESH_MS) return entry.settings;
    const version = await this.repository.version(projectId);
    if (entry && entry.version === version) {
      entry.checkedAt = now;
      return entry.settings;
    }
    // Loaded after the version was read: a replace in between leaves a newer version in the
    // table than the one kept here, and the next check reloads.
    const settings = await this.repository.load(projectId);
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(projectId, { settings, version, checkedAt: now });
    return settings;
  }

  invalidate(projectId: string): void {
    this.entries.delete(projectId);
  }
}
