import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import type { TestApp } from './test-app.js';
import { operatorAuth } from './test-app.js';

export const ISSUER = 'https://auth.example.test/';
export const AUDIENCE = 'example-app';

export type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

export interface TokenOptions {
  key?: KeyPair;
  kid?: string;
  exp?: number;
  iss?: string;
  aud?: string;
  nbf?: number;
}

export interface IdentityProviderKit {
  /** The provider's signing key (published as JWK `k1`). */
  signer: KeyPair;
  /** A key the provider does not know. */
  stranger: KeyPair;
  publicJwk: JWK;
  /** An RS256 idToken, valid for an hour on the app's clock unless told otherwise. */
  token(claims: Record<string, unknown>, options?: TokenOptions): Promise<string>;
  /** Sets the project's identity provider to this kit's inline JWKS. */
  configure(projectId: string): Promise<void>;
}

/** Keys and tokens of a test identity provider, on the test app's clock. */
export async function identityProviderKit(t: TestApp): Promise<IdentityProviderKit> {
  const signer = await generateKeyPair('RS256');
  const stranger = await generateKeyPair('RS256');
  const publicJwk: JWK = { ...(await exportJWK(signer.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  return {
    signer,
    stranger,
    publicJwk,
    async token(claims, options = {}) {
      const now = t.clock.nowSeconds();
      const jwt = new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: options.kid ?? 'k1' })
        .setIssuer(options.iss ?? ISSUER)
        .setAudience(options.aud ?? AUDIENCE)
        .setIssuedAt(now)
        .setExpirationTime(options.exp ?? now + 3600);
      if (options.nbf !== undefined) jwt.setNotBefore(options.nbf);
      return jwt.sign((options.key ?? signer).privateKey);
    },
    async configure(projectId) {
      const res = await t.http
        .put(`/admin/v1/projects/${projectId}/identity-provider`)
        .set(operatorAuth())
        .send({ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [publicJwk] } });
      if (res.status !== 200) throw new Error(`identity provider setup failed: ${res.status} ${JSON.stringify(res.body)}`);
    },
  };
}

let seq = 0;
/** Unique developer user ids and anonymous ids for one test run. */
export const uid = (label = 'user') => `${label}_${Date.now().toString(36)}_${++seq}`;
export const aid = (label = 'anon') => `${label}-${Date.now().toString(36)}-${++seq}`;
