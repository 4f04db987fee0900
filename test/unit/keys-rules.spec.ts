import type { KeyRequirement } from '../../libs/keys/src/auth/auth-context.js';
import { ApiError, createAppLogger } from '#platform';
import { ApiKeyAuthenticator } from '../../libs/keys/src/auth/api-key.authenticator.js';
import { assertDeclaredEnv } from '../../libs/keys/src/auth/declared-env.js';
import { extractApiKey, mintApiKey, parseApiKey, randomBase62, sha256Hex } from '../../libs/keys/src/domain/api-key-format.js';
import type { KeyAuthRecord } from '../../libs/keys/src/domain/keys.repository.js';
import { isValidAllowlistEntry, originAllowed, originsToLearn } from '../../libs/keys/src/domain/origin-allowlist.js';
import { haveSameMap } from '../support/hidden-classes.js';
import { testScope } from '../support/scopes.js';

describe('API key format', () => {
  it('mints keys of the documented shape from base62', () => {
    expect(mintApiKey('publishable', 'sandbox')).toMatch(/^cd_pub_test_[A-Za-z0-9]{32}$/);
    expect(mintApiKey('secret', 'production')).toMatch(/^cd_sk_live_[A-Za-z0-9]{32}$/);
    const seen = new Set(Array.from({ length: 1000 }, () => randomBase62(32)));
    expect(seen.size).toBe(1000);
  });

  it('parses kind and environment from the key, never from the client', () => {
    expect(parseApiKey(`cd_pub_live_${'a'.repeat(32)}`)).toEqual(expect.objectContaining({ status: 'ok', kind: 'publishable', env: 'production' }));
    expect(parseApiKey(`cd_sk_test_${'a'.repeat(32)}`)).toEqual(expect.objectContaining({ status: 'ok', kind: 'secret', env: 'sandbox' }));
    expect(parseApiKey(undefined)).toEqual({ status: 'missing' });
    expect(parseApiKey('cd_sk_prod_abc')).toEqual({ status: 'malformed' });
    expect(parseApiKey('cd_wk_abcdefghij')).toEqual({ status: 'workspace', key: 'cd_wk_abcdefghij' });
  });

  it('takes Authorization first, then Service-Api-Key', () => {
    const a = `cd_pub_test_${'a'.repeat(32)}`;
    const b = `cd_sk_test_${'b'.repeat(32)}`;
    expect(extractApiKey({ authorization: `Bearer ${a}`, 'service-api-key': b })).toEqual(expect.objectContaining({ key: a }));
    expect(extractApiKey({ 'service-api-key': b })).toEqual(expect.objectContaining({ key: b }));
    expect(extractApiKey({ authorization: `Token ${a}` })).toEqual({ status: 'malformed' });
  });

  it("accepts the clients' Crossdeck-Api-Key spelling after Authorization and Service-Api-Key", () => {
    const a = `cd_pub_test_${'a'.repeat(32)}`;
    const b = `cd_sk_test_${'b'.repeat(32)}`;
    expect(extractApiKey({ 'crossdeck-api-key': a })).toEqual({ status: 'ok', key: a, kind: 'publishable', env: 'sandbox' });
    expect(extractApiKey({ 'service-api-key': b, 'crossdeck-api-key': a })).toEqual(expect.objectContaining({ key: b }));
    expect(extractApiKey({ authorization: `Bearer ${b}`, 'crossdeck-api-key': a })).toEqual(expect.objectContaining({ key: b }));
    expect(extractApiKey({ 'service-api-key': ' ', 'crossdeck-api-key': a })).toEqual(expect.objectContaining({ key: a }));
    expect(extractApiKey({ 'crossdeck-api-key': 'cd_nope' })).toEqual({ status: 'malformed' });
    expect(extractApiKey({})).toEqual({ status: 'missing' });
  });
});

describe('origin allowlist', () => {
  const list = ['https://app.example.com', 'https://*.example.org', 'http://localhost:5173'];
  it.each([
    ['https://app.example.com', true],
    ['https://app.example.com:443', false],
    ['https://APP.example.com', false],
    ['http://localhost:5173', true],
    ['http://localhost', false],
    ['https://x.example.org', true],
    ['https://x-y.example.org', true],
    ['https://x.y.example.org', false],
    ['https://example.org', false],
    ['http://x.example.org', false],
    ['https://x.example.org.evil.com', false],
    ['https://-x.example.org', false],
    [undefined, false],
    ['null', false],
  ])('%s -> %s', (origin, allowed) => {
    expect(originAllowed(origin as string | undefined, list)).toBe(allowed);
  });

  it('an empty list allows nothing', () => {
    expect(originAllowed('https://app.example.com', [])).toBe(false);
  });

  it('validates entries', () => {
    for (const ok of ['https://a.example.com', 'http://localhost:3000', 'https://*.example.com', 'http://127.0.0.1:8080', 'capacitor://localhost'])
      expect(isValidAllowlistEntry(ok)).toBe(true);
    for (const bad of ['https://a.example.com/', 'https://*.com', '*.example.com', 'https://a.*.example.com', 'example.com', 'https://a b.com', 42])
      expect(isValidAllowlistEntry(bad)).toBe(false);
  });

  it('learns the origin and its registrable apex, public-suffix aware', () => {
    expect(originsToLearn('https://shop.acme.co.uk')).toEqual(['https://shop.acme.co.uk', 'https://acme.co.uk']);
    expect(originsToLearn('https://acme.com')).toEqual(['https://acme.com']);
    expect(originsToLearn('http://a.b.acme.com:8080')).toEqual(['http://a.b.acme.com:8080', 'http://acme.com:8080']);
    expect(originsToLearn('https://myapp.github.io')).toEqual(['https://myapp.github.io']);
    expect(originsToLearn('http://localhost:3000')).toEqual(['http://localhost:3000']);
    expect(originsToLearn(undefined)).toEqual([]);
    expect(originsToLearn('null')).toEqual([]);
  });
});

