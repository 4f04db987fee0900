import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';

/**
 * Bounded fuzzing of every public and operator endpoint: routes come from the
 * OpenAPI document; bodies are malformed, oversized, deeply nested, wrongly typed and unicode,
 * from a seeded PRNG (FUZZ_SEED to replay). Invariants: never a 5xx, always the envelope with
 * X-Request-Id on an error, every error code one the OpenAPI document lists for that endpoint,
 * and no row of a tenant table written by a rejected request.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_122);
const BODIES_PER_WRITE = 150;
const QUERIES_PER_READ = 30;
const REQUEST_ID = /^req_[0-9a-f]{24}$/;

/** mulberry32: small, fast, seeded. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Schema {
  type?: string;
  $ref?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  enum?: unknown[];
  allOf?: Schema[];
  additionalProperties?: Schema | boolean;
}

interface Operation {
  method: string;
  path: string;
  bodySchema: Schema | null;
  query: string[];
}

const NASTY_STRINGS = [
  '',
  ' ',
  '\ud800',
  '\udfff',
  'a\u0000b',
  '\u0000',
  '\ud83d\ude00',
  '\u202e\u0627\u0644\u0639\u0631\u0628\u064a\u0629',
  'e\u0301\u0301\u0301',
  '\ufeff',
  '\uffff',
  '%00',
  '%ED%A0%80',
  '../../etc/passwd',
  "'; DROP TABLE customers; --",
  '<script>alert(1)</script>',
  '${jndi:ldap://x}',
  '__proto__',
  'constructor',
  'null',
  '1e309',
  '-0',
  'cdcust_',
  'proj_',
  'x'.repeat(257),
  'x'.repeat(5000),
  '\u0085\u2028\u2029',
];

/** 12,000 keys: past the 10,000-key bound of a body. */
const WIDE_OBJECT = JSON.stringify(Object.fromEntries(Array.from({ length: 12_000 }, (_, i) => [`k${i}`, i])));

const NASTY_NUMBERS = [0, -1, 1.5, -1e-9, 1e21, Number.MAX_SAFE_INTEGER + 2, -Number.MAX_VALUE, 2 ** 31, 2 ** 53];

function resolveSchema(doc: any, schema: Schema | undefined): Schema | undefined {
  let current = schema;
  for (let i = 0; current && i < 10; i++) {
    if (current.$ref) current = doc.components.schemas[current.$ref.split('/').pop()!];
    else if (current.allOf && current.allOf.length === 1) current = current.allOf[0];
    else break;
  }
  return current;
}

class BodyGenerator {
  constructor(
    private readonly random: () => number,
    private readonly doc: any,
  ) {}

  private int(max: number): number {
    return Math.floor(this.random() * max);
  }
  private pick<T>(list: readonly T[]): T {
    return list[this.int(list.length)];
  }

  nastyString(): string {
    if (this.random() < 0.7) return this.pick(NASTY_STRINGS);
    const length = 1 + this.int(40);
    let out = '';
    for (let i = 0; i < length; i++) out += String.fromCharCode(this.int(0x10000));
    return out;
  }

  /** A value of a type other than the schema's (or, sometimes, a nasty value of the right type). */
  wrongValue(schema: Schema | undefined, depth = 0): unknown {
    const resolved = resolveSchema(this.doc, schema);
    const type = resolved?.type;
    const options: (() => unknown)[] = [
      () => null,
      () => this.random() < 0.5,
      () => this.pick(NASTY_NUMBERS),
      () => this.nastyString(),
      () => [],
      () => ({}),
      () => [this.nastyString()],
      () => ({ [this.nastyString()]: this.nastyString() }),
    ];
    if (type === 'object' && resolved?.properties && depth < 3) options.push(() => this.objectFor(resolved, depth + 1));
    if (type === 'array' && depth < 3) options.push(() => Array.from({ length: this.int(4) }, () => this.wrongValue(resolved?.items, depth + 1)));
    if (resolved?.enum) options.push(() => `${String(this.pick(resolved.enum!))}\u0000`);
    return this.pick(options)();
  }

  objectFor(schema: Schema | undefined, depth = 0): Record<string, unknown> {
    const resolved = resolveSchema(this.doc, schema);
    const out: Record<string, unknown> = {};
    for (const [name, property] of Object.entries(resolved?.properties ?? {})) {
      if (this.random() < 0.7) out[name] = this.wrongValue(property, depth);
    }
    if (this.random() < 0.3) out[this.nastyString()] = this.wrongValue(undefined, depth);
    return out;
  }

