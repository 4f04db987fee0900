import type { Server } from 'node:http';
import { connect, createServer as createTcpServer, type AddressInfo } from 'node:net';
import { AUDIENCE, ISSUER, identityProviderKit } from '../support/id-tokens.js';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { createTestDatabase, dropTestDatabase } from '../support/test-database.js';
import { identityProviderStoredWith } from '../support/factories/identity.js';

const REQUEST_ID = /^req_[0-9a-f]{24}$/;

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: any;
  text: string;
}

/** Starts `t`'s HTTP server on a loopback port (once) and returns the port. */
async function listen(t: TestApp): Promise<number> {
  const server: Server = t.app.getHttpServer();
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** Writes `chunks` on a raw socket and reads until the server closes it (or `waitMs` passes). */
function rawExchange(port: number, chunks: (string | Buffer)[], waitMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error('the server did not close the connection')), waitMs);
    socket.on('connect', () => chunks.forEach((chunk) => socket.write(chunk)));
    socket.on('data', (data) => received.push(data));
    socket.on('error', (err) => {
      clearTimeout(timer);
      if (received.length === 0) reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(received).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const bodyText = rest.join('\r\n\r\n');
      let body: unknown;
      try {
        body = JSON.parse(bodyText);
      } catch {
        body = undefined;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, text });
    });
  });
}

/** `{"<field>": [[[...]]]}` nested `depth` levels deep, as raw JSON text (about 2 bytes a level). */
function deepBody(depth: number, base: Record<string, unknown> = {}): string {
  const prefix = JSON.stringify(base).slice(0, -1);
  return `${prefix}${prefix.length > 1 ? ',' : ''}"unknownField":${'['.repeat(depth)}${']'.repeat(depth)}}`;
}