describe('ApiKeyGuard scopes', () => {
  const secret = `cd_sk_test_${'s'.repeat(32)}`;
  const record: KeyAuthRecord = {
    keyId: 'key_1',
    kind: 'secret',
    env: 'sandbox',
    status: 'active',
    expiresAtMs: null,
    scopes: ['reporting:aggregate', 'revenue:read', 'errors:read', 'buckets:read'],
    secretHash: sha256Hex(secret),
    projectId: 'proj_1',
    projectArchived: false,
    appId: 'app_1',
    platform: 'web',
    allowedOrigins: [],
    bundleId: null,
    packageName: null,
  };

  function contextFor(scopes: string[] | undefined) {
    const req = { headers: { authorization: `Bearer ${secret}` }, method: 'GET', url: '/v1/x' } as Record<string | symbol, unknown>;
    const res = { header: () => undefined, raw: { setHeader: () => undefined } };
    return { req, ctx: { requirement: { kinds: ['secret' as const], scopes }, req, res } };
  }

  function guard() {
    const lookup = { find: jest.fn().mockResolvedValue(record) };
    const clock = { nowMs: () => Date.now() };
    const authenticator = new ApiKeyAuthenticator(lookup as never, {} as never, clock as never, createAppLogger('silent'));
    // What the platform's route guard does with it: authenticate, then let the request through.
    const canActivate = (ctx: { requirement: KeyRequirement; req: unknown; res: unknown }) =>
      authenticator.authenticate(ctx.requirement, ctx.req as never, ctx.res as never).then(() => true);
    return { lookup, guard: { canActivate } };
  }

  it('lets a key with the declared aggregate scope through', async () => {
    const { guard: g } = guard();
    await expect(g.canActivate(contextFor(['errors:read']).ctx)).resolves.toBe(true);
  });

  it('refuses a key without the identity scope with 403 insufficient_scope', async () => {
    const { guard: g } = guard();
    const failure = await g.canActivate(contextFor(['reporting:identity']).ctx).catch((e) => e);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toEqual(expect.objectContaining({ status: 403, type: 'permission_error', code: 'insufficient_scope' }));
  });

  it('resolves every caller to objects of one hidden class (no new V8 map per request)', async () => {
    const authenticator = new ApiKeyAuthenticator(
      { find: async () => record } as never,
      {} as never,
      { nowMs: () => Date.now() } as never,
      createAppLogger('silent'),
    );
    const contexts = [];
    for (let i = 0; i < 50; i++) {
      const { ctx } = contextFor(undefined);
      contexts.push((await authenticator.authenticate(ctx.requirement, ctx.req as never, ctx.res as never)).auth);
    }
    // Once warm (V8 may change the map a few times early on), one map for all.
    const settled = contexts.slice(-25);
    expect(settled.filter((auth) => !haveSameMap(auth, settled[0]))).toEqual([]);
  });

  it('compares the secret hash and refuses a record whose hash differs', async () => {
    const { guard: g, lookup } = guard();
    lookup.find.mockResolvedValue({ ...record, secretHash: sha256Hex('something else') });
    const failure = await g.canActivate(contextFor(undefined).ctx).catch((e) => e);
    expect(failure).toEqual(expect.objectContaining({ status: 401, code: 'invalid_api_key' }));
  });
});

describe('assertDeclaredEnv', () => {
  const scope = testScope('proj_1', 'sandbox');
  it("accepts the key's environment or no declaration", () => {
    expect(() => assertDeclaredEnv(scope, 'sandbox')).not.toThrow();
    expect(() => assertDeclaredEnv(scope, undefined)).not.toThrow();
    expect(() => assertDeclaredEnv(scope, null)).not.toThrow();
  });
  it.each([['production'], ['x'.repeat(10_000)], [{ toString: 1 }], [[[[]]]], [42], [true]])(
    'refuses %p with 403 env_mismatch and a short message',
    (declared) => {
      const error = (() => {
        try {
          assertDeclaredEnv(scope, declared);
        } catch (e) {
          return e as ApiError;
        }
      })();
      expect(error).toEqual(expect.objectContaining({ status: 403, code: 'env_mismatch' }));
      expect(error!.message.length).toBeLessThan(120);
    },
  );
});
