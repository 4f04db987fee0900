import { Inject, Injectable } from '@nestjs/common';
import { createLocalJWKSet } from 'jose';
import { APP_CONFIG, type AppConfig, ApiError, Clock } from '#platform';
import { ProjectDirectory } from '#keys';
import type { IdentityProviderView, PutIdentityProviderDto } from './identity-provider.dto.js';
import { IdentityProviderRepository } from './identity-provider.repository.js';
import { IdTokenVerifier } from './id-token-verifier.service.js';
import { jwksUriRefusal } from './jwks-uri-policy.js';

// Private or symmetric key material never belongs in a verification key set.
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const MAX_KEYS = 100;

/** Operator: configures the project's identity provider (inline JWKS or JWKS URI). */
@Injectable()
export class IdentityProviderService {
  constructor(
    private readonly store: IdentityProviderRepository,
    private readonly projects: ProjectDirectory,
    private readonly verifier: IdTokenVerifier,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async put(projectId: string, dto: PutIdentityProviderDto): Promise<IdentityProviderView> {
    await this.projects.assertExists(projectId);
    // Optional fields skip validation when null; a null is neither "absent" nor a value here.
    if (dto.jwks === null) throw ApiError.invalidParam('jwks must be a JSON Web Key Set object { keys: [...] }, not null');
    if (dto.jwksUri === null) throw ApiError.invalidParam('jwksUri must be an https URL, not null');
    if (dto.jwks !== undefined && dto.jwksUri !== undefined) throw ApiError.invalidParam('Give exactly one of jwks and jwksUri');
    if (dto.jwks === undefined && dto.jwksUri === undefined) throw ApiError.missingParam('jwks or jwksUri is required');
    const jwks = dto.jwks !== undefined ? validateJwks(dto.jwks) : null;
    if (dto.jwksUri !== undefined) await this.checkJwksUri(dto.jwksUri);
    const saved = await this.store.put({ projectId, issuer: dto.issuer, audience: dto.audience, jwks, jwksUri: dto.jwksUri ?? null }, this.clock.now());
    this.verifier.invalidate(projectId);
    return {
      object: 'identity_provider',
      projectId: saved.projectId,
      issuer: saved.issuer,
      audience: saved.audience,
      jwks: saved.jwks,
      jwksUri: saved.jwksUri,
      updatedAt: Math.floor(saved.updatedAt.getTime() / 1000),
    };
  }

  private async checkJwksUri(uri: string): Promise<void> {
    switch (await jwksUriRefusal(uri, this.config.jwksAllowPrivate)) {
      case 'not_https':
        throw ApiError.invalidParam('jwksUri must be an https URL');
      case 'non_public':
        throw ApiError.invalidParam('jwksUri must not point at a loopback, private, link-local or otherwise non-public address');
      case 'invalid':
        throw ApiError.invalidParam('jwksUri must be an https URL without credentials');
      case null:
        return;
    }
  }
}

function validateJwks(jwks: { keys?: unknown }): { keys: Record<string, unknown>[] } {
  const keys = jwks.keys;
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_KEYS) {
    throw ApiError.invalidParam(`jwks.keys must be an array of 1 to ${MAX_KEYS} public keys`);
  }
  keys.forEach((key, index) => {
    if (typeof key !== 'object' || key === null || Array.isArray(key) || typeof (key as { kty?: unknown }).kty !== 'string') {
      throw ApiError.invalidParam(`jwks.keys[${index}] must be a JWK with kty`);
    }
    if (PRIVATE_MEMBERS.some((member) => member in key)) {
      throw ApiError.invalidParam(`jwks.keys[${index}] must be a public key (no private or symmetric key material)`);
    }
  });
  try {
    createLocalJWKSet({ keys: keys as Parameters<typeof createLocalJWKSet>[0]['keys'] });
  } catch {
    throw ApiError.invalidParam('jwks is not a valid JSON Web Key Set');
  }
  return { keys: keys as Record<string, unknown>[] };
}
