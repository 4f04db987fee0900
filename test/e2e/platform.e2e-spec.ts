import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectTypedError } from '../support/expect-error.js';

const REQUEST_ID = /^req_[0-9a-f]{24}$/;

describe('platform: HTTP edge, health, versions, docs, operator auth, test clock', () => {
  let t: TestApp;
  let fx: ProjectFixture;
  /** Bodies are read only once the route's caller is authenticated: parser errors need a valid key. */
  const withKey = () => keyHeaders(fx, fx.keys.skTest);
  beforeAll(async () => {
    t = await createTestApp();
    fx = await createProjectWithApp(t);
  });
  afterAll(async () => t.close());

  describe('GET /v1/healthz', () => {
    it('answers with the spec fields, no-store and a request id', async () => {
      const res = await t.http.get('/v1/healthz');
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
      expect(res.body).toEqual({ status: 'ok', service: 'entitlements-v1', timestamp: expect.any(Number), region: 'local' });
      expect(Math.abs(res.body.timestamp - t.clock.nowMs())).toBeLessThan(5000);
    });

    it('reports SERVICE_NAME and REGION', async () => {
      const other = await createTestApp({ SERVICE_NAME: 'billing', REGION: 'eu-west-1' });
      try {
        const res = await other.http.get('/v1/healthz');
        expect(res.body).toEqual(expect.objectContaining({ service: 'billing-v1', region: 'eu-west-1' }));
      } finally {
        await other.close();
      }
    });

    it('the bare /healthz does not reach the API', async () => {
      const res = await t.http.get('/healthz');
      expectTypedError(res, 400, 'invalid_request_error', 'missing_required_param');
    });
  });

  describe('GET /v1/sdk/versions', () => {
    it('lists latest and minSupported for every surface, cacheable for 300 s', async () => {
      const res = await t.http.get('/v1/sdk/versions');
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('public, max-age=300');
      expect(res.body.object).toBe('sdk_versions');
      expect(Object.keys(res.body.surfaces).sort()).toEqual(['android', 'node', 'react-native', 'swift', 'web']);
      for (const entry of Object.values<any>(res.body.surfaces)) {
        expect(entry).toEqual({
          name: expect.any(String),
          latest: expect.stringMatching(/^\d+\.\d+\.\d+/),
          minSupported: expect.stringMatching(/^\d+\.\d+\.\d+/),
        });
      }
      expect(res.body.generatedAt).toEqual(expect.any(Number));
    });

    it('is also served without the /v1 prefix', async () => {
      const res = await t.http.get('/sdk/versions');
      expect(res.status).toBe(200);
      expect(res.body.object).toBe('sdk_versions');
    });
  });

  describe('errors', () => {
    it('unknown route: 400 missing_required_param naming method and path', async () => {
      const res = await t.http.delete('/v1/no/such/thing?x=1');
      expectTypedError(res, 400, 'invalid_request_error', 'missing_required_param');
      expect(res.body.error.message).toContain('DELETE');
      expect(res.body.error.message).toContain('/v1/no/such/thing');
    });

    it('unknown route without prefix names the path the client sent', async () => {
      const res = await t.http.get('/nope');
      expectTypedError(res, 400, 'invalid_request_error', 'missing_required_param');
      expect(res.body.error.message).toContain('GET /nope');
    });

    it('malformed JSON: 400 invalid_param_value', async () => {
      const res = await t.http.post('/v1/events').set(withKey()).set('Content-Type', 'application/json').send('{"events": [');
      expectTypedError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toMatch(/malformed json/i);
    });

    it('without a key the body is never read: malformed JSON is 401 missing_api_key', async () => {
      const res = await t.http.post('/v1/events').set('Content-Type', 'application/json').send('{"events": [');
      expectTypedError(res, 401, 'authentication_error', 'missing_api_key');
    });

    it.each([['[1,2]'], ['"text"'], ['42'], ['null']])('non-object body %s: 400 invalid_param_value', async (body) => {
      const res = await t.http.post('/v1/events').set(withKey()).set('Content-Type', 'application/json').send(body);
      expectTypedError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toMatch(/JSON object/);
    });

    it('a body declared over the 1 MB events limit: 413 invalid_param_value', async () => {
      const big = JSON.stringify({ events: [{ name: 'x', properties: { blob: 'a'.repeat(1024 * 1024) } }] });
      const res = await t.http.post('/v1/events').set(withKey()).set('Content-Type', 'application/json').send(big);
      expectTypedError(res, 413, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toMatch(/1 MB/);
    });

    it('a body just under 1 MB gets past the parser on /v1/events', async () => {
      const body = JSON.stringify({ pad: 'a'.repeat(1024 * 1024 - 100) });
      const res = await t.http.post('/v1/events').set(withKey()).set('Content-Type', 'application/json').send(body);
      expect(res.body.error?.message ?? '').not.toMatch(/exceeds/);
    });

    it('other endpoints keep a smaller default limit', async () => {
      const body = JSON.stringify({ seconds: 1, pad: 'a'.repeat(200 * 1024) });
      const res = await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).set('Content-Type', 'application/json').send(body);
      expectTypedError(res, 413, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toMatch(/100 KB/);
    });

    it('errors are not cacheable and expose the request id to browsers', async () => {
      const res = await t.http.get('/v1/nothing-here');
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['access-control-expose-headers']).toBe('X-Request-Id, Retry-After, X-Service-Sample-Rate, Idempotent-Replayed');
    });
  });

  describe('CORS preflight', () => {
    it.each(['/v1/events', '/events', '/v1/entitlements', '/v1/anything/at/all'])('OPTIONS %s: 204 with the CORS headers', async (path) => {
      const res = await t.http.options(path).set('Origin', 'https://app.example.com').set('Access-Control-Request-Method', 'POST');
      expect(res.status).toBe(204);
      expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
      expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(res.headers['access-control-allow-methods']).toBe('GET, POST, DELETE, OPTIONS');
      expect(res.headers['access-control-allow-headers']).toBe(
        'Authorization, Crossdeck-Api-Key, Crossdeck-Sdk-Version, Service-Api-Key, Service-Sdk-Version, Idempotency-Key, Content-Type',
      );
      expect(res.headers['access-control-max-age']).toBe('600');
    });
  });

  describe('validation pipe (through the operator test clock)', () => {
    it('missing field: missing_required_param naming the field', async () => {
      const res = await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({});
      expectTypedError(res, 400, 'invalid_request_error', 'missing_required_param');
      expect(res.body.error.message).toContain('seconds');
    });

    it.each([['abc'], [-5], [1.5], [0]])('invalid value %p: invalid_param_value naming the field', async (seconds) => {
      const res = await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds });
      expectTypedError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toMatch(/^seconds /);
    });

    it('unknown fields are stripped, never rejected', async () => {
      const res = await t.http
        .post('/admin/v1/test-clock/advance')
        .set(operatorAuth())
        .send({ seconds: 1, context: { a: 1 }, seq: 4 });
      expect(res.status).toBe(200);
    });
  });

  describe('operator auth and test clock', () => {
    it('refuses a missing or wrong operator token with 401 invalid_operator_token', async () => {
      expectTypedError(await t.http.get('/admin/v1/test-clock'), 401, 'authentication_error', 'invalid_operator_token');
      expectTypedError(await t.http.get('/admin/v1/test-clock').set('Authorization', 'Bearer nope'), 401, 'authentication_error', 'invalid_operator_token');
      expectTypedError(
        await t.http.get('/admin/v1/test-clock').set('Authorization', `Bearer cd_sk_test_${'a'.repeat(32)}`),
        401,
        'authentication_error',
        'invalid_operator_token',
      );
    });

    it('reads and advances the clock every time reader uses', async () => {
      const before = await t.http.get('/admin/v1/test-clock').set(operatorAuth());
      expect(before.status).toBe(200);
      expect(before.body).toEqual({ object: 'test_clock', nowMs: expect.any(Number), offsetSeconds: expect.any(Number) });
      const advanced = await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 86400 });
      expect(advanced.status).toBe(200);
      expect(advanced.body.offsetSeconds).toBe(before.body.offsetSeconds + 86400);
      expect(advanced.body.nowMs - before.body.nowMs).toBeGreaterThanOrEqual(86400 * 1000);
      const health = await t.http.get('/v1/healthz');
      expect(health.body.timestamp - Date.now()).toBeGreaterThanOrEqual(86400 * 1000 - 5000);
    });

    it('answers 404 on every /admin path when OPERATOR_TOKEN is unset', async () => {
      const off = await createTestApp({ OPERATOR_TOKEN: '' });
      try {
        expectTypedError(await off.http.get('/admin/v1/test-clock').set(operatorAuth()), 404, 'invalid_request_error', 'resource_missing');
        expectTypedError(await off.http.post('/admin/v1/projects').send({ name: 'x' }), 404, 'invalid_request_error', 'resource_missing');
      } finally {
        await off.close();
      }
    });

    it('the test clock answers 404 when TEST_CLOCK is off', async () => {
      const off = await createTestApp({ TEST_CLOCK: 'off' });
      try {
        expectTypedError(await off.http.get('/admin/v1/test-clock').set(operatorAuth()), 404, 'invalid_request_error', 'resource_missing');
        expectTypedError(
          await off.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 10 }),
          404,
          'invalid_request_error',
          'resource_missing',
        );
      } finally {
        await off.close();
      }
    });
  });

  describe('OpenAPI', () => {
    it('serves the document at /docs/json listing prefixed paths only', async () => {
      const res = await t.http.get('/docs/json');
      expect(res.status).toBe(200);
      const paths = Object.keys(res.body.paths);
      expect(paths).toEqual(expect.arrayContaining(['/v1/healthz', '/v1/sdk/versions', '/admin/v1/test-clock', '/admin/v1/test-clock/advance']));
      // The console's session routes (operator document) are the only ones outside /v1 and /admin/v1.
      expect(paths.filter((p) => !p.startsWith('/v1/') && !p.startsWith('/admin/v1/'))).toEqual(['/console/api/session']);
      expect(res.body.components.securitySchemes).toEqual(
        expect.objectContaining({ apiKeyBearer: expect.any(Object), apiKeyHeader: expect.any(Object), operatorToken: expect.any(Object) }),
      );
      for (const [path, methods] of Object.entries<any>(res.body.paths)) {
        for (const [method, op] of Object.entries<any>(methods)) {
          expect({ path, method, hasError: Object.keys(op.responses).some((s) => Number(s) >= 400) }).toEqual({ path, method, hasError: true });
        }
      }
    });

    it('describes every endpoint: summary, tag, success schema, request body, key security', async () => {
      const doc = (await t.http.get('/docs/json')).body;
      const bodyless = new Set([
        'post /admin/v1/projects/{projectId}/archive',
        'post /admin/v1/keys/{keyId}/revoke',
        'post /admin/v1/jobs/{jobId}/retry',
        'post /admin/v1/workspaces/{workspaceId}/projects/{projectId}',
        'post /admin/v1/workspace-keys/{keyId}/revoke',
        'post /admin/v1/webhook-endpoints/{endpointId}/rotate-secret',
        'post /admin/v1/webhook-endpoints/{endpointId}/test',
        'post /admin/v1/webhook-deliveries/{deliveryId}/retry',
        'post /v1/server/customers/{customerId}/refresh',
        'post /admin/v1/projects/{projectId}/customers/{customerId}/refresh',
        'post /admin/v1/projects/{projectId}/merge-reviews/{reviewId}/approve',
        'post /admin/v1/projects/{projectId}/merge-reviews/{reviewId}/dismiss',
        'post /admin/v1/projects/{projectId}/rails/{rail}/test',
      ]);
      const keyless = new Set(['/v1/healthz', '/v1/readyz', '/v1/sdk/versions']);
      const problems: string[] = [];
      for (const [path, methods] of Object.entries<any>(doc.paths)) {
        for (const [method, op] of Object.entries<any>(methods)) {
          const name = `${method} ${path}`;
          const success = Object.entries<any>(op.responses).filter(([status]) => Number(status) < 300);
          if (success.length === 0) problems.push(`${name}: no success response`);
          for (const [status, response] of success) {
            // JSON answers, and the customer export's CSV.
            const schema = response.content?.['application/json']?.schema ?? response.content?.['text/csv']?.schema;
            if (status !== '204' && !schema) problems.push(`${name}: ${status} has no schema`);
          }
          if (['post', 'put', 'patch'].includes(method) && !op.requestBody && !bodyless.has(name)) problems.push(`${name}: no request body`);
          if (!op.summary) problems.push(`${name}: no summary`);
          if (!op.tags?.length) problems.push(`${name}: no tag`);
          // Store webhooks carry no API key: each rail authenticates its own way (docs/rails.md).
          const railAuthenticated = path.startsWith('/v1/webhooks/');
          // Signing in to the console takes the operator token in its body.
          const consoleSignIn = name === 'post /console/api/session';
          if (!path.startsWith('/admin/') && !keyless.has(path) && !railAuthenticated && !consoleSignIn && !op.security?.length)
            problems.push(`${name}: no API-key security`);
        }
      }
      expect(problems).toEqual([]);
      expect(Object.keys(doc.paths).length).toBeGreaterThanOrEqual(30);
    });

    it('serves the UI at /docs', async () => {
      const res = await t.http.get('/docs');
      expect([200, 301]).toContain(res.status);
    });
  });

  describe('database', () => {
    it('runs on PostgreSQL with the migrations table in place (never synchronize)', async () => {
      const [{ version }] = await t.dataSource.query('SELECT version()');
      expect(version).toMatch(/PostgreSQL/);
      const rows = await t.dataSource.query(`SELECT to_regclass('public.schema_migrations') AS t`);
      expect(rows[0].t).toBe('schema_migrations');
      expect(t.dataSource.options.synchronize).toBe(false);
    });
  });
});