  /** One fuzzed request body as raw bytes, with the content type to send it under. */
  body(schemaOrNull: Schema | null): { payload: Buffer; contentType: string } {
    const schema = schemaOrNull ?? undefined;
    const json = (value: unknown) => ({ payload: Buffer.from(JSON.stringify(value)), contentType: 'application/json' });
    const kind = this.int(10);
    switch (kind) {
      case 0: {
        // Malformed JSON: truncated, garbage, bad escapes, invalid UTF-8.
        const valid = JSON.stringify(this.objectFor(schema));
        const variants = [
          valid.slice(0, Math.max(1, this.int(valid.length))),
          `${valid}}`,
          '{"a":}',
          '{"a":"\\ud800"',
          '{"a":"\\x41"}',
          "{'a':1}",
          '{"a":1,,}',
          'NaN',
          '',
        ];
        if (this.random() < 0.3)
          return { payload: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0xff, 0x22, 0x7d]), contentType: 'application/json' };
        return { payload: Buffer.from(this.pick(variants)), contentType: 'application/json' };
      }
      case 1: {
        // Oversized: just past the default 100 KB limit, inside a string or as many keys.
        const size = 100 * 1024 + 1 + this.int(4096);
        if (this.random() < 0.5) return json({ ...this.objectFor(schema), pad: 'x'.repeat(size) });
        const head = JSON.stringify(this.objectFor(schema)).slice(0, -1);
        return { payload: Buffer.from(`${head}${head.length > 1 ? ',' : ''}"wide":${WIDE_OBJECT}}`), contentType: 'application/json' };
      }
      case 2: {
        // Deeply nested, at a declared or an unknown field.
        const depth = 30 + this.int(20_000);
        const open = this.random() < 0.5 ? '[' : '{"k":';
        const close = open === '[' ? ']' : '}';
        const fields = Object.keys(resolveSchema(this.doc, schema)?.properties ?? {});
        const field = fields.length > 0 && this.random() < 0.5 ? this.pick(fields) : 'unknownField';
        const base = JSON.stringify(this.objectFor(schema)).slice(0, -1);
        return {
          payload: Buffer.from(`${base}${base.length > 1 ? ',' : ''}"${field}":${open.repeat(depth)}1${close.repeat(depth)}}`),
          contentType: 'application/json',
        };
      }
      case 3:
        // Not an object at the top.
        return json(this.pick([[], [this.objectFor(schema)], 1, 'x', true, null]));
      case 4:
        // Wrong content type or charset.
        return {
          payload: Buffer.from(JSON.stringify(this.objectFor(schema))),
          contentType: this.pick([
            'application/json; charset=latin1',
            'application/xml',
            'multipart/form-data; boundary=x',
            'text/plain',
            'application/json; charset=utf-16',
          ]),
        };
      default:
        // Wrongly typed and unicode values in the declared fields.
        return json(this.objectFor(schema));
    }
  }

  /** Percent-encodes every UTF-8 byte (a lone surrogate is encoded as U+FFFD, as a client would). */
  private pct(text: string): string {
    return [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
  }

  query(names: string[]): string {
    const parts: string[] = [];
    for (const name of [...names, 'unknown']) {
      if (this.random() < 0.6)
        parts.push(`${encodeURIComponent(name)}=${this.pick([this.pct(this.nastyString()), '%', '%zz', '%ED%A0%80', '%00', 'a&a=b', '[]'])}`);
    }
    if (this.random() < 0.2) parts.push(`${names[0] ?? 'x'}[]=1&${names[0] ?? 'x'}[a]=2`);
    return parts.join('&');
  }
}

