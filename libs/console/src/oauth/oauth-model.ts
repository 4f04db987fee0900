import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { AuthorizationCode, AuthorizationCodeModel, Client, RefreshToken, RefreshTokenModel, Token } from '@node-oauth/oauth2-server';
import { Clock } from '#platform';
import { WORKSPACE_KEY_SCOPES, WorkspaceKeyIssuer } from '#keys';
import { OauthRepository } from './oauth.repository.js';

export const CODE_LIFETIME_S = 60;
export const ACCESS_TOKEN_LIFETIME_S = 3600;
export const REFRESH_TOKEN_LIFETIME_S = 30 * 86_400;

/** What a grant is about: the consented workspace and the family of refresh tokens it started. */
export interface GrantUser {
  workspaceId: string;
  familyId: string;
  /** On a refresh: the workspace key the rotated token was issued with (revoked once the new one is saved). */
  previousAccessKeyId?: string | null;
}

export const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');
const randomToken = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;

/**
 * The storage hooks of @node-oauth/oauth2-server (the library runs the protocol: PKCE S256,
 * redirect URI matching, code and refresh grants, the token response). Codes and refresh
 * tokens are kept as SHA-256; access tokens are workspace keys minted by the keys context.
 * Expiry is judged by the service clock here (the library's own checks use the wall clock
 * and come after, given wall-clock bounds of the same length).
 */
@Injectable()
export class OauthModel implements AuthorizationCodeModel, RefreshTokenModel {
  constructor(
    private readonly repo: OauthRepository,
    private readonly issuer: WorkspaceKeyIssuer,
    private readonly clock: Clock,
  ) {}

  async getClient(clientId: string): Promise<Client | null> {
    const row = await this.repo.findClient(clientId);
    return row ? { id: row.id, name: row.name, redirectUris: row.redirectUris, grants: ['authorization_code', 'refresh_token'] } : null;
  }

  validateRedirectUri(redirectUri: string, client: Client): Promise<boolean> {
    return Promise.resolve(((client.redirectUris as string[] | undefined) ?? []).includes(redirectUri));
  }

  /** Known workspace-key scopes only; none left is `invalid_scope`. */
  validateScope(_user: unknown, _client: Client, scope?: string[]): Promise<string[] | false> {
    const known = [...new Set((scope ?? []).filter((s) => WORKSPACE_KEY_SCOPES.includes(s)))];
    return Promise.resolve(known.length > 0 ? known : false);
  }

  verifyScope(): Promise<boolean> {
    return Promise.resolve(false);
  }

  getAccessToken(): Promise<Token | null> {
    // Access tokens are workspace keys: the keys context authenticates them, never this library.
    return Promise.resolve(null);
  }

  generateAuthorizationCode(): Promise<string> {
    return Promise.resolve(randomBytes(32).toString('base64url'));
  }

  async saveAuthorizationCode(
    code: Pick<AuthorizationCode, 'authorizationCode' | 'expiresAt' | 'redirectUri' | 'scope' | 'codeChallenge' | 'codeChallengeMethod'>,
    client: Client,
    user: GrantUser,
  ): Promise<AuthorizationCode> {
    const expiresAt = new Date(this.clock.nowMs() + CODE_LIFETIME_S * 1000);
    await this.repo.insertCode(sha256Hex(code.authorizationCode), {
      clientId: client.id,
      workspaceId: user.workspaceId,
      scopes: code.scope ?? [],
      redirectUri: code.redirectUri,
      codeChallenge: code.codeChallenge ?? '',
      challengeMethod: 'S256',
      expiresAt,
    });
    return { ...code, expiresAt, client, user };
  }

