import { performance } from 'node:perf_hooks';
import { Inject, Injectable } from '@nestjs/common';
import { createLocalJWKSet, createRemoteJWKSet, type JWTVerifyGetKey, jwtVerify } from 'jose';
import { APP_CONFIG, APP_LOGGER, type AppConfig, type AppLogger, Clock } from '#platform';
import { type IdentityProviderConfig, IdentityProviderRepository } from './identity-provider.repository.js';
import { jwksFetchOptions } from './jwks-uri-policy.js';

/** What a verified idToken tells us. */
export interface VerifiedIdentity {
  sub: string;
  email?: string;
  givenName?: string;
}

/** Asymmetric algorithms only: a shared-secret (HS*) token could be forged by anyone holding the secret. */
export const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
const MAX_TOKEN_LENGTH = 16 * 1024;
const PROVIDER_CACHE_TTL_MS = 30_000;
const CLOCK_TOLERANCE_SECONDS = 5;

interface CachedProvider {
  provider: IdentityProviderConfig | null;
  keys: JWTVerifyGetKey | null;
  expiresAt: number;
}

/**
 * Verifies identity-provider tokens (JWT) against the project's provider: signature (inline
 * JWKS, or a JWKS URI fetched and cached by jose), `iss`, `aud`, `exp`/`nbf` against the
 * service clock (so the test clock applies). Never throws on a bad token: returns null.
 */
@Injectable()
export class IdTokenVerifier {
  private readonly providers = new Map<string, CachedProvider>();
  private readonly remoteSets = new Map<string, JWTVerifyGetKey>();

  constructor(
    private readonly store: IdentityProviderRepository,
    private readonly clock: Clock,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The verified claims, or null when the token is malformed, unsigned by the provider, expired, or the project has no provider. */
  async verify(projectId: string, token: string): Promise<VerifiedIdentity | null> {
    if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null;
    const { provider, keys } = await this.providerOf(projectId);
    if (!provider || !keys) return null;
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: provider.issuer,
        audience: provider.audience,
        algorithms: ID_TOKEN_ALGORITHMS,
        currentDate: this.clock.now(),
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'exp'],
      });
      if (typeof payload.sub !== 'string' || payload.sub.length === 0) return null;
      const identity: VerifiedIdentity = { sub: payload.sub };
      if (typeof payload.email === 'string' && payload.email.length > 0 && payload.email.length <= 320) identity.email = payload.email;
      if (typeof payload.given_name === 'string' && payload.given_name.length > 0 && payload.given_name.length <= 256) identity.givenName = payload.given_name;
      return identity;
    } catch (err) {
      const code = (err as { code?: string }).code ?? (err as Error).name;
      // Infrastructure trouble (JWKS unreachable) is worth a warning; a bad token is not.
      if (code === 'ERR_JWKS_TIMEOUT' || code === 'ERR_JOSE_GENERIC' || code === 'TypeError') {
        this.logger.warn({ projectId, code }, 'idToken verification could not reach the identity provider keys');
      }
      return null;
    }
  }

  /** Verified and its subject is `userId`. */
  async verifyFor(projectId: string, token: string, userId: string): Promise<VerifiedIdentity | null> {
    const identity = await this.verify(projectId, token);
    return identity && identity.sub === userId ? identity : null;
  }

  /** Drops this replica's cached provider (others pick the change up within 30 s). */
  invalidate(projectId: string): void {
    this.providers.delete(projectId);
  }

  private async providerOf(projectId: string): Promise<CachedProvider> {
    const now = performance.now();
    const cached = this.providers.get(projectId);
    if (cached && cached.expiresAt > now) return cached;
    const provider = await this.store.find(projectId);
    let keys: JWTVerifyGetKey | null = null;
    if (provider?.jwks) {
      try {
        keys = createLocalJWKSet(provider.jwks as Parameters<typeof createLocalJWKSet>[0]);
      } catch {
        keys = null;
      }
    } else if (provider?.jwksUri) {
      keys = this.remoteSet(provider.jwksUri);
    }
    const entry = { provider, keys, expiresAt: now + PROVIDER_CACHE_TTL_MS };
    if (this.providers.size > 10_000) this.providers.clear();
    this.providers.set(projectId, entry);
    return entry;
  }

  private remoteSet(uri: string): JWTVerifyGetKey {
    let set = this.remoteSets.get(uri);
    if (!set) {
      set = createRemoteJWKSet(new URL(uri), {
        timeoutDuration: 5_000,
        cooldownDuration: 30_000,
        cacheMaxAge: 10 * 60_000,
        // https and public addresses only, checked on the connection itself (jwks-uri-policy.ts).
        ...jwksFetchOptions(this.config.jwksAllowPrivate),
      });
      if (this.remoteSets.size > 1_000) this.remoteSets.clear();
      this.remoteSets.set(uri, set);
    }
    return set;
  }
}
