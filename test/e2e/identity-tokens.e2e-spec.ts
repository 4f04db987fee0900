import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import { CustomerDirectory } from '#identity';
import { createProjectWithApp, type ProjectFixture, setRateLimits } from '../support/fixtures.js';
import { AUDIENCE, ISSUER, type IdentityProviderKit, aid, uid } from '../support/id-tokens.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { identityHarness } from '../support/harness/identity.js';

describe('identity: idToken, the identity-provider operator endpoint, rate limits', () => {
  const h = identityHarness();
  let t: TestApp;
  let p: ProjectFixture;
  let other: ProjectFixture;
  let kit: IdentityProviderKit;
  beforeAll(() => {
    ({ t, p, other, kit } = h);
  });
  const { sandbox, identify, forget, token, customerRow, aliasRows } = h;

  describe('idToken', () => {
    it('a valid token records the links as verified; its email claim overrides the body, given_name feeds first name', async () => {
      const userId = uid();
      const anonymousId = aid();
      const idToken = await token({ sub: userId, email: 'verified@example.com', given_name: 'Ada' });
      const res = await identify({ userId, anonymousId, idToken, email: 'claimed@example.com' });
      expect(res.status).toBe(200);
      expect(await aliasRows(res.body.serviceCustomerId)).toEqual([
        { type: 'anonymous', value: anonymousId, assurance: 'verified' },
        { type: 'developer', value: userId, assurance: 'verified' },
      ]);
      const row = await customerRow(res.body.serviceCustomerId);
      expect(row.email).toBe('verified@example.com');
      expect(row.first_name).toBe('Ada');
    });

    it('a later verified call upgrades self-asserted links', async () => {
      const userId = uid();
      const anonymousId = aid();
      const first = await identify({ userId, anonymousId });
      expect((await aliasRows(first.body.serviceCustomerId))[1].assurance).toBe('self_asserted');
      await identify({ userId, anonymousId, idToken: await token({ sub: userId }) });
      expect((await aliasRows(first.body.serviceCustomerId)).map((r: { assurance: string }) => r.assurance)).toEqual(['verified', 'verified']);
    });

    it.each([
      ['signed by another key', async (sub: string) => token({ sub }, { key: kit.stranger })],
      ['expired', async (sub: string) => token({ sub }, { exp: t.clock.nowSeconds() - 120 })],
      ['not yet valid', async (sub: string) => token({ sub }, { nbf: t.clock.nowSeconds() + 600 })],
      ['wrong audience', async (sub: string) => token({ sub }, { aud: 'another-app' })],
      ['wrong issuer', async (sub: string) => token({ sub }, { iss: 'https://evil.example/' })],
      ['subject is another user', async () => token({ sub: 'someone_else' })],
      ['garbage', async () => 'not.a.jwt'],
      [
        'unsigned (alg none)',
        async (sub: string) =>
          `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub, iss: ISSUER, aud: AUDIENCE, exp: t.clock.nowSeconds() + 60 })).toString('base64url')}.`,
      ],
    ])('%s: 401 identity_token_invalid and nothing linked', async (_label, make) => {
      const userId = uid();
      const anonymousId = aid();
      const res = await identify({ userId, anonymousId, idToken: await make(userId) });
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'identity_token_invalid' });
      expect(await t.app.get(CustomerDirectory).findCustomerId(sandbox(), { userId })).toBeNull();
    });

    it('expiry follows the service clock (test clock)', async () => {
      const userId = uid();
      const idToken = await token({ sub: userId }, { exp: t.clock.nowSeconds() + 600 });
      expect((await identify({ userId, anonymousId: aid(), idToken })).status).toBe(200);
      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 3600 });
      const res = await identify({ userId, anonymousId: aid(), idToken });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('identity_token_invalid');
    });

    it('a project without an identity provider refuses every token', async () => {
      const userId = uid();
      const res = await identify({ userId, anonymousId: aid(), idToken: await token({ sub: userId }) }, other.keys.pubTest, other);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('identity_token_invalid');
    });

    it('a JWKS URI is fetched and cached', async () => {
      let fetches = 0;
      const server: Server = createServer((_req, res) => {
        fetches += 1;
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ keys: [kit.publicJwk] }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const fixture = await createProjectWithApp(t);
        const put = await t.http
          .put(`/admin/v1/projects/${fixture.projectId}/identity-provider`)
          .set(operatorAuth())
          .send({ issuer: ISSUER, audience: AUDIENCE, jwksUri: `http://127.0.0.1:${port}/jwks.json` });
        expect(put.status).toBe(200);
        expect(put.body).toMatchObject({
          object: 'identity_provider',
          projectId: fixture.projectId,
          jwksUri: `http://127.0.0.1:${port}/jwks.json`,
          jwks: null,
        });
        for (let i = 0; i < 3; i++) {
          const userId = uid();
          const res = await identify({ userId, anonymousId: aid(), idToken: await token({ sub: userId }) }, fixture.keys.pubTest, fixture);
          expect(res.status).toBe(200);
        }
        expect(fetches).toBe(1);
        const userId = uid();
        const bad = await identify({ userId, anonymousId: aid(), idToken: await token({ sub: userId }, { key: kit.stranger }) }, fixture.keys.pubTest, fixture);
        expect(bad.status).toBe(401);
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });

  describe('PUT /admin/v1/projects/{projectId}/identity-provider', () => {
    const put = (projectId: string, body: Record<string, unknown>) =>
      t.http.put(`/admin/v1/projects/${projectId}/identity-provider`).set(operatorAuth()).send(body);

    it('inline JWKS: 200 with the stored provider', async () => {
      const res = await put(p.projectId, { issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [kit.publicJwk] } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'identity_provider',
        projectId: p.projectId,
        issuer: ISSUER,
        audience: AUDIENCE,
        jwks: { keys: [kit.publicJwk] },
        jwksUri: null,
        updatedAt: expect.any(Number),
      });
    });

    it('validates the body', async () => {
      const exportable = await generateKeyPair('RS256', { extractable: true });
      const privateJwk = { ...(await exportJWK(exportable.privateKey)), kid: 'k1' };
      const cases: [Record<string, unknown>, number, string][] = [
        [{ issuer: ISSUER, audience: AUDIENCE }, 400, 'missing_required_param'],
        [{ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [kit.publicJwk] }, jwksUri: 'https://x.example/jwks' }, 400, 'invalid_param_value'],
        [{ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [privateJwk] } }, 400, 'invalid_param_value'],
        [{ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [] } }, 400, 'invalid_param_value'],
        [{ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [{ nope: 1 }] } }, 400, 'invalid_param_value'],
        [{ issuer: ISSUER, audience: AUDIENCE, jwksUri: 'not a url' }, 400, 'invalid_param_value'],
        [{ audience: AUDIENCE, jwks: { keys: [kit.publicJwk] } }, 400, 'missing_required_param'],
      ];
      for (const [body, status, code] of cases) {
        const res = await put(p.projectId, body);
        expect([res.status, res.body.error?.code]).toEqual([status, code]);
      }
    });

    it('unknown project: 404 resource_missing; no operator token: 401', async () => {
      const res = await put('proj_doesnotexist', { issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [kit.publicJwk] } });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('resource_missing');
      const anon = await t.http
        .put(`/admin/v1/projects/${p.projectId}/identity-provider`)
        .send({ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [kit.publicJwk] } });
      expect(anon.status).toBe(401);
    });
  });

  describe('rate limits', () => {
    it('the 31st identify for one userId within 60 s is 429 with Retry-After; other users are unaffected', async () => {
      const fixture = await createProjectWithApp(t);
      await setRateLimits(t, fixture.projectId, { alias: { sustained: 1000, burst: 10000 } });
      const userId = uid('busy');
      for (let i = 0; i < 30; i++) {
        const res = await identify({ userId, anonymousId: aid() }, fixture.keys.pubTest, fixture);
        expect(res.status).toBe(200);
      }
      const refused = await identify({ userId, anonymousId: aid() }, fixture.keys.pubTest, fixture);
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect((await identify({ userId: uid('calm'), anonymousId: aid() }, fixture.keys.pubTest, fixture)).status).toBe(200);
      // The cap is per environment too.
      expect((await identify({ userId, anonymousId: aid() }, fixture.keys.pubLive, fixture)).status).toBe(200);
      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 61 });
      expect((await identify({ userId, anonymousId: aid() }, fixture.keys.pubTest, fixture)).status).toBe(200);
    });

    it('the project alias bucket applies', async () => {
      const fixture = await createProjectWithApp(t);
      await setRateLimits(t, fixture.projectId, { alias: { sustained: 0.001, burst: 2 } });
      expect((await identify({ userId: uid(), anonymousId: aid() }, fixture.keys.pubTest, fixture)).status).toBe(200);
      expect((await identify({ userId: uid(), anonymousId: aid() }, fixture.keys.pubTest, fixture)).status).toBe(200);
      const refused = await identify({ userId: uid(), anonymousId: aid() }, fixture.keys.pubTest, fixture);
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBeDefined();
      expect(refused.headers['x-service-sample-rate']).toBeDefined();
    });

    it('the project forget bucket applies', async () => {
      const fixture = await createProjectWithApp(t);
      await setRateLimits(t, fixture.projectId, { forget: { sustained: 0.001, burst: 1 } });
      expect((await forget({ anonymousId: aid() }, fixture.keys.pubTest, fixture)).status).toBe(200);
      const refused = await forget({ anonymousId: aid() }, fixture.keys.pubTest, fixture);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('rate_limited');
    });
  });
});