  /**
   * Used once: the lookup marks it used, so a second exchange (or a replay) finds nothing, and
   * a replay revokes the tokens the first exchange got (OAuth 2.1 section 4.1.3). Runs in the
   * token request's transaction: a replay racing the first exchange waits for the code's row.
   */
  async getAuthorizationCode(authorizationCode: string): Promise<AuthorizationCode | null> {
    const codeHash = sha256Hex(authorizationCode);
    const familyId = `fam_${randomBytes(12).toString('hex')}`;
    const row = await this.repo.consumeCode(codeHash, this.clock.now(), familyId);
    if (!row) {
      const spent = await this.repo.familyOfUsedCode(codeHash);
      if (spent) await this.revokeFamily(spent);
      return null;
    }
    if (new Date(row.expiresAt).getTime() <= this.clock.nowMs()) return null;
    const user: GrantUser = { workspaceId: row.workspaceId, familyId };
    return {
      authorizationCode,
      expiresAt: new Date(this.clock.wallNowMs() + CODE_LIFETIME_S * 1000),
      redirectUri: row.redirectUri,
      scope: row.scopes,
      client: { id: row.clientId, grants: ['authorization_code'] },
      user,
      codeChallenge: row.codeChallenge,
      codeChallengeMethod: row.challengeMethod,
    };
  }

  revokeAuthorizationCode(): Promise<boolean> {
    return Promise.resolve(true);
  }

  async generateAccessToken(client: Client, user: GrantUser, scope: string[]): Promise<string> {
    const name = `OAuth: ${String(client.name ?? client.id)}`.slice(0, 100);
    return (await this.issuer.mint(user.workspaceId, scope, name, ACCESS_TOKEN_LIFETIME_S)).key;
  }

  generateRefreshToken(): Promise<string> {
    return Promise.resolve(randomToken('cd_rt_'));
  }

  async saveToken(token: Token, client: Client, user: GrantUser): Promise<Token> {
    const accessKeyId = await this.issuer.idOf(token.accessToken);
    if (token.refreshToken) {
      await this.repo.insertRefreshToken(
        sha256Hex(token.refreshToken),
        {
          familyId: user.familyId,
          clientId: client.id,
          workspaceId: user.workspaceId,
          scopes: token.scope ?? [],
          accessKeyId,
          status: 'active',
          expiresAt: new Date(this.clock.nowMs() + REFRESH_TOKEN_LIFETIME_S * 1000),
        },
        this.clock.now(),
      );
    }
    // One live access token per grant: the one the rotated refresh token came with ends now.
    if (user.previousAccessKeyId) await this.issuer.revoke([user.previousAccessKeyId]);
    return { ...token, client, user: { workspaceId: user.workspaceId, familyId: user.familyId } };
  }

  /**
   * A token used before (rotated or revoked) is a replay: the whole family and its keys are
   * revoked. Runs in the token request's transaction holding the family's lock, so of two
   * uses of one token exactly one rotates it and the other, waiting, finds it rotated and
   * revokes the family with the tokens the first one saved.
   */
  async getRefreshToken(refreshToken: string): Promise<RefreshToken | null> {
    const tokenHash = sha256Hex(refreshToken);
    const found = await this.repo.findRefreshToken(tokenHash);
    if (!found) return null;
    await this.repo.lockFamily(found.familyId);
    const row = (await this.repo.findRefreshToken(tokenHash))!;
    if (row.status !== 'active') {
      await this.revokeFamily(row.familyId);
      return null;
    }
    if (new Date(row.expiresAt).getTime() <= this.clock.nowMs()) return null;
    const user: GrantUser = { workspaceId: row.workspaceId, familyId: row.familyId, previousAccessKeyId: row.accessKeyId };
    return {
      refreshToken,
      refreshTokenExpiresAt: new Date(this.clock.wallNowMs() + REFRESH_TOKEN_LIFETIME_S * 1000),
      scope: row.scopes,
      client: { id: row.clientId, grants: [] },
      user,
    };
  }

  /** Rotation: retires the token; losing a race to another use of it counts as a replay. */
  async revokeToken(token: RefreshToken): Promise<boolean> {
    if (await this.repo.rotateRefreshToken(sha256Hex(token.refreshToken))) return true;
    await this.revokeFamily((token.user as GrantUser).familyId);
    return false;
  }

  /** Revokes a family's refresh tokens and keys, after the rotations in flight on it (the caller's transaction holds the lock). */
  async revokeFamily(familyId: string): Promise<void> {
    await this.repo.lockFamily(familyId);
    await this.issuer.revoke(await this.repo.revokeFamily(familyId));
  }
}
