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

/** Properties typed `number` anywhere in the components. */
function numberFields(doc: Json): string[] {
  const found: string[] = [];
  for (const [name, schema] of Object.entries<Json>(doc.components.schemas)) {
    for (const [property, child] of Object.entries<Json>(schema.properties ?? {})) if (child.type === 'number') found.push(`${name}.${property}`);
  }
  return found.sort();
}

describe('OpenAPI document (issue 16, API documentation)', () => {
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

  it('operationIds are unique; every tag used is declared; the public API comes before the operator API', () => {
    const ops = operationsOf(doc);
    const ids = ops.map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
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
});
