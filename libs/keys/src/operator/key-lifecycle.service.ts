import { Injectable } from '@nestjs/common';
import { ApiError, Clock, ENVIRONMENTS, type Env, Sql } from '#platform';
import { AGGREGATE_SCOPES, type KeyKind } from '../auth/auth-context.js';
import { KeyLookupService } from '../auth/key-lookup.service.js';
import { last4, mintApiKey, newId, sha256Hex } from '../domain/api-key-format.js';
import { KeysRepository } from '../domain/keys.repository.js';
import { type AppRow, ProjectsRepository } from '../domain/projects.repository.js';
import { keyView, toSeconds } from './keys-admin.views.js';
import type { ApiKeyView, KeyActivityList, KeyRotationView } from './operator.dto.js';

export const ROTATION_GRACE_SECONDS = 7 * 24 * 60 * 60;
const KINDS: KeyKind[] = ['publishable', 'secret'];

/** Use cases of the operator API for the life of API keys: minting, rotation, revocation, activity. */
@Injectable()
export class KeyLifecycleService {
  constructor(
    private readonly keys: KeysRepository,
    private readonly projects: ProjectsRepository,
    private readonly lookup: KeyLookupService,
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  /** Mints a new app's four keys (publishable and secret, sandbox and production) in the caller's transaction; returns their plaintexts by key id. */
  async mintAppKeys(app: AppRow, requestId: string): Promise<Map<string, string>> {
    const plaintexts = new Map<string, string>();
    for (const env of ENVIRONMENTS) {
      for (const kind of KINDS) {
        const { id, plaintext } = await this.mintKey(app, env, kind, kind === 'secret' ? [...AGGREGATE_SCOPES] : [], requestId);
        plaintexts.set(id, plaintext);
      }
    }
    return plaintexts;
  }

  /** New key shown once; the old one stays valid for the 7-day grace window. */
  async rotateKey(keyId: string, scopes: string[] | undefined, requestId: string): Promise<KeyRotationView> {
    const result = await this.sql.transaction(async () => {
      const old = await this.keys.findKeyForUpdate(keyId);
      if (!old) throw ApiError.resourceMissing(`No key ${keyId}`);
      if (old.status !== 'active') throw ApiError.invalidParam(`Only an active key can be rotated; key ${keyId} is ${old.status}`);
      if (scopes !== undefined && old.kind !== 'secret') throw ApiError.invalidParam('scopes apply to secret keys only');
      const app = await this.projects.findApp(old.appId);
      const expiresAt = new Date(this.clock.nowMs() + ROTATION_GRACE_SECONDS * 1000);
      await this.keys.markRotatedOut(old.id, expiresAt);
      await this.keys.recordActivity(old.projectId, old.id, 'rotated', this.clock.now(), requestId);
      const minted = await this.mintKey(app!, old.env, old.kind, old.kind === 'secret' ? (scopes ?? old.scopes) : [], requestId, old.id);
      return { old, expiresAt, minted };
    });
    this.lookup.invalidateAll();
    const keys = await this.keys.listKeysOfApp(result.old.appId);
    const fresh = keys.find((k) => k.id === result.minted.id)!;
    return {
      object: 'key_rotation',
      key: keyView(fresh, this.clock.nowMs(), result.minted.plaintext),
      rotatedOut: { id: result.old.id, status: 'rotated_out', expiresAt: toSeconds(result.expiresAt) },
    };
  }

  /** Immediate and irreversible. */
  async revokeKey(keyId: string, requestId: string): Promise<ApiKeyView> {
    const revoked = await this.sql.transaction(async () => {
      const key = await this.keys.findKeyForUpdate(keyId);
      if (!key) throw ApiError.resourceMissing(`No key ${keyId}`);
      if (key.status === 'revoked') return key;
      const row = await this.keys.markRevoked(keyId, this.clock.now());
      await this.keys.recordActivity(key.projectId, keyId, 'revoked', this.clock.now(), requestId);
      return row;
    });
    this.lookup.invalidateAll();
    return keyView(revoked, this.clock.nowMs());
  }

  async keyActivity(projectId: string): Promise<KeyActivityList> {
    if (!(await this.projects.findProject(projectId))) throw ApiError.resourceMissing(`No project ${projectId}`);
    const rows = await this.keys.listActivity(projectId);
    return { object: 'list', data: rows.map((r) => ({ keyId: r.keyId, action: r.action, at: toSeconds(r.at), requestId: r.requestId })) };
  }

  private async mintKey(
    app: AppRow,
    env: Env,
    kind: KeyKind,
    scopes: string[],
    requestId: string,
    rotatedFrom?: string,
  ): Promise<{ id: string; plaintext: string }> {
    const plaintext = mintApiKey(kind, env);
    const id = newId('key');
    await this.keys.insertKey({
      id,
      projectId: app.projectId,
      appId: app.id,
      env,
      kind,
      publishableKey: kind === 'publishable' ? plaintext : null,
      secretHash: kind === 'secret' ? sha256Hex(plaintext) : null,
      last4: last4(plaintext),
      scopes,
      createdAt: this.clock.now(),
      rotatedFrom,
    });
    await this.keys.recordActivity(app.projectId, id, 'created', this.clock.now(), requestId);
    return { id, plaintext };
  }
}
