import { Injectable } from '@nestjs/common';
import { Clock } from '#platform';
import { WORKSPACE_KEY_SCOPES } from '../auth/auth-context.js';
import { KeyLookupService } from '../auth/key-lookup.service.js';
import { last4, mintWorkspaceKey, newId, sha256Hex } from '../domain/api-key-format.js';
import { WorkspacesRepository } from './workspaces.repository.js';

export interface WorkspaceSummary {
  id: string;
  name: string;
}

/**
 * Workspace keys for other contexts (the console's connector sign-in mints its access tokens
 * here): the same keys the operator API mints, hash-only, listed and revocable there too.
 */
@Injectable()
export class WorkspaceKeyIssuer {
  constructor(
    private readonly workspaces: WorkspacesRepository,
    private readonly lookup: KeyLookupService,
    private readonly clock: Clock,
  ) {}

  /** The workspaces a consent may pick from (newest first, the 500 newest). */
  async listWorkspaces(): Promise<WorkspaceSummary[]> {
    return (await this.workspaces.listWorkspaces(500)).map(({ id, name }) => ({ id, name }));
  }

  async workspaceExists(workspaceId: string): Promise<boolean> {
    return (await this.workspaces.findWorkspace(workspaceId)) !== null;
  }

  /** A new key of the workspace with these scopes (unknown ones dropped), valid `lifetimeS` seconds; its plaintext is returned once. */
  async mint(workspaceId: string, scopes: readonly string[], name: string, lifetimeS: number): Promise<{ id: string; key: string }> {
    const key = mintWorkspaceKey();
    const id = newId('key');
    await this.workspaces.insertKey({
      id,
      workspaceId,
      name,
      last4: last4(key),
      scopes: [...new Set(scopes.filter((scope) => WORKSPACE_KEY_SCOPES.includes(scope)))],
      status: 'active',
      createdAt: this.clock.now(),
      expiresAt: new Date(this.clock.nowMs() + lifetimeS * 1000),
      secretHash: sha256Hex(key),
    });
    return { id, key };
  }

  /** The id of the workspace key with this plaintext, if any. */
  async idOf(key: string): Promise<string | null> {
    return (await this.workspaces.findKeyByHash(sha256Hex(key)))?.id ?? null;
  }

  /** Revokes keys at once on this replica (others within the key cache's TTL). */
  async revoke(keyIds: readonly string[]): Promise<void> {
    await this.workspaces.revokeKeys(keyIds, this.clock.now());
    this.lookup.invalidateAll();
  }

  /** Drops this replica's cached keys: after a transaction that revoked some commits (a read in between may have cached them as active). */
  forgetCachedKeys(): void {
    this.lookup.invalidateAll();
  }
}
