import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import { AuditJournal } from '../../libs/audit/src/index.js';
import { CustomerDirectory, ErasureHooks, ErasureWorker, type ErasureSubject } from '../../libs/identity/src/index.js';
import type { TenantScope } from '../../libs/platform/src/index.js';
import { createProjectWithApp, keyHeaders, type ProjectFixture, setRateLimits } from '../support/fixtures.js';
import { explain, loadIdentityVolume } from '../support/identity-volume.js';
import { AUDIENCE, ISSUER, type IdentityProviderKit, type TokenOptions, aid, identityProviderKit, uid } from '../support/id-tokens.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';

const DAY = 86_400;
const UUID = '6f1c1b8e-2a4b-4c1e-9a8e-3b2f1d0c9e7a';

describe('identity: identify, alias graph, tokens, forget, erasure', () => {
  let t: TestApp;
  let p: ProjectFixture;
  let other: ProjectFixture;

  const sandbox = (fixture = p): TenantScope => ({ projectId: fixture.projectId, env: 'sandbox' });

  function identify(body: Record<string, unknown>, key = p.keys.pubTest, fixture = p, path = '/v1/identify') {
    return t.http.post(path).set(keyHeaders(fixture, key)).send(body);
  }
  function forget(body: Record<string, unknown>, key = p.keys.skTest, fixture = p) {
    return t.http.post('/v1/identity/forget').set(keyHeaders(fixture, key)).send(body);
  }
  let kit: IdentityProviderKit;
  const token = (claims: Record<string, unknown>, options?: TokenOptions) => kit.token(claims, options);
  const configureProvider = (fixture: ProjectFixture) => kit.configure(fixture.projectId);
  async function customerRow(id: string) {
    const rows = await t.dataSource.query(`SELECT id, email, first_name, traits, forgotten_at FROM customers WHERE id = $1`, [id]);
    return rows[0];
  }
  async function aliasRows(customerId: string) {
    return t.dataSource.query(`SELECT type, value, assurance FROM customer_aliases WHERE customer_id = $1 ORDER BY type, value`, [customerId]);
  }
  const mergeReviews = (fixture = p, env = 'sandbox') => t.http.get(`/admin/v1/projects/${fixture.projectId}/merge-reviews?env=${env}`).set(operatorAuth());
  const erasures = (fixture = p, env = 'sandbox') => t.http.get(`/admin/v1/projects/${fixture.projectId}/erasures?env=${env}`).set(operatorAuth());

  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
    other = await createProjectWithApp(t);
    const generous = { sustained: 1000, burst: 10000 };
    await setRateLimits(t, p.projectId, { alias: generous, forget: generous });
    await setRateLimits(t, other.projectId, { alias: generous, forget: generous });
    kit = await identityProviderKit(t);
    await configureProvider(p);
  });
  afterAll(async () => t.close());

  describe('POST /v1/identify: request rules', () => {
    it.each([
      ['missing userId', { anonymousId: 'a1' }, 'userId'],
      ['missing anonymousId', { userId: 'u1' }, 'anonymousId'],
      ['userId with a space', { userId: 'has space', anonymousId: 'a1' }, 'userId'],
      ['userId over 256 chars', { userId: 'u'.repeat(257), anonymousId: 'a1' }, 'userId'],
      ['empty userId', { userId: '', anonymousId: 'a1' }, 'userId'],
      ['anonymousId with a dot', { userId: 'u1', anonymousId: 'a.1' }, 'anonymousId'],
      ['anonymousId over 128 chars', { userId: 'u1', anonymousId: 'a'.repeat(129) }, 'anonymousId'],
      ['numeric userId', { userId: 42, anonymousId: 'a1' }, 'userId'],
      ['non-UUID appAccountToken', { userId: 'u1', anonymousId: 'a1', appAccountToken: 'not-a-uuid' }, 'appAccountToken'],
      ['uppercase UUID appAccountToken', { userId: 'u1', anonymousId: 'a1', appAccountToken: UUID.toUpperCase() }, 'appAccountToken'],
    ])('%s: 400 invalid_param_value', async (_label, body, field) => {
      const res = await identify(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_param_value' });
      expect(res.body.error.message).toContain(field);
    });

    it('accepts every allowed character', async () => {
      const res = await identify({ userId: uid('A-z_0.9:x@y'), anonymousId: aid('A-z_09') });
      expect(res.status).toBe(200);
    });

    it('needs a key', async () => {
      const res = await t.http.post('/v1/identify').send({ userId: 'u', anonymousId: 'a' });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('missing_api_key');
    });
  });

  describe('alias graph', () => {
    it('neither id known: creates one cdcust_ customer and links both (self-asserted)', async () => {
      const userId = uid();
      const anonymousId = aid();
      const res = await identify({ userId, anonymousId });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'alias_result',
        serviceCustomerId: expect.stringMatching(/^cdcust_[A-Za-z0-9]{24}$/),
        linked: [
          { type: 'developer', id: userId },
          { type: 'anonymous', id: anonymousId },
        ],
        mergePending: false,
        env: 'sandbox',
      });
      expect(await aliasRows(res.body.serviceCustomerId)).toEqual([
        { type: 'anonymous', value: anonymousId, assurance: 'self_asserted' },
        { type: 'developer', value: userId, assurance: 'self_asserted' },
      ]);
    });

    it('the same pair again is an idempotent 200 (also on the legacy and unprefixed paths, and with the secret key)', async () => {
      const body = { userId: uid(), anonymousId: aid() };
      const first = await identify(body);
      const again = await identify(body);
      const legacy = await identify(body, p.keys.pubTest, p, '/v1/identity/alias');
      const bare = await identify(body, p.keys.pubTest, p, '/identify');
      const secret = await identify(body, p.keys.skTest);
      for (const res of [again, legacy, bare, secret]) {
        expect(res.status).toBe(200);
        expect(res.body).toEqual(first.body);
      }
      expect(await aliasRows(first.body.serviceCustomerId)).toHaveLength(2);
    });

    it('one known id links the other', async () => {
      const userId = uid();
      const anonymousId = aid();
      const first = await identify({ userId, anonymousId });
      const secondDevice = aid('device2');
      const byUser = await identify({ userId, anonymousId: secondDevice });
      expect(byUser.body).toMatchObject({ serviceCustomerId: first.body.serviceCustomerId, mergePending: false });
      const otherLogin = uid('login2');
      const byDevice = await identify({ userId: otherLogin, anonymousId });
      expect(byDevice.body).toMatchObject({ serviceCustomerId: first.body.serviceCustomerId, mergePending: false });
      expect((await aliasRows(first.body.serviceCustomerId)).map((r: { value: string }) => r.value).sort()).toEqual(
        [userId, anonymousId, secondDevice, otherLogin].sort(),
      );
    });

    it('lookups stay inside the key\'s project and environment', async () => {
      const body = { userId: uid(), anonymousId: aid() };
      const sandboxRes = await identify(body);
      const live = await identify(body, p.keys.pubLive);
      const otherProject = await identify(body, other.keys.pubTest, other);
      expect(live.body.env).toBe('production');
      const ids = new Set([sandboxRes.body.serviceCustomerId, live.body.serviceCustomerId, otherProject.body.serviceCustomerId]);
      expect(ids.size).toBe(3);
      const directory = t.app.get(CustomerDirectory);
      expect(await directory.findCustomerId({ projectId: p.projectId, env: 'production' }, { userId: body.userId })).toBe(live.body.serviceCustomerId);
      expect(await directory.findCustomerId(sandbox(), { customerId: live.body.serviceCustomerId })).toBeNull();
      expect(await directory.isActiveCustomer(sandbox(), sandboxRes.body.serviceCustomerId)).toBe(true);
      expect(await directory.isActiveCustomer(sandbox(other), sandboxRes.body.serviceCustomerId)).toBe(false);
    });

    it('both known on different customers: developer customer is canonical, mergePending, queued once, nothing merged', async () => {
      const [uA, aA, uB, aB] = [uid('ua'), aid('aa'), uid('ub'), aid('ab')];
      const c1 = (await identify({ userId: uA, anonymousId: aA })).body.serviceCustomerId;
      const c2 = (await identify({ userId: uB, anonymousId: aB })).body.serviceCustomerId;
      expect(c1).not.toBe(c2);

      const conflict = await identify({ userId: uA, anonymousId: aB });
      expect(conflict.status).toBe(200);
      expect(conflict.body).toEqual({ object: 'alias_result', serviceCustomerId: c1, linked: [{ type: 'developer', id: uA }], mergePending: true, env: 'sandbox' });
      const again = await identify({ userId: uA, anonymousId: aB });
      expect(again.body).toEqual(conflict.body);
      // The same two customers conflicting the other way round is the same review.
      const reverse = await identify({ userId: uB, anonymousId: aA });
      expect(reverse.body).toMatchObject({ serviceCustomerId: c2, mergePending: true });

      // Nothing merged: each id still resolves to its own customer.
      const directory = t.app.get(CustomerDirectory);
      expect(await directory.findCustomerId(sandbox(), { anonymousId: aB })).toBe(c2);
      expect(await directory.findCustomerId(sandbox(), { anonymousId: aA })).toBe(c1);

      const list = await mergeReviews();
      expect(list.status).toBe(200);
      expect(list.body.object).toBe('list');
      const mine = list.body.data.filter((r: { canonicalCustomerId: string; otherCustomerId: string }) => [c1, c2].includes(r.canonicalCustomerId));
      expect(mine).toEqual([
        { id: expect.stringMatching(/^mrev_/), env: 'sandbox', developerUserId: uA, anonymousId: aB, canonicalCustomerId: c1, otherCustomerId: c2, status: 'pending', createdAt: expect.any(Number) },
      ]);
      expect((await mergeReviews(p, 'production')).body.data).toEqual([]);
    });

    it('merge-reviews and erasures: unknown project 404, bad env 400, operator token required', async () => {
      const missing = await t.http.get('/admin/v1/projects/proj_nope/merge-reviews?env=sandbox').set(operatorAuth());
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('resource_missing');
      expect((await t.http.get('/admin/v1/projects/proj_nope/erasures').set(operatorAuth())).status).toBe(404);
      const bad = await t.http.get(`/admin/v1/projects/${p.projectId}/merge-reviews?env=staging`).set(operatorAuth());
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_param_value');
      expect((await t.http.get(`/admin/v1/projects/${p.projectId}/merge-reviews`)).status).toBe(401);
    });

    it('concurrent identify calls for the same ids never create two customers', async () => {
      const userId = uid('race');
      const anonymousId = aid('race');
      const results = await Promise.all(Array.from({ length: 12 }, () => identify({ userId, anonymousId })));
      for (const res of results) expect(res.status).toBe(200);
      expect(new Set(results.map((r) => r.body.serviceCustomerId)).size).toBe(1);
      const rows = await t.dataSource.query(
        `SELECT DISTINCT customer_id FROM customer_aliases WHERE project_id = $1 AND env = 'sandbox' AND value = ANY($2::text[])`,
        [p.projectId, [userId, anonymousId]],
      );
      expect(rows).toHaveLength(1);
    });

    it('concurrent calls sharing only the user id (new devices) converge on one customer', async () => {
      const userId = uid('race2');
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => identify({ userId, anonymousId: aid(`dev${i}`) })));
      for (const res of results) expect(res.status).toBe(200);
      const ids = new Set(results.map((r) => r.body.serviceCustomerId));
      expect(ids.size).toBe(1);
      expect(await aliasRows([...ids][0])).toHaveLength(11);
      const orphans = await t.dataSource.query(
        `SELECT count(*)::int AS n FROM customers c WHERE project_id = $1 AND NOT EXISTS (SELECT 1 FROM customer_aliases a WHERE a.customer_id = c.id)`,
        [p.projectId],
      );
      expect(orphans[0].n).toBe(0);
    });

    it('appAccountToken binds the iOS rail to the customer', async () => {
      const res = await identify({ userId: uid(), anonymousId: aid(), appAccountToken: UUID });
      expect(res.status).toBe(200);
      const directory = t.app.get(CustomerDirectory);
      expect(await directory.findCustomerIdByAlias(sandbox(), 'ios_app_account_token', UUID)).toBe(res.body.serviceCustomerId);
      // A token already bound stays with its customer.
      const otherCustomer = await identify({ userId: uid(), anonymousId: aid(), appAccountToken: UUID });
      expect(otherCustomer.status).toBe(200);
      expect(await directory.findCustomerIdByAlias(sandbox(), 'ios_app_account_token', UUID)).toBe(res.body.serviceCustomerId);
    });
  });

  describe('traits and email', () => {
    it('sanitises traits (never rejects) and merges them additively per key', async () => {
      const body = { userId: uid(), anonymousId: aid() };
      const traits: Record<string, unknown> = {
        plan: 'pro',
        seats: 3,
        beta: true,
        nickname: null,
        nested: { a: 1 },
        list: [1, 2],
        long: 'x'.repeat(1025),
        edge: 'y'.repeat(1024),
      };
      for (let i = 0; i < 30; i++) traits[`k${i}`] = i;
      const first = await identify({ ...body, traits, email: 'self@example.com' });
      expect(first.status).toBe(200);
      let row = await customerRow(first.body.serviceCustomerId);
      expect(Object.keys(row.traits)).toHaveLength(32);
      expect(row.traits).toMatchObject({ plan: 'pro', seats: 3, beta: true, nickname: null, edge: 'y'.repeat(1024), k0: 0, k26: 26 });
      expect(row.traits.nested).toBeUndefined();
      expect(row.traits.list).toBeUndefined();
      expect(row.traits.long).toBeUndefined();
      expect(row.traits.k27).toBeUndefined();
      expect(row.email).toBe('self@example.com');

      const second = await identify({ ...body, traits: { plan: 'team', brandNew: 'dropped: map is full' } });
      expect(second.status).toBe(200);
      row = await customerRow(first.body.serviceCustomerId);
      expect(row.traits.plan).toBe('team');
      expect(row.traits.seats).toBe(3);
      expect(row.traits.brandNew).toBeUndefined();
      expect(Object.keys(row.traits)).toHaveLength(32);
    });

    it('text PostgreSQL cannot store: a NUL or unpaired surrogate in traits is dropped, in email it is 400 (never a 500)', async () => {
      const ok = await identify({ userId: uid(), anonymousId: aid(), traits: { keep: 'yes', nul: 'a\u0000b', 'k\u0000': 1, lone: 'x\uD800' } });
      expect(ok.status).toBe(200);
      expect((await customerRow(ok.body.serviceCustomerId)).traits).toEqual({ keep: 'yes' });
      const bad = await identify({ userId: uid(), anonymousId: aid(), email: 'a\u0000@example.com' });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('invalid_param_value');
      const badForget = await forget({ customerId: 'cdcust_\u0000' });
      expect(badForget.status).toBe(400);
      expect(badForget.body.error.code).toBe('invalid_param_value');
    });

    it('traits of the wrong type are dropped, not rejected', async () => {
      for (const traits of ['string', 7, [1, 2], null]) {
        const res = await identify({ userId: uid(), anonymousId: aid(), traits });
        expect(res.status).toBe(200);
        expect((await customerRow(res.body.serviceCustomerId)).traits).toEqual({});
      }
    });

    it('additive merge across calls keeps earlier keys', async () => {
      const body = { userId: uid(), anonymousId: aid() };
      const a = await identify({ ...body, traits: { a: 1 } });
      await identify({ ...body, traits: { b: 2 } });
      expect((await customerRow(a.body.serviceCustomerId)).traits).toEqual({ a: 1, b: 2 });
    });
  });

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
      ['unsigned (alg none)', async (sub: string) => `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ sub, iss: ISSUER, aud: AUDIENCE, exp: t.clock.nowSeconds() + 60 })).toString('base64url')}.`],
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
        expect(put.body).toMatchObject({ object: 'identity_provider', projectId: fixture.projectId, jwksUri: `http://127.0.0.1:${port}/jwks.json`, jwks: null });
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
    const put = (projectId: string, body: Record<string, unknown>) => t.http.put(`/admin/v1/projects/${projectId}/identity-provider`).set(operatorAuth()).send(body);

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
      const anon = await t.http.put(`/admin/v1/projects/${p.projectId}/identity-provider`).send({ issuer: ISSUER, audience: AUDIENCE, jwks: { keys: [kit.publicJwk] } });
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

  describe('POST /v1/identity/forget', () => {
    async function newCustomer(fixture = p) {
      const userId = uid('gone');
      const anonymousId = aid('gone');
      const res = await identify({ userId, anonymousId, email: 'gone@example.com', traits: { plan: 'pro' } }, fixture.keys.pubTest, fixture);
      return { userId, anonymousId, customerId: res.body.serviceCustomerId as string };
    }
    async function forgetAudits(customerId: string) {
      return t.dataSource.query(`SELECT event_id, decision, reason, actor FROM audit_entries WHERE customer_id = $1 AND event_type = 'customer.forget_requested'`, [customerId]);
    }

    it('needs at least one hint: 400 missing_required_param', async () => {
      const res = await forget({ idToken: 'x' });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('missing_required_param');
    });

    it('secret key, customerId: 200 forgot, the customer reads as unknown at once, one audit entry', async () => {
      const c = await newCustomer();
      const res = await forget({ customerId: c.customerId });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ object: 'forgot', serviceCustomerId: c.customerId, queuedAt: expect.any(Number), env: 'sandbox' });
      expect(Math.abs(res.body.queuedAt - t.clock.nowMs())).toBeLessThan(5000);
      const directory = t.app.get(CustomerDirectory);
      expect(await directory.findCustomerId(sandbox(), { customerId: c.customerId })).toBeNull();
      expect(await directory.findCustomerId(sandbox(), { userId: c.userId })).toBeNull();
      expect(await directory.findCustomerId(sandbox(), { anonymousId: c.anonymousId })).toBeNull();
      expect(await directory.isActiveCustomer(sandbox(), c.customerId)).toBe(false);

      const audits = await forgetAudits(c.customerId);
      expect(audits).toHaveLength(1);
      const entry = await t.http.get(`/v1/server/audit/${audits[0].event_id}`).set(keyHeaders(p, p.keys.skTest));
      expect(entry.status).toBe(200);
      expect(entry.body.data).toMatchObject({ eventType: 'customer.forget_requested', rail: 'manual', decision: 'queued', customerId: c.customerId, env: 'sandbox', projectId: p.projectId });
      expect(entry.body.data.actor).toMatch(/^api_key:key_/);

      const queue = await erasures();
      expect(queue.body.data).toContainEqual({ serviceCustomerId: c.customerId, env: 'sandbox', queuedAt: res.body.queuedAt, status: 'queued' });
    });

    it('is idempotent: repeating (by any hint, even in parallel) returns the same answer and audits one decision', async () => {
      const c = await newCustomer();
      const first = await forget({ userId: c.userId });
      const results = await Promise.all([forget({ userId: c.userId }), forget({ customerId: c.customerId }), forget({ anonymousId: c.anonymousId }, p.keys.pubTest)]);
      for (const res of results) {
        expect(res.status).toBe(200);
        expect(res.body).toEqual(first.body);
      }
      expect(await forgetAudits(c.customerId)).toHaveLength(1);
    });

    it('parallel first requests still audit exactly one decision', async () => {
      const c = await newCustomer();
      const results = await Promise.all(Array.from({ length: 6 }, () => forget({ customerId: c.customerId })));
      expect(new Set(results.map((r) => r.body.queuedAt)).size).toBe(1);
      expect(await forgetAudits(c.customerId)).toHaveLength(1);
    });

    it('no known customer: 200 with serviceCustomerId null', async () => {
      for (const body of [{ customerId: 'cdcust_unknown000000000000000000' }, { customerId: 'not_a_customer' }, { userId: uid() }, { anonymousId: aid() }]) {
        const res = await forget(body);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ object: 'forgot', serviceCustomerId: null, queuedAt: expect.any(Number), env: 'sandbox' });
      }
    });

    it('another environment\'s or project\'s customer is not reached', async () => {
      const c = await newCustomer();
      expect((await forget({ customerId: c.customerId }, p.keys.skLive)).body.serviceCustomerId).toBeNull();
      expect((await forget({ customerId: c.customerId }, other.keys.skTest, other)).body.serviceCustomerId).toBeNull();
      expect(await t.app.get(CustomerDirectory).isActiveCustomer(sandbox(), c.customerId)).toBe(true);
    });

    describe('authority with a publishable key', () => {
      it('identified erasure without a token: 401 identity_token_invalid', async () => {
        const c = await newCustomer();
        for (const body of [{ userId: c.userId }, { customerId: c.customerId }, { customerId: c.customerId, anonymousId: c.anonymousId }]) {
          const res = await forget(body, p.keys.pubTest);
          expect(res.status).toBe(401);
          expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'identity_token_invalid' });
        }
        expect(await t.app.get(CustomerDirectory).isActiveCustomer(sandbox(), c.customerId)).toBe(true);
      });

      it('a token that fails, or proves another user: 401', async () => {
        const c = await newCustomer();
        const cases = [
          { userId: c.userId, idToken: await token({ sub: c.userId }, { key: kit.stranger }) },
          { userId: c.userId, idToken: await token({ sub: c.userId }, { exp: t.clock.nowSeconds() - 300 }) },
          { userId: c.userId, idToken: await token({ sub: 'another_user' }) },
          { customerId: c.customerId, idToken: await token({ sub: c.userId }) },
        ];
        for (const body of cases) expect((await forget(body, p.keys.pubTest)).status).toBe(401);
        expect(await t.app.get(CustomerDirectory).isActiveCustomer(sandbox(), c.customerId)).toBe(true);
      });

      it('a token for userId that does not own customerId: 401', async () => {
        const c = await newCustomer();
        const d = await newCustomer();
        const res = await forget({ userId: c.userId, customerId: d.customerId, idToken: await token({ sub: c.userId }) }, p.keys.pubTest);
        expect(res.status).toBe(401);
      });

      it('a verified idToken whose subject equals userId: 200', async () => {
        const c = await newCustomer();
        const res = await forget({ userId: c.userId, idToken: await token({ sub: c.userId }) }, p.keys.pubTest);
        expect(res.status).toBe(200);
        expect(res.body.serviceCustomerId).toBe(c.customerId);
        const audits = await forgetAudits(c.customerId);
        expect(audits).toHaveLength(1);
        expect(audits[0].reason).toContain('verified idToken');
      });

      it('anonymous-only erasure needs no proof, but a device id never erases an identified customer: only the device goes', async () => {
        const c = await newCustomer();
        const secondDevice = aid('second-device');
        await identify({ userId: c.userId, anonymousId: secondDevice });
        const res = await forget({ anonymousId: c.anonymousId }, p.keys.pubTest);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ object: 'forgot', serviceCustomerId: null, queuedAt: expect.any(Number), env: 'sandbox' });
        const directory = t.app.get(CustomerDirectory);
        expect(await directory.isActiveCustomer(sandbox(), c.customerId)).toBe(true);
        expect(await directory.findCustomerId(sandbox(), { anonymousId: c.anonymousId })).toBeNull();
        expect(await directory.findCustomerId(sandbox(), { anonymousId: secondDevice })).toBe(c.customerId);
        expect(await directory.findCustomerId(sandbox(), { userId: c.userId })).toBe(c.customerId);
        const entries = await t.dataSource.query(`SELECT event_type, decision FROM audit_entries WHERE project_id = $1 AND customer_id = $2`, [p.projectId, c.customerId]);
        expect(entries).toEqual([{ event_type: 'customer.device_forgotten', decision: 'applied' }]);
        // Repeating collapses: nothing left to forget, nothing audited.
        const again = await forget({ anonymousId: c.anonymousId }, p.keys.pubTest);
        expect(again.status).toBe(200);
        expect(again.body.serviceCustomerId).toBeNull();
        expect(await t.dataSource.query(`SELECT 1 FROM audit_entries WHERE project_id = $1 AND customer_id = $2`, [p.projectId, c.customerId])).toHaveLength(1);
      });
    });

    it('a forgotten customer\'s ids are unknown to identify: a returning user gets a new customer', async () => {
      const c = await newCustomer();
      await forget({ customerId: c.customerId });
      const back = await identify({ userId: c.userId, anonymousId: c.anonymousId });
      expect(back.status).toBe(200);
      expect(back.body.serviceCustomerId).not.toBe(c.customerId);
      expect(back.body.mergePending).toBe(false);
      expect(await t.app.get(CustomerDirectory).findCustomerId(sandbox(), { userId: c.userId })).toBe(back.body.serviceCustomerId);
    });

    it('the retention worker erases personal data after the clock moves on, calls the erasure hooks, keeps rail records and the audit entry', async () => {
      const seen: ErasureSubject[] = [];
      t.app.get(ErasureHooks).register('test-recorder', async (_scope, subject, manager) => {
        seen.push(subject);
        await manager.query('SELECT 1');
      });
      const c = await newCustomer();
      await identify({ userId: c.userId, anonymousId: aid('second'), appAccountToken: '0e3a4b2c-1d2e-4f30-8a1b-2c3d4e5f6a7b' });
      const d = await newCustomer();
      await identify({ userId: uid(), anonymousId: d.anonymousId }); // d gets a second developer id
      const res = await forget({ customerId: c.customerId });
      expect(res.status).toBe(200);
      const beforeRows = await aliasRows(c.customerId);
      expect(beforeRows.length).toBe(4);

      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: DAY });
      const worker = t.app.get(ErasureWorker);
      const [a, b] = await Promise.all([worker.runOnce({ projectId: p.projectId }), worker.runOnce({ projectId: p.projectId })]);
      expect(a + b).toBeGreaterThanOrEqual(1);

      const mine = seen.filter((s) => s.customerId === c.customerId);
      expect(mine).toHaveLength(1);
      expect(mine[0].userIds).toEqual([c.userId]);
      expect(mine[0].anonymousIds.sort()).toHaveLength(2);

      expect(await aliasRows(c.customerId)).toEqual([{ type: 'ios_app_account_token', value: '0e3a4b2c-1d2e-4f30-8a1b-2c3d4e5f6a7b', assurance: 'self_asserted' }]);
      const row = await customerRow(c.customerId);
      expect(row).toMatchObject({ id: c.customerId, email: null, first_name: null, traits: {} });
      expect(row.forgotten_at).not.toBeNull();
      const subject = await t.dataSource.query(`SELECT subject, status FROM erasures WHERE customer_id = $1`, [c.customerId]);
      expect(subject[0]).toEqual({ subject: null, status: 'deleted' });
      const queue = await erasures();
      expect(queue.body.data).toContainEqual({ serviceCustomerId: c.customerId, env: 'sandbox', queuedAt: res.body.queuedAt, status: 'deleted' });
      expect(await forgetAudits(c.customerId)).toHaveLength(1);
      // Other customers are untouched.
      expect((await aliasRows(d.customerId)).length).toBe(3);

      // Nothing left to do; repeating the forget is still the same answer.
      expect(await worker.runOnce({ projectId: p.projectId })).toBe(0);
      const again = await forget({ customerId: c.customerId });
      expect(again.body).toEqual(res.body);
    });

    it('a failing hook leaves the erasure queued for the next run', async () => {
      const hooks = t.app.get(ErasureHooks);
      let fail = true;
      hooks.register('test-flaky', async () => {
        if (fail) throw new Error('telemetry store unavailable');
      });
      try {
        const c = await newCustomer();
        await forget({ customerId: c.customerId });
        const worker = t.app.get(ErasureWorker);
        await worker.runOnce({ projectId: p.projectId });
        let rows = await t.dataSource.query(`SELECT status, attempts FROM erasures WHERE customer_id = $1`, [c.customerId]);
        expect(rows[0]).toEqual({ status: 'queued', attempts: 1 });
        expect((await aliasRows(c.customerId)).length).toBe(2);
        fail = false;
        expect(await worker.runOnce({ projectId: p.projectId })).toBeGreaterThanOrEqual(1);
        rows = await t.dataSource.query(`SELECT status FROM erasures WHERE customer_id = $1`, [c.customerId]);
        expect(rows[0].status).toBe('deleted');
      } finally {
        hooks.register('test-flaky', async () => undefined);
      }
    });
  });

  describe('hot queries use indexes', () => {
    let pid = '';
    beforeAll(async () => {
      pid = await loadIdentityVolume(t);
    }, 60_000);

    const plan = (sql: string, params: unknown[]) => explain(t, sql, params);

    it('identify: alias lookup by (project, env, type, value) and customer lock by id', async () => {
      const aliasPlan = await plan(
        `SELECT a.type, a.value, a.customer_id, (c.forgotten_at IS NOT NULL) AS forgotten
           FROM customer_aliases a JOIN customers c ON c.id = a.customer_id
          WHERE a.project_id = $1 AND a.env = $2 AND ((a.type = $3 AND a.value = $4) OR (a.type = $5 AND a.value = $6))`,
        [pid, 'sandbox', 'developer', 'u', 'anonymous', 'a'],
      );
      expect(aliasPlan).toMatch(/(Bitmap )?Index (Only )?Scan (using|on) customer_aliases_pk/);
      expect(aliasPlan).toMatch(/Index Scan using customers_(pkey|scope_id_uq)/);
      expect(aliasPlan).not.toMatch(/Seq Scan/);
      const lockPlan = await plan(`SELECT id FROM customers WHERE project_id = $1 AND env = $2 AND id = $3 FOR NO KEY UPDATE`, [pid, 'sandbox', 'cdcust_x']);
      expect(lockPlan).toMatch(/Index (Only )?Scan using customers_(pkey|scope_id_uq)/);
    });
  });

  it('the journal is usable by other contexts (smoke)', async () => {
    const journal = t.app.get(AuditJournal);
    expect(journal).toBeDefined();
  });
});