describe('the edge under attack', () => {
  let t: TestApp;
  let fx: ProjectFixture;
  let customerId: string;
  const sk = () => keyHeaders(fx, fx.keys.skTest);
  const pub = () => keyHeaders(fx, fx.keys.pubTest);

  beforeAll(async () => {
    t = await createTestApp();
    fx = await createProjectWithApp(t);
    const res = await t.http.post('/v1/identify').set(sk()).send({ userId: 'edge_user', anonymousId: 'edge_anon' });
    expect(res.status).toBe(200);
    customerId = res.body.serviceCustomerId;
  });
  afterAll(async () => t.close());

  describe('deep nesting and key count are bounded before validation', () => {
    const writes = (): [string, string, string, Record<string, string>, Record<string, unknown>][] => [
      ['identify', 'post', '/v1/identify', pub(), { userId: 'edge_user' }],
      ['alias', 'post', '/v1/identity/alias', pub(), { userId: 'edge_user', anonymousId: 'edge_anon' }],
      ['forget', 'post', '/v1/identity/forget', pub(), { anonymousId: 'edge_nobody' }],
      ['resolve', 'post', '/v1/resolve', pub(), { anonymousId: 'edge_anon' }],
      [
        'grant',
        'post',
        `/v1/server/customers/${customerId}/grant`,
        sk(),
        { entitlementKey: 'pro_access', duration: 'P30D', reason: 'Goodwill credit after the outage' },
      ],
      ['revoke', 'post', `/v1/server/customers/${customerId}/revoke`, sk(), { entitlementKey: 'pro_access', reason: 'Chargeback' }],
      ['operator: create project', 'post', '/admin/v1/projects', operatorAuth(), { name: 'x' }],
      ['operator: create app', 'post', `/admin/v1/projects/${fx.projectId}/apps`, operatorAuth(), { name: 'x', platform: 'android', packageName: 'com.x.y' }],
      ['operator: update app', 'patch', `/admin/v1/apps/${fx.appId}`, operatorAuth(), { name: 'x' }],
      ['operator: identity provider', 'put', `/admin/v1/projects/${fx.projectId}/identity-provider`, operatorAuth(), { issuer: 'i', audience: 'a' }],
      ['operator: products', 'put', `/admin/v1/projects/${fx.projectId}/products`, operatorAuth(), { products: [] }],
      ['operator: grant', 'post', `/admin/v1/projects/${fx.projectId}/customers/${customerId}/grant`, operatorAuth(), { env: 'sandbox' }],
      ['operator: rate limits', 'put', `/admin/v1/projects/${fx.projectId}/rate-limits`, operatorAuth(), {}],
      ['operator: rotate key', 'post', `/admin/v1/keys/${fx.keyIds.skLive}/rotate`, operatorAuth(), {}],
      ['operator: revoke key', 'post', `/admin/v1/keys/${fx.keyIds.skLive}/revoke`, operatorAuth(), {}],
      ['operator: archive project', 'post', `/admin/v1/projects/proj_doesnotexist/archive`, operatorAuth(), {}],
      ['operator: test clock', 'post', '/admin/v1/test-clock/advance', operatorAuth(), { seconds: 1 }],
    ];

    it('a 32 KB body nested 16,000 deep in an unknown field: 400 naming the limit on every write, never 500', async () => {
      for (const [name, method, path, headers, base] of writes()) {
        const body = deepBody(16_000, base);
        expect(body.length).toBeGreaterThan(32_000);
        const res = await (t.http as any)[method](path).set(headers).set('Content-Type', 'application/json').send(body);
        expect({ name, status: res.status }).toEqual({ name, status: 400 });
        expectError(res, 400, 'invalid_param_value');
        expect(res.body.error.message).toBe('Request body is nested too deeply: at most 32 levels of objects and arrays');
      }
      // Nothing was written on the way: the key that "rotate" and "revoke" named still works.
      expect((await t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(keyHeaders(fx, fx.keys.skLive))).status).not.toBe(401);
    });

    it('too many keys: 400 naming the limit', async () => {
      const wide = Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`k${i}`, 0]));
      const res = await t.http.post('/v1/identify').set(pub()).send({ userId: 'edge_user', extra: wide });
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toBe('Request body has too many keys: at most 10000 object keys in total');
    });

    it('a body within the bounds is served as before', async () => {
      const res = await t.http
        .post('/v1/identify')
        .set(pub())
        .send({ userId: 'edge_user', anonymousId: 'edge_anon', extra: { a: [[[[{ b: 1 }]]]] } });
      expect(res.status).toBe(200);
    });
  });

  describe('unpaired surrogates and NUL in any accepted string: 400 naming the field', () => {
    const bad = ['lone \ud800 high', 'lone \udc00 low', 'nul \u0000 char'];

    it('grant and revoke reason', async () => {
      for (const text of bad) {
        const g = await t.http
          .post(`/v1/server/customers/${customerId}/grant`)
          .set(sk())
          .send({ entitlementKey: 'pro_access', duration: 'P30D', reason: `Goodwill credit, ${text}` });
        expectError(g, 400, 'invalid_param_value');
        expect(g.body.error.message).toBe('reason: must not contain NUL characters or unpaired surrogates');
        const r = await t.http.post(`/v1/server/customers/${customerId}/revoke`).set(sk()).send({ entitlementKey: 'pro_access', reason: text });
        expectError(r, 400, 'invalid_param_value');
        expect(r.body.error.message).toBe('reason: must not contain NUL characters or unpaired surrogates');
      }
      const read = await t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(sk());
      expect(read.status).toBe(200);
      expect(JSON.stringify(read.body)).not.toContain('pro_access');
    });

    it('identify email and userId; a paired surrogate (emoji) is fine', async () => {
      for (const text of bad) {
        const email = await t.http
          .post('/v1/identify')
          .set(sk())
          .send({ userId: 'edge_user', anonymousId: 'edge_anon', email: `a${text}@example.com` });
        expectError(email, 400, 'invalid_param_value');
        expect(email.body.error.message).toBe('email: must not contain NUL characters or unpaired surrogates');
        const user = await t.http
          .post('/v1/identify')
          .set(sk())
          .send({ userId: `edge_${text}`, anonymousId: 'edge_anon_2' });
        expectError(user, 400, 'invalid_param_value');
      }
      const fine = await t.http.post('/v1/identify').set(sk()).send({ userId: 'edge_user', anonymousId: 'edge_anon', email: 'a\ud83d\ude00@example.com' });
      expect(fine.status).toBe(200);
    });

    it('traits: text that cannot be stored is 400 naming the trait, like every other field', async () => {
      const value = await t.http
        .post('/v1/identify')
        .set(sk())
        .send({ userId: 'edge_user', anonymousId: 'edge_anon', traits: { plan: 'pro', bad: 'x\ud800' } });
      expectError(value, 400, 'invalid_param_value');
      expect(value.body.error.message).toContain('traits.bad');
      const key = await t.http
        .post('/v1/identify')
        .set(sk())
        .send({ userId: 'edge_user', anonymousId: 'edge_anon', traits: { plan: 'pro', ['k\u0000']: 'v' } });
      expectError(key, 400, 'invalid_param_value');
      expect(key.body.error.message).toContain('traits');
    });

    it('operator project name and app bundleId', async () => {
      // Counted by name, not in total: other suites create projects in the same database meanwhile.
      const marker = `edge-${Date.now().toString(36)}`;
      const written = async () => (await t.dataSource.query('SELECT count(*)::int AS n FROM projects WHERE name LIKE $1', [`Project ${marker}%`]))[0].n;
      const appsBefore = await t.dataSource.query('SELECT count(*)::int AS n FROM apps WHERE project_id = $1', [fx.projectId]);
      for (const text of bad) {
        const project = await t.http
          .post('/admin/v1/projects')
          .set(operatorAuth())
          .send({ name: `Project ${marker}${text}` });
        expectError(project, 400, 'invalid_param_value');
        expect(project.body.error.message).toBe('name: must not contain NUL characters or unpaired surrogates');
        const app = await t.http
          .post(`/admin/v1/projects/${fx.projectId}/apps`)
          .set(operatorAuth())
          .send({ name: 'ios app', platform: 'ios', bundleId: `com.example${text}` });
        expectError(app, 400, 'invalid_param_value');
      }
      expect(await written()).toBe(0);
      expect(await t.dataSource.query('SELECT count(*)::int AS n FROM apps WHERE project_id = $1', [fx.projectId])).toEqual(appsBefore);
    });
  });

  describe('operator nulls: 400 naming the field, nothing changed', () => {
    const providerOf = async () => (await t.dataSource.query('SELECT * FROM identity_providers WHERE project_id = $1', [fx.projectId]))[0] ?? null;

    it('PUT identity-provider with "jwks": null or "jwksUri": null', async () => {
      const before = await providerOf();
      const cases: [Record<string, unknown>, string][] = [
        [{ issuer: 'https://i.example/', audience: 'a', jwks: null }, 'jwks'],
        [{ issuer: 'https://i.example/', audience: 'a', jwksUri: null }, 'jwksUri'],
        [{ issuer: 'https://i.example/', audience: 'a', jwks: null, jwksUri: null }, 'jwks'],
        [{ issuer: 'https://i.example/', audience: 'a', jwks: null, jwksUri: 'https://i.example/jwks.json' }, 'jwks'],
      ];
      for (const [body, field] of cases) {
        const res = await t.http.put(`/admin/v1/projects/${fx.projectId}/identity-provider`).set(operatorAuth()).send(body);
        expect(res.status).toBe(400);
        expectError(res, 400, 'invalid_param_value');
        expect(res.body.error.message).toMatch(new RegExp(`^${field}\\b`));
      }
      expect(await providerOf()).toEqual(before);
    });

    it('PUT products with {"products": [[]]} and other non-objects', async () => {
      const put = (body: unknown) =>
        t.http
          .put(`/admin/v1/projects/${fx.projectId}/products`)
          .set(operatorAuth())
          .send(body as object);
      const seeded = await put({ products: [{ rail: 'ios_store', productId: 'com.example.pro', entitlementKeys: ['pro_access'] }] });
      expect(seeded.status).toBe(200);
      for (const products of [[[]], [null], [1], ['x'], [[{ rail: 'ios_store' }]]]) {
        const res = await put({ products });
        expectError(res, 400, 'invalid_param_value');
        expect(res.body.error.message).toMatch(/^products(\[0\])?[: ]/);
      }
      const after = await t.http.get(`/admin/v1/projects/${fx.projectId}/products`).set(operatorAuth());
      expect(after.body.products).toEqual(seeded.body.products);
    });
  });

  describe('jwksUri: https and public addresses only', () => {
    const put = (projectId: string, jwksUri: string) =>
      t.http.put(`/admin/v1/projects/${projectId}/identity-provider`).set(operatorAuth()).send({ issuer: ISSUER, audience: AUDIENCE, jwksUri });

    it('refuses non-https and loopback, private, link-local targets (IPv4 and IPv6, literal or resolved); nothing stored', async () => {
      const project = await createProjectWithApp(t);
      const refused: [string, RegExp][] = [
        ['http://auth.example.com/jwks.json', /^jwksUri must be an https URL/],
        ['ftp://auth.example.com/jwks.json', /^jwksUri /],
        ['https://127.0.0.1/jwks.json', /non-public/],
        ['https://127.1.2.3:8443/jwks.json', /non-public/],
        ['https://localhost/jwks.json', /non-public/],
        ['https://10.0.0.8/jwks.json', /non-public/],
        ['https://172.20.1.1/jwks.json', /non-public/],
        ['https://192.168.1.1/jwks.json', /non-public/],
        ['https://169.254.169.254/latest/meta-data', /non-public/],
        ['https://100.64.0.1/jwks.json', /non-public/],
        ['https://0.0.0.0/jwks.json', /non-public/],
        ['https://[::1]/jwks.json', /non-public/],
        ['https://[::]/jwks.json', /non-public/],
        ['https://[fe80::1]/jwks.json', /non-public/],
        ['https://[fd00::1]/jwks.json', /non-public/],
        ['https://[::ffff:127.0.0.1]/jwks.json', /non-public/],
        ['https://[::ffff:a9fe:a9fe]/jwks.json', /non-public/],
        ['https://[64:ff9b::a00:1]/jwks.json', /non-public/],
        ['https://[2002:c0a8:101::1]/jwks.json', /non-public/],
        ['https://2130706433/jwks.json', /^jwksUri /], // 127.0.0.1 as one number
      ];
      for (const [uri, message] of refused) {
        const res = await put(project.projectId, uri);
        expect({ uri, status: res.status }).toEqual({ uri, status: 400 });
        expectError(res, 400, 'invalid_param_value');
        expect({ uri, message: res.body.error.message }).toEqual({ uri, message: expect.stringMatching(message) });
      }
      expect(await t.dataSource.query('SELECT 1 FROM identity_providers WHERE project_id = $1', [project.projectId])).toEqual([]);
      // A public address is accepted.
      const ok = await put(project.projectId, 'https://93.184.215.14/.well-known/jwks.json');
      expect(ok.status).toBe(200);
    });

    it('a stored URI that points somewhere private is never fetched', async () => {
      let connections = 0;
      const server = createTcpServer((socket) => {
        connections += 1;
        socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const kit = await identityProviderKit(t);
        for (const uri of [`https://127.0.0.1:${port}/jwks.json`, `https://localhost:${port}/jwks.json`, `http://127.0.0.1:${port}/jwks.json`]) {
          const project = await createProjectWithApp(t);
          await identityProviderStoredWith(t.dataSource, project.projectId, { issuer: ISSUER, audience: AUDIENCE, jwksUri: uri });
          const userId = `jwks_user_${project.projectId}`;
          const res = await t.http
            .post('/v1/identify')
            .set(keyHeaders(project, project.keys.pubTest))
            .send({ userId, anonymousId: 'jwks-anon', idToken: await kit.token({ sub: userId }) });
          expect(res.status).toBe(401);
        }
        expect(connections).toBe(0);
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });

    it('JWKS_ALLOW_PRIVATE=true is refused in production', async () => {
      await expect(createTestApp({ JWKS_ALLOW_PRIVATE: 'true', NODE_ENV: 'production', TEST_CLOCK: 'off' })).rejects.toThrow(
        'JWKS_ALLOW_PRIVATE=true is refused when NODE_ENV=production',
      );
    });
  });

  describe("responses written by Node's HTTP parser carry the envelope and a request id", () => {
    it('a declared Content-Length over the route limit: 413 at once, before the body is read, connection closed', async () => {
      const port = await listen(t);
      const started = Date.now();
      const cases = [
        `POST /v1/identify HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${fx.keys.skTest}\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\n\r\n{"userId":`,
        // No key: the size is refused before authentication reads anything.
        `POST /v1/identify HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\n\r\n`,
        `POST /v1/webhooks/card_payments/proj_nope HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\n\r\n`,
      ];
      for (const request of cases) {
        const res = await rawExchange(port, [request], 5_000);
        expectError(res, 413, 'invalid_param_value');
        expect(res.headers.connection).toBe('close');
      }
      // Any refusal before the body is read closes the connection too (here 401, no key).
      const unauthenticated = await rawExchange(
        port,
        ['POST /v1/identify HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n'],
        5_000,
      );
      expectError(unauthenticated, 401, 'missing_api_key');
      expect(unauthenticated.headers.connection).toBe('close');
      expect(Date.now() - started).toBeLessThan(5_000);
      // Within the limit, the same route reads the body as before.
      const fine = await rawExchange(port, [
        `POST /v1/identify HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${fx.keys.skTest}\r\nContent-Type: application/json\r\nContent-Length: 42\r\nConnection: close\r\n\r\n{"userId":"edge_user","anonymousId":"e_a"}`,
      ]);
      expect(fine.status).toBe(200);
    });

    it('a request without Host: 400 with the envelope, connection closed', async () => {
      const port = await listen(t);
      const res = await rawExchange(port, ['GET /v1/healthz HTTP/1.1\r\n\r\n'], 5_000);
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toMatch(/Host/);
    });

    it('Expect other than 100-continue: 417 with the envelope, connection closed; 100-continue goes on', async () => {
      const port = await listen(t);
      const res = await rawExchange(port, ['POST /v1/identify HTTP/1.1\r\nHost: localhost\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n{}'], 5_000);
      expectError(res, 417, 'invalid_param_value');
      expect(res.body.error.message).toMatch(/Expect/);
      const cont = await rawExchange(port, [
        `POST /v1/identify HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${fx.keys.skTest}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: 42\r\nConnection: close\r\n\r\n{"userId":"edge_user","anonymousId":"e_a"}`,
      ]);
      expect(cont.text).toMatch(/HTTP\/1\.1 200 OK/);
    });

    it('a 20 KB URL: 431', async () => {
      const port = await listen(t);
      const res = await rawExchange(port, [`GET /v1/entitlements?x=${'a'.repeat(20 * 1024)} HTTP/1.1\r\nHost: localhost\r\n\r\n`]);
      expectError(res, 431, 'invalid_param_value');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it('a bad header line or request line: 400', async () => {
      const port = await listen(t);
      for (const request of [
        'GET /v1/healthz HTTP/1.1\r\nHost: localhost\r\nBad Header Line\r\n\r\n',
        'GET /v1/healthz HTTP/1.1\r\nHost: localhost\r\nX-Bad\u0001: 1\r\n\r\n',
        'NOT A REQUEST LINE\r\n\r\n',
        'GET /v1/healthz HTTP/9.9\r\n\r\n',
        'POST /v1/identify HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      ]) {
        const res = await rawExchange(port, [request]);
        expect({ request, status: res.status }).toEqual({ request, status: 400 });
        expectError(res, 400, 'invalid_param_value');
        expect(res.body.error.message).toBe('Malformed HTTP request');
      }
    });

    it('well-formed requests on the same server are unaffected', async () => {
      const port = await listen(t);
      const res = await rawExchange(port, ['GET /v1/healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n']);
      expect(res.status).toBe(200);
      expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
    });
  });

  describe('requests the router refuses and odd headers keep the edge envelope and headers', () => {
    const send = async (request: string) => rawExchange(await listen(t), [request]);

    it('a malformed percent-encoding on an unknown path: the unknown-route envelope, with the edge headers', async () => {
      const res = await send('GET /v1/%zz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      expectError(res, 400, 'missing_required_param');
      expect(res.body.error.message).toBe('Unknown route: GET /v1/%zz');
      expect(res.headers.vary).toBe('Origin');
      const admin = await send('GET /admin/%zz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
      expectError(admin, 401, 'invalid_operator_token');
    });

    it('a malformed percent-encoding in a parameter of a known route: 400 invalid_param_value', async () => {
      const res = await send(
        `GET /v1/server/customers/%E0%A4%A/entitlements HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${sk().Authorization}\r\nConnection: close\r\n\r\n`,
      );
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toBe('Malformed percent-encoding in the request path');
    });

    it('a preflight on such a path is answered like any preflight: 204', async () => {
      const res = await send('OPTIONS /v1/%zz HTTP/1.1\r\nHost: localhost\r\nOrigin: https://app.example\r\nConnection: close\r\n\r\n');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
    });

    it('a Content-Type that is not a media type is ignored, so the key is still checked first', async () => {
      const res = await t.http.post('/v1/identify').set('Content-Type', 'garbage').send('{"userId":"u"}');
      expectError(res, 401, 'missing_api_key');
      const keyed = await t.http.post('/v1/identify').set(sk()).set('Content-Type', 'garbage').send('{"userId":"u"}');
      // The body is not read as JSON, as when no type is sent.
      expectError(keyed, 400, 'invalid_param_value');
      expect(keyed.body.error.message).toBe('userId is required');
    });

    it('the headers the service sets keep their documented spelling on the wire', async () => {
      const res = await send(
        `GET /v1/entitlements?customerId=${customerId} HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${sk().Authorization}\r\nConnection: close\r\n\r\n`,
      );
      expect(res.status).toBe(200);
      for (const name of ['X-Request-Id', 'Cache-Control', 'Vary', 'Access-Control-Expose-Headers']) expect(res.text).toContain(`\r\n${name}: `);
    });
  });

  describe('timeouts', () => {
    it('the server timeouts default to 20 s for headers, 30 s for the request, 65 s keep-alive', () => {
      const server: Server = t.app.getHttpServer();
      expect({ headers: server.headersTimeout, request: server.requestTimeout, keepAlive: server.keepAliveTimeout }).toEqual({
        headers: 20_000,
        request: 30_000,
        keepAlive: 65_000,
      });
      expect(t.config.dbStatementTimeoutMs).toBe(5_000);
      expect(t.config.dbPoolAcquireTimeoutMs).toBe(2_000);
    });

    describe('slow clients (small timeouts)', () => {
      let slow: TestApp;
      beforeAll(async () => {
        slow = await createTestApp({ HTTP_HEADERS_TIMEOUT_MS: '400', HTTP_REQUEST_TIMEOUT_MS: '800' });
      });
      afterAll(async () => slow.close());

      it('a body that never completes: 408 with the envelope, connection closed', async () => {
        const port = await listen(slow);
        const res = await rawExchange(port, [
          `POST /v1/identify HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${fx.keys.skTest}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"userId":`,
        ]);
        expectError(res, 408, 'request_timeout');
      });

      it('headers that never complete: 408 with the envelope, connection closed', async () => {
        const port = await listen(slow);
        const res = await rawExchange(port, ['POST /v1/identify HTTP/1.1\r\nHost: localhost\r\nX-Slow: 1\r\n']);
        expectError(res, 408, 'request_timeout');
      });
    });

    it('a statement that waits past DB_STATEMENT_TIMEOUT_MS (a locked table): 500 internal_error, and the app recovers', async () => {
      // The lock is taken in a database of its own: suites running in parallel on the shared
      // database must never wait on it.
      const database = await createTestDatabase();
      const lines: Record<string, unknown>[] = [];
      const short = await createTestApp(
        { DATABASE_URL: database.url, DB_STATEMENT_TIMEOUT_MS: '300', LOG_LEVEL: 'error' },
        { onLogLine: (line) => lines.push(line) },
      );
      const locker = short.dataSource.createQueryRunner();
      try {
        const own = await createProjectWithApp(short);
        const ownSk = keyHeaders(own, own.keys.skTest);
        const identified = await short.http.post('/v1/identify').set(ownSk).send({ userId: 'edge_locked_user', anonymousId: 'edge_locked_anon' });
        expect(identified.status).toBe(200);
        const path = `/v1/server/customers/${identified.body.serviceCustomerId}/entitlements`;
        await locker.connect();
        await locker.startTransaction();
        await locker.query('LOCK TABLE customers IN ACCESS EXCLUSIVE MODE');
        const res = await short.http.get(path).set(ownSk);
        expectError(res, 500, 'internal_error');
        expect(lines.some((line) => line.msg === 'database call timed out' && (line.err as { code?: string }).code === '57014')).toBe(true);
        await locker.rollbackTransaction();
        const after = await short.http.get(path).set(ownSk);
        expect(after.status).toBe(200);
      } finally {
        if (locker.isTransactionActive) await locker.rollbackTransaction();
        await locker.release();
        await short.close();
        await dropTestDatabase(database);
      }
    });

    it('waiting for a pooled connection past DB_POOL_ACQUIRE_TIMEOUT_MS: 500 internal_error', async () => {
      const lines: Record<string, unknown>[] = [];
      const tiny = await createTestApp({ DB_POOL_SIZE: '1', DB_POOL_ACQUIRE_TIMEOUT_MS: '200', LOG_LEVEL: 'error' }, { onLogLine: (line) => lines.push(line) });
      const holder = tiny.dataSource.createQueryRunner();
      try {
        await holder.connect(); // the pool's only connection
        const res = await tiny.http.get(`/v1/server/customers/${customerId}/entitlements`).set(sk());
        expectError(res, 500, 'internal_error');
        expect(lines.some((line) => line.msg === 'database call timed out')).toBe(true);
        await holder.release();
        const after = await tiny.http.get(`/v1/server/customers/${customerId}/entitlements`).set(sk());
        expect(after.status).toBe(200);
      } finally {
        await holder.release().catch(() => undefined);
        await tiny.close();
      }
    });
  });
});
