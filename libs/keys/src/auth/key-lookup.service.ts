import { Inject, Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { APP_CONFIG, type AppConfig } from '#platform';
import { sha256Hex } from '../domain/api-key-format.js';
import { type KeyAuthRecord, KeysRepository } from '../domain/keys.repository.js';
import type { KeyKind } from './auth-context.js';
import { WorkspacesRepository } from '../workspaces/workspaces.repository.js';

/** A workspace key with its workspace's projects, as authentication needs it. */
export interface WorkspaceKeyRecord {
  keyId: string;
  workspaceId: string;
  status: 'active' | 'revoked';
  /** Null: never expires. */
  expiresAtMs: number | null;
  scopes: string[];
  secretHash: string;
  projectIds: string[];
}

/**
 * How long a replica may serve a key from memory by default (KEY_CACHE_TTL_MS). A revocation,
 * rotation, archive or app change clears this replica's cache at once; other replicas see it
 * within this bound.
 */
export const KEY_CACHE_TTL_MS = 5_000;
const MAX_ENTRIES = 50_000;

interface CacheEntry {
  record: KeyAuthRecord | null;
  expiresAt: number;
}

/** Key lookups on the hot path: an index hit, then a few seconds in memory (misses too). */
@Injectable()
export class KeyLookupService {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly workspaceCache = new Map<string, { record: WorkspaceKeyRecord | null; expiresAt: number }>();

  private readonly ttlMs: number;

  constructor(
    private readonly keys: KeysRepository,
    private readonly workspaces: WorkspacesRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.ttlMs = config.keyCacheTtlMs;
  }

  /** `secretHash`: the secret key's sha256Hex when the caller has it already (one hash per request, not two). */
  async find(kind: KeyKind, presentedKey: string, secretHash?: string): Promise<KeyAuthRecord | null> {
    // Secret keys are only ever handled as their hash, also as cache keys.
    const cacheKey = kind === 'secret' ? `sk:${secretHash ?? sha256Hex(presentedKey)}` : `pub:${presentedKey}`;
    const now = performance.now();
    const cached = this.cache.get(cacheKey);
    if (cached && cached.expiresAt > now) return cached.record;
    const record =
      kind === 'secret' ? await this.keys.findAuthRecord({ secretHash: cacheKey.slice(3) }) : await this.keys.findAuthRecord({ publishableKey: presentedKey });
    if (this.cache.size >= MAX_ENTRIES) this.cache.clear();
    this.cache.set(cacheKey, { record, expiresAt: now + this.ttlMs });
    return record;
  }

  /** A workspace key by its hash, with its workspace's projects; cached like the app keys. */
  async findWorkspaceKey(presentedKey: string): Promise<WorkspaceKeyRecord | null> {
    const secretHash = sha256Hex(presentedKey);
    const now = performance.now();
    const cached = this.workspaceCache.get(secretHash);
    if (cached && cached.expiresAt > now) return cached.record;
    const row = await this.workspaces.findKeyByHash(secretHash);
    const record: WorkspaceKeyRecord | null = row
      ? {
          keyId: row.id,
          workspaceId: row.workspaceId,
          status: row.status,
          expiresAtMs: row.expiresAt ? new Date(row.expiresAt).getTime() : null,
          scopes: row.scopes,
          secretHash: row.secretHash,
          projectIds: await this.workspaces.readableProjectIds(row.workspaceId),
        }
      : null;
    if (this.workspaceCache.size >= MAX_ENTRIES) this.workspaceCache.clear();
    this.workspaceCache.set(secretHash, { record, expiresAt: now + this.ttlMs });
    return record;
  }

  /** Called on every operator change that affects authentication. */
  invalidateAll(): void {
    this.cache.clear();
    this.workspaceCache.clear();
  }
}