describe('fuzz: every public and operator endpoint (bounded, seeded)', () => {
  let t: TestApp;
  let fx: ProjectFixture;
  let victim: ProjectFixture;
  let customerId: string;
  let baseUrl: string;
  let operations: Operation[];
  let doc: any;
  let countTenantRows: () => Promise<Record<string, number>>;

  beforeAll(async () => {
    t = await createTestApp();
    fx = await createProjectWithApp(t);
    // Endpoints that archive, rotate or revoke act on a project of their own.
    victim = await createProjectWithApp(t);
    const big = { sustained: 1_000_000, burst: 1_000_000 };
    await setRateLimits(t, fx.projectId, { events: big, purchases: big, entitlements: big, heartbeat: big, forget: big, alias: big });
    const identified = await t.http.post('/v1/identify').set(keyHeaders(fx, fx.keys.skTest)).send({ userId: 'fuzz_user', anonymousId: 'fuzz_anon' });
    expect(identified.status).toBe(200);
    customerId = identified.body.serviceCustomerId;

    doc = (await t.http.get('/docs/json')).body;
    operations = [];
    for (const [path, methods] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        operations.push({
          method: method.toUpperCase(),
          path,
          bodySchema: op.requestBody?.content?.['application/json']?.schema ?? null,
          query: (op.parameters ?? []).filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name),
        });
      }
    }

    // Tables of tenant data (a project_id column), partitions counted through their parent.
    const tables: { table_name: string }[] = await t.dataSource.query(
      `SELECT DISTINCT c.table_name FROM information_schema.columns c
         JOIN pg_class k ON k.relname = c.table_name AND NOT k.relispartition
        WHERE c.table_schema = 'public' AND c.column_name = 'project_id' ORDER BY 1`,
    );
    expect(tables.length).toBeGreaterThan(5);
    // Only this file's projects: other spec files write to the same database meanwhile.
    // jsonb_build_object takes at most 100 arguments: 40 tables per object, the objects concatenated.
    const pairs = tables.map(({ table_name }) => `'${table_name}', (SELECT count(*) FROM "${table_name}" WHERE project_id = ANY($1))`);
    const objects = [];
    for (let i = 0; i < pairs.length; i += 40) objects.push(`jsonb_build_object(${pairs.slice(i, i + 40).join(', ')})`);
    const sql = `SELECT ${objects.join(' || ')} AS counts`;
    countTenantRows = async () => (await t.dataSource.query(sql, [[fx.projectId, victim.projectId]]))[0].counts;

    const server: Server = t.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => t.close());

  function concretePath(path: string): string {
    const values: Record<string, string> = {
      projectId: path.endsWith('/archive') ? victim.projectId : fx.projectId,
      appId: fx.appId,
      keyId: victim.keyIds.skLive,
      customerId,
      eventId: 'srv_grant_doesnotexist',
      fingerprint: 'deadbeef',
    };
    return path.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? 'x');
  }

  function headersFor(path: string): Record<string, string> {
    if (path.startsWith('/admin/')) return operatorAuth();
    if (path === '/v1/config') return keyHeaders(fx, fx.keys.pubTest);
    return keyHeaders(fx, fx.keys.skTest);
  }

  it('the OpenAPI document lists the public and the operator API', () => {
    const paths = operations.map((op) => op.path);
    expect(paths).toEqual(expect.arrayContaining(['/v1/identify', '/v1/events', '/v1/server/customers/{customerId}/grant', '/admin/v1/projects']));
    expect(operations.filter((op) => op.method !== 'GET').length).toBeGreaterThanOrEqual(15);
  });

  it('never a 5xx; always the envelope with X-Request-Id and a documented code; no row written by a rejected request', async () => {
    const random = prng(SEED);
    const gen = new BodyGenerator(random, doc);
    const failures: string[] = [];
    const statuses: Record<string, number> = {};
    for (const op of operations) {
      const path = concretePath(op.path);
      const headers = headersFor(op.path);
      const rounds = op.method === 'GET' ? QUERIES_PER_READ : BODIES_PER_WRITE;
      let before = op.method === 'GET' ? {} : await countTenantRows();
      for (let i = 0; i < rounds; i++) {
        let url = `${baseUrl}${path}`;
        const init: RequestInit = { method: op.method, headers: { ...headers } };
        let sent: string;
        if (op.method === 'GET') {
          const query = gen.query(op.query);
          url += `?${query}`;
          sent = query;
        } else {
          const { payload, contentType } = gen.body(op.bodySchema);
          init.body = payload;
          (init.headers as Record<string, string>)['Content-Type'] = contentType;
          sent = payload.toString('utf8', 0, 200);
        }
        const res = await fetch(url, init);
        const text = await res.text();
        const label = `${op.method} ${op.path} #${i} (${sent.slice(0, 120)})`;
        statuses[String(res.status)] = (statuses[String(res.status)] ?? 0) + 1;
        const requestId = res.headers.get('x-request-id') ?? '';
        if (res.status >= 500) failures.push(`${label}: ${res.status} ${text.slice(0, 300)}`);
        if (!REQUEST_ID.test(requestId)) failures.push(`${label}: no X-Request-Id`);
        if (res.status >= 400) {
          let body: any;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          const error = body?.error;
          if (
            !error ||
            typeof error.type !== 'string' ||
            typeof error.code !== 'string' ||
            typeof error.message !== 'string' ||
            error.request_id !== requestId
          ) {
            failures.push(`${label}: ${res.status} without the envelope: ${text.slice(0, 200)}`);
          } else if (!doc.paths[op.path][op.method.toLowerCase()].responses[String(res.status)]?.content?.['application/json']?.examples?.[error.code]) {
            failures.push(`${label}: ${res.status} ${error.code} is not among the codes the OpenAPI document lists for this endpoint`);
          }
        }
        // Reads write nothing by design; every write is checked, one request at a time.
        if (op.method !== 'GET') {
          const after = await countTenantRows();
          if (res.status >= 400) {
            for (const [table, count] of Object.entries(after)) {
              if (count !== before[table]) failures.push(`${label}: rejected with ${res.status} but ${table} went from ${before[table]} to ${count}`);
            }
          }
          before = after;
        }
        if (failures.length >= 20) break;
      }
      if (failures.length >= 20) break;
    }
    expect(failures).toEqual([]);
    // The fuzzing reached past authentication: most requests were refused by validation.
    expect(statuses['400']).toBeGreaterThan(1500);
  }, 300_000); // about 50 s on a quiet two-core machine; generous for a loaded one
});
