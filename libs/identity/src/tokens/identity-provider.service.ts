import { Injectable } from '@nestjs/common';
import { createLocalJWKSet } from 'jose';
import { ApiError, Clock } from '../../../platform/src/index.js';
import type { IdentityProviderView, PutIdentityProviderDto } from './identity-provider.dto.js';
import { IdentityProviderStore } from './identity-provider.store.js';
import { IdTokenVerifier } from './id-token-verifier.service.js';

// Private or symmetric key material never belongs in a verification key set.
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const MAX_KEYS = 100;

/** Operator: configures the project's identity provider (inline JWKS or JWKS URI). */
@Injectable()
export class IdentityProviderService {
  constructor(
    private readonly store: IdentityProviderStore,
    private readonly verifier: IdTokenVerifier,
    private readonly clock: Clock,
  ) {}

  async put(projectId: string, dto: PutIdentityProviderDto): Promise<IdentityProviderView> {
    if (!(await this.store.projectExists(projectId))) throw ApiError.resourceMissing(`No such project: ${projectId}`);
    if (dto.jwks !== undefined && dto.jwksUri !== undefined) throw ApiError.invalidParam('Give exactly one of jwks and jwksUri');
    if (dto.jwks === undefined && dto.jwksUri === undefined) throw ApiError.missingParam('jwks or jwksUri is required');
    const jwks = dto.jwks !== undefined ? validateJwks(dto.jwks) : null;
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
