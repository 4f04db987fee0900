import { Injectable } from '@nestjs/common';
import { Sql } from '#platform';

export interface OauthClientRow {
  id: string;
  name: string;
  redirectUris: string[];
  applicationType: 'native' | 'web';
  createdAt: Date;
}

export interface OauthCodeRow {
  clientId: string;
  workspaceId: string;
  scopes: string[];
  redirectUri: string;
  codeChallenge: string;
  challengeMethod: 'S256';
  expiresAt: Date;
}

export interface RefreshTokenRow {
  familyId: string;
  clientId: string;
  workspaceId: string;
  scopes: string[];
  accessKeyId: string | null;
  status: 'active' | 'rotated' | 'revoked';
  expiresAt: Date;
}

/**
 * OAuth clients, codes and refresh tokens. Operator-level data above the tenants (a grant
 * names a workspace, which spans projects): methods take the client, code or family they act on.
 */
@Injectable()
export class OauthRepository {
  constructor(private readonly sql: Sql) {}

  async insertClient(row: OauthClientRow): Promise<void> {
    await this.sql.run(`INSERT INTO oauth_clients (id, name, redirect_uris, application_type, created_at) VALUES ($1, $2, $3::jsonb, $4, $5)`, [
      row.id,
      row.name,
      JSON.stringify(row.redirectUris),
      row.applicationType,
      row.createdAt,
    ]);
  }

  async findClient(clientId: string): Promise<OauthClientRow | null> {
    return this.sql.one<OauthClientRow>(
      `SELECT id, name, redirect_uris AS "redirectUris", application_type AS "applicationType", created_at AS "createdAt" FROM oauth_clients WHERE id = $1`,
      [clientId],
    );
  }

  async insertCode(codeHash: string, row: OauthCodeRow): Promise<void> {
    await this.sql.run(
      `INSERT INTO oauth_codes (code_hash, client_id, workspace_id, scopes, redirect_uri, code_challenge, challenge_method, expires_at)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8)`,
      [codeHash, row.clientId, row.workspaceId, JSON.stringify(row.scopes), row.redirectUri, row.codeChallenge, row.challengeMethod, row.expiresAt],
    );
  }

  /**
   * Marks the code used and returns it, once, recording the family its tokens start: a second
   * exchange finds nothing (and `familyOfUsedCode` names what to revoke).
   */
  async consumeCode(codeHash: string, at: Date, familyId: string): Promise<OauthCodeRow | null> {
    return this.sql.one<OauthCodeRow>(
      `UPDATE oauth_codes SET used_at = $2, family_id = $3 WHERE code_hash = $1 AND used_at IS NULL
       RETURNING client_id AS "clientId", workspace_id AS "workspaceId", scopes, redirect_uri AS "redirectUri",
                 code_challenge AS "codeChallenge", challenge_method AS "challengeMethod", expires_at AS "expiresAt"`,
      [codeHash, at, familyId],
    );
  }

  /** The family of tokens a code already used was exchanged for (null: unknown code, or used before families were recorded). */
  async familyOfUsedCode(codeHash: string): Promise<string | null> {
    const row = await this.sql.one<{ familyId: string | null }>(
      `SELECT family_id AS "familyId" FROM oauth_codes WHERE code_hash = $1 AND used_at IS NOT NULL`,
      [codeHash],
    );
    return row?.familyId ?? null;
  }

  /**
   * Serialises every change to one family until the transaction ends (rotation, reuse,
   * revocation), so a revocation sees the tokens a concurrent rotation saves.
   */
  async lockFamily(familyId: string): Promise<void> {
    await this.sql.rows(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`oauth_family|${familyId}`]);
  }

  async insertRefreshToken(tokenHash: string, row: RefreshTokenRow, at: Date): Promise<void> {
    await this.sql.run(
      `INSERT INTO oauth_refresh_tokens (token_hash, family_id, client_id, workspace_id, scopes, access_key_id, status, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9)`,
      [tokenHash, row.familyId, row.clientId, row.workspaceId, JSON.stringify(row.scopes), row.accessKeyId, row.status, at, row.expiresAt],
    );
  }

  async findRefreshToken(tokenHash: string): Promise<RefreshTokenRow | null> {
    return this.sql.one<RefreshTokenRow>(
      `SELECT family_id AS "familyId", client_id AS "clientId", workspace_id AS "workspaceId", scopes, access_key_id AS "accessKeyId", status, expires_at AS "expiresAt"
         FROM oauth_refresh_tokens WHERE token_hash = $1`,
      [tokenHash],
    );
  }

  /** Retires an active token (rotation); false when it was not active (already used or revoked). */
  async rotateRefreshToken(tokenHash: string): Promise<boolean> {
    const row = await this.sql.one<{ familyId: string }>(
      `UPDATE oauth_refresh_tokens SET status = 'rotated' WHERE token_hash = $1 AND status = 'active' RETURNING family_id AS "familyId"`,
      [tokenHash],
    );
    return row !== null;
  }

  /** Revokes every refresh token of a family; returns the workspace keys its tokens were issued with. */
  async revokeFamily(familyId: string): Promise<string[]> {
    const rows = await this.sql.rows<{ accessKeyId: string | null }>(
      `UPDATE oauth_refresh_tokens SET status = 'revoked' WHERE family_id = $1 RETURNING access_key_id AS "accessKeyId"`,
      [familyId],
    );
    return rows.map((r) => r.accessKeyId).filter((id): id is string => id !== null);
  }

  /** The family whose tokens were issued with this workspace key, if any. */
  async familyOfAccessKey(accessKeyId: string): Promise<string | null> {
    const row = await this.sql.one<{ familyId: string }>(`SELECT family_id AS "familyId" FROM oauth_refresh_tokens WHERE access_key_id = $1 LIMIT 1`, [
      accessKeyId,
    ]);
    return row?.familyId ?? null;
  }
}
