import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ERROR_CATALOGUE, derivedOperationId } from '#platform';
import { createTestApp, type TestApp } from '../support/test-app.js';

type Json = Record<string, any>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

function operationsOf(doc: Json): { path: string; method: string; op: Json }[] {
  return Object.entries<Json>(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] })));
}

/** Every `$ref` of the document resolves inside it. */
function unresolvedRefs(doc: Json): string[] {
  const missing: string[] = [];
  const pending: unknown[] = [doc];
  while (pending.length > 0) {
    const value = pending.pop();
    if (Array.isArray(value)) pending.push(...value);
    else if (value && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (key === '$ref' && typeof child === 'string') {
          const target = child
            .slice(2)
            .split('/')
            .reduce<any>((node, part) => node?.[part], doc);
          if (target === undefined) missing.push(child);
        } else pending.push(child);
      }
    }
  }
  return missing;
}

/** The official OpenAPI 3 JSON Schema's verdict on `doc` (see test/support/openapi-schema-check.mjs). */
function validateAgainstOpenApiSchema(doc: Json): { valid: boolean; version: string; errors: unknown[] } {
  const run = spawnSync(process.execPath, [path.join(__dirname, '../support/openapi-schema-check.mjs')], { input: JSON.stringify(doc), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout);
}

/** `status code` pairs an operation documents, read from its examples. */
function documentedCodes(op: Json): string[] {
  return Object.entries<Json>(op.responses)
    .filter(([status]) => Number(status) >= 400)
    .flatMap(([status, response]) => Object.keys(response.content?.['application/json']?.examples ?? {}).map((code) => `${status} ${code}`));
}

/** Properties typed `number` anywhere in the components. */
function numberFields(doc: Json): string[] {
  const found: string[] = [];
  for (const [name, schema] of Object.entries<Json>(doc.components.schemas)) {
    for (const [property, child] of Object.entries<Json>(schema.properties ?? {})) if (child.type === 'number') found.push(`${name}.${property}`);
  }
  return found.sort();
}

describe('OpenAPI document (API documentation)', () => {
  let t: TestApp;
  let doc: Json;
  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.http.get('/docs/json')).body;
  });
  afterAll(async () => t.close());

  it('is a well-formed OpenAPI 3 document: info, paths, responses on every operation, every $ref resolves', () => {
    expect(doc.openapi).toMatch(/^3\.\d+\.\d+$/);
    expect(doc.info).toEqual(expect.objectContaining({ title: expect.any(String), version: 'v1' }));
    for (const { path, method, op } of operationsOf(doc)) {
      expect({ path, method, responses: Object.keys(op.responses ?? {}).length > 0 }).toEqual({ path, method, responses: true });
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        expect({ path, status, description: typeof response.description === 'string' && response.description.length > 0 }).toEqual({
          path,
          status,
          description: true,
        });
      }
    }
    expect(unresolvedRefs(doc)).toEqual([]);
  });

  it('validates against the official OpenAPI 3 JSON Schema, with and without the operator API', async () => {
    expect(validateAgainstOpenApiSchema(doc)).toEqual({ valid: true, version: expect.stringMatching(/^3\./), errors: [] });
    const off = await createTestApp({ OPERATOR_TOKEN: '' });
    try {
      expect(validateAgainstOpenApiSchema((await off.http.get('/docs/json')).body).valid).toBe(true);
    } finally {
      await off.close();
    }
  });

  it('the validator is not a rubber stamp: a broken document fails it', () => {
    const broken = JSON.parse(JSON.stringify(doc));
    broken.paths['/v1/identify'].post.responses['200'] = { content: {} }; // a response without its required description
    expect(validateAgainstOpenApiSchema(broken).valid).toBe(false);
  });

  it("each error status describes that endpoint's own codes, with an example body per code", () => {
    for (const { path, method, op } of operationsOf(doc)) {
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        if (Number(status) < 400 || path === '/v1/readyz') continue;
        const examples = response.content?.['application/json']?.examples ?? {};
        const codes = Object.keys(examples);
        expect({ path, method, status, codes: codes.length > 0 }).toEqual({ path, method, status, codes: true });
        for (const code of codes) {
          const body = examples[code].value;
          expect({ path, status, code, body }).toEqual({
            path,
            status,
            code,
            body: expect.objectContaining({
              error: expect.objectContaining({
                code,
                type: ERROR_CATALOGUE[Number(status)][code].type,
                message: expect.any(String),
                request_id: expect.stringMatching(/^req_/),
              }),
            }),
          });
          expect(response.description).toContain(`\`${code}\``);
        }
      }
    }
  });

  it('the codes follow each route: its key kinds, scopes, buckets, idempotency and handler', () => {
    const codes = (path: string, method = 'post') => documentedCodes(doc.paths[path][method]);
    // A secret-only endpoint never answers the publishable key's origin checks; a publishable one does.
    expect(codes('/v1/server/customers/{customerId}/grant')).toEqual(
      expect.arrayContaining([
        '400 missing_required_param',
        '400 invalid_customer',
        '401 missing_api_key',
        '401 invalid_api_key',
        '401 key_revoked',
        '500 internal_error',
        '503 internal_error',
      ]),
    );
    expect(codes('/v1/server/customers/{customerId}/grant')).not.toContain('403 origin_not_allowed');
    expect(codes('/v1/entitlements', 'get')).toEqual(
      expect.arrayContaining(['400 missing_customer', '400 invalid_customer', '403 origin_not_allowed', '403 bundle_id_not_allowed', '429 rate_limited']),
    );
    expect(codes('/v1/entitlements', 'get')).not.toContain('400 idempotency_key_in_use');
    // The spec's own list for identify: a missing userId or anonymousId is invalid_param_value.
    expect(codes('/v1/identify').filter((code) => code.startsWith('400') || code.startsWith('401 identity') || code.startsWith('429'))).toEqual([
      '400 invalid_param_value',
      '401 identity_token_invalid',
      '429 rate_limited',
    ]);
    expect(codes('/v1/purchases/sync')).toEqual(expect.arrayContaining(['400 idempotency_key_in_use', '403 env_mismatch', '429 rate_limited']));
    expect(codes('/v1/events')).toEqual(expect.arrayContaining(['403 env_mismatch', '426 sdk_version_unsupported', '429 rate_limited']));
    expect(codes('/v1/releases/sourcemaps')).toEqual(expect.arrayContaining(['400 invalid_release', '403 env_mismatch']));
    expect(codes('/v1/server/errors/issues', 'get')).toContain('403 insufficient_scope');
    // Operator routes: the operator token and unknown ids; no API key codes.
    expect(codes('/admin/v1/projects')).toEqual(expect.arrayContaining(['401 invalid_operator_token', '404 resource_missing']));
    expect(codes('/admin/v1/projects').filter((code) => code.includes('api_key'))).toEqual([]);
    // Store webhooks: no API key; their own signature and, for Android, the store's API.
    expect(codes('/v1/webhooks/android_store/{projectId}')).toEqual(
      expect.arrayContaining(['400 invalid_signature', '404 resource_missing', '503 rail_unavailable']),
    );
    expect(codes('/v1/webhooks/ios_store/{projectId}').filter((code) => code.startsWith('401'))).toEqual([]);
    // Health and the version manifest answer no client error.
    expect(codes('/v1/healthz', 'get')).toEqual(['500 internal_error']);
    expect(doc.paths['/v1/events'].post.responses['426'].content['application/json'].examples.sdk_version_unsupported.value).toEqual(
      expect.objectContaining({ minVersion: expect.any(String), surface: expect.any(String) }),
    );
    expect(Object.keys(doc.paths['/v1/purchases/sync'].post.responses['503'].headers)).toContain('Retry-After');
    expect(Object.keys(doc.paths['/v1/purchases/sync'].post.responses['200'].headers)).toContain('Idempotent-Replayed');
    expect(Object.keys(doc.paths['/v1/identify'].post.responses['200'].headers)).not.toContain('Idempotent-Replayed');
  });

  it('operationIds are unique; every tag used is declared; the public API comes before the operator API', () => {
    const ops = operationsOf(doc);
    const ids = ops.map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // Named for a generated client's methods: camelCase, never the framework's `Controller_method[0]`.
    expect(ids.filter((id) => !/^[a-z][A-Za-z0-9]+$/.test(id))).toEqual([]);
    const declared = doc.tags.map((tag: Json) => tag.name);
    const used = new Set(ops.flatMap(({ op }) => op.tags ?? []));
    for (const tag of used) expect(declared).toContain(tag);
    expect(declared[declared.length - 1]).toBe('operator');
    const paths = Object.keys(doc.paths);
    const firstOperator = paths.findIndex((p) => p.startsWith('/admin/'));
    expect(firstOperator).toBeGreaterThan(0);
    expect(paths.slice(firstOperator).every((p) => p.startsWith('/admin/'))).toBe(true);
  });

  it('API keys and the operator token are not described as JWTs', () => {
    for (const scheme of Object.values<Json>(doc.components.securitySchemes)) {
      expect(scheme.bearerFormat).toBeUndefined();
      if (scheme.type === 'http') expect(scheme.description).toMatch(/opaque, not a JWT/);
    }
  });

  it('Service-Sdk-Version is declared once per operation and optional', () => {
    for (const { path, op } of operationsOf(doc)) {
      const sdk = (op.parameters ?? []).filter((p: Json) => p.in === 'header' && p.name.toLowerCase() === 'service-sdk-version');
      expect({ path, count: sdk.length <= 1 }).toEqual({ path, count: true });
      for (const parameter of sdk) expect(parameter.required).toBe(false);
    }
  });

  it('response headers: X-Request-Id and Cache-Control on every response, Retry-After and X-Service-Sample-Rate on 429', () => {
    for (const { path, op } of operationsOf(doc)) {
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        expect({ path, status, headers: Object.keys(response.headers ?? {}) }).toEqual({
          path,
          status,
          headers: expect.arrayContaining(['X-Request-Id', 'Cache-Control', ...(status === '429' ? ['Retry-After', 'X-Service-Sample-Rate'] : [])]),
        });
      }
    }
    expect(doc.components.headers['X-Request-Id'].schema.pattern).toBe('^req_[0-9a-f]{24}$');
  });

  it('the 426 body carries minVersion and surface', () => {
    const events = doc.paths['/v1/events'].post.responses['426'];
    const schema = doc.components.schemas[events.content['application/json'].schema.$ref.split('/').pop()];
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['error', 'minVersion', 'surface']));
  });

  it('integers are typed integer; only the fractional fields stay number', () => {
    expect(numberFields(doc)).toEqual(['BucketRuleView.burst', 'BucketRuleView.sustained', 'ThrottledView.sampleRate']);
    expect(doc.components.schemas.PublicEntitlement.properties.updatedAt.type).toBe('integer');
  });

  it('the operator section is documented only when the operator API is on', async () => {
    const off = await createTestApp({ OPERATOR_TOKEN: '' });
    try {
      const plain = (await off.http.get('/docs/json')).body;
      expect(Object.keys(plain.paths).filter((p) => p.startsWith('/admin/'))).toEqual([]);
      expect(plain.tags.map((tag: Json) => tag.name)).not.toContain('operator');
      expect(Object.keys(plain.components.securitySchemes)).not.toContain('operatorToken');
      expect(plain.components.schemas.CreateProjectDto).toBeUndefined();
      expect(plain.paths['/v1/identify']).toBeDefined();
      expect(unresolvedRefs(plain)).toEqual([]);
    } finally {
      await off.close();
    }
  });

  it('operation ids are the client names the routes declare', () => {
    const byRoute = new Map(operationsOf(doc).map(({ path, method, op }) => [`${method} ${path}`, op.operationId]));
    expect(derivedOperationId('post', '/v1/server/customers/{customerId}/grant')).toBe('postServerCustomersByCustomerIdGrant');
    expect(byRoute.get('post /v1/identify')).toBe('identify');
    expect(byRoute.get('post /v1/identity/forget')).toBe('forgetIdentity');
    expect(byRoute.get('post /v1/resolve')).toBe('resolve');
    expect(byRoute.get('get /v1/entitlements')).toBe('getEntitlements');
    expect(byRoute.get('get /v1/server/customers/{customerId}/entitlements')).toBe('getCustomerEntitlements');
    expect(byRoute.get('post /v1/server/customers/{customerId}/grant')).toBe('grantEntitlement');
    expect(byRoute.get('post /v1/server/customers/{customerId}/revoke')).toBe('revokeEntitlement');
    expect(byRoute.get('post /v1/events')).toBe('sendEvents');
    expect(byRoute.get('get /v1/config')).toBe('getConfig');
    expect([...byRoute].filter(([route]) => route.includes(' /admin/')).every(([, id]) => id.startsWith('admin'))).toBe(true);
    // Legacy aliases are accepted but documented once, under the canonical path.
    expect(doc.paths['/v1/identity/alias']).toBeUndefined();
    expect(doc.paths['/v1/purchases']).toBeUndefined();
    expect(byRoute.get('post /v1/purchases/sync')).toBe('syncPurchase');
  });

  it('keyless operations say so with security: []; servers is not empty', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    for (const { path, method, op } of operationsOf(doc)) {
      const keyless =
        ['/v1/healthz', '/v1/readyz', '/v1/sdk/versions'].includes(path) ||
        path.startsWith('/v1/webhooks/') ||
        (path === '/console/api/session' && method === 'post');
      if (keyless) expect({ path, method, security: op.security }).toEqual({ path, method, security: [] });
      else expect({ path, method, secured: op.security?.length > 0 }).toEqual({ path, method, secured: true });
    }
  });

  it('free-form maps carry their value types and fixed shapes are schemas: no object schema is left open', () => {
    const open: string[] = [];
    const visit = (node: unknown, where: string) => {
      if (Array.isArray(node)) return node.forEach((child, index) => visit(child, `${where}[${index}]`));
      if (!node || typeof node !== 'object') return;
      const schema = node as Json;
      if (schema.type === 'object' && !schema.properties && !schema.additionalProperties && !schema.allOf) open.push(where);
      for (const [key, child] of Object.entries(schema)) if (key !== 'example' && key !== 'examples') visit(child, `${where}.${key}`);
    };
    visit(doc.paths, 'paths');
    visit(doc.components.schemas, 'schemas');
    expect(open).toEqual([]);
    const traits = doc.components.schemas.IdentifyDto.properties.traits;
    expect(traits).toEqual(
      expect.objectContaining({
        type: 'object',
        additionalProperties: {
          anyOf: [
            { type: 'string', maxLength: 1024, nullable: true },
            { type: 'number', nullable: true },
            { type: 'boolean', nullable: true },
          ],
        },
      }),
    );
    const jwks = doc.components.schemas.PutIdentityProviderDto.properties.jwks;
    const jwksSchema =
      doc.components.schemas[
        String(jwks.$ref ?? jwks.allOf[0].$ref)
          .split('/')
          .pop() as string
      ];
    expect(jwksSchema.properties.keys.items.$ref).toBe('#/components/schemas/JsonWebKeyView');
    expect(doc.components.schemas.JsonWebKeyView.required).toEqual(['kty']);
    const denyList = doc.components.schemas.AppConfigView.properties.errorNoiseDenyList;
    expect(JSON.stringify(denyList)).toContain('#/components/schemas/ErrorNoiseDenyListView');
    expect(Object.keys(doc.components.schemas.ErrorNoiseDenyListView.properties)).toEqual(['version', 'patterns']);
    const token = doc.paths['/v1/webhooks/android_store/{projectId}'].post.parameters.find((p: Json) => p.name === 'token');
    expect(token).toEqual(expect.objectContaining({ in: 'query', required: true, schema: { type: 'string' } }));
  });

  it('serves the Redoc page and its bundle from this origin, with a strict content security policy', async () => {
    const page = await t.http.get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.text).toContain('<div id="redoc"></div>');
    const init = await t.http.get('/docs/redoc-init.js');
    expect(init.status).toBe(200);
    expect(init.text).toContain("init('./json'");
    const bundle = await t.http.get('/docs/redoc.standalone.js');
    expect(bundle.status).toBe(200);
    expect(bundle.headers['content-type']).toMatch(/javascript/);
    expect(bundle.text.length).toBeGreaterThan(100_000);
    const yaml = await t.http.get('/docs/yaml');
    expect(yaml.status).toBe(200);
    expect(yaml.text).toContain('openapi: 3.');
  });

  it('DOCS_ENABLED=false: every /docs path answers 404 with the envelope; production leaves the docs off unless asked', async () => {
    const off = await createTestApp({ DOCS_ENABLED: 'false' });
    try {
      for (const path of ['/docs', '/docs/', '/docs/json', '/docs/yaml', '/docs/redoc.standalone.js']) {
        const res = await off.http.get(path);
        expect({ path, status: res.status, code: res.body?.error?.code, requestId: res.headers['x-request-id'] }).toEqual({
          path,
          status: 404,
          code: 'resource_missing',
          requestId: expect.stringMatching(/^req_/),
        });
      }
      expect((await off.http.get('/v1/healthz')).status).toBe(200);
    } finally {
      await off.close();
    }
    const production = await createTestApp({
      NODE_ENV: 'production',
      TEST_CLOCK: 'off',
      OPERATOR_TOKEN: randomBytes(32).toString('base64'),
      WEBHOOK_SIGNING_KEY: randomBytes(32).toString('base64'),
      PUBLIC_BASE_URL: 'https://api.example.com',
    });
    try {
      expect(production.config.docsEnabled).toBe(false);
      expect((await production.http.get('/docs/json')).status).toBe(404);
    } finally {
      await production.close();
    }
  });

  it('the operator part is documented only when asked (DOCS_OPERATOR=true), even with the operator API on', async () => {
    const plain = await createTestApp({ DOCS_OPERATOR: 'false' });
    try {
      expect(plain.config.operatorToken).toBeDefined();
      const document = (await plain.http.get('/docs/json')).body;
      expect(Object.keys(document.paths).filter((p) => p.startsWith('/admin/'))).toEqual([]);
      expect(Object.keys(document.components.securitySchemes)).not.toContain('operatorToken');
      expect(document.paths['/v1/identify'].post.operationId).toBe('identify');
    } finally {
      await plain.close();
    }
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/admin/v1/'))).toBe(true);
  });
});
