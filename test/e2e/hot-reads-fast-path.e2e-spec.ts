import { Controller, Get, Header, Module, Param, Query } from '@nestjs/common';
import type { Response } from 'supertest';
import { RateLimit, ServiceHttpAdapter } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey } from '#keys';
import { EntitlementQueries, EntitlementsModule, EntitlementsQueryDto } from '#entitlements';
import { WEB_ORIGIN, createProjectWithApp, keyHeaders, type ProjectFixture, setRateLimits } from '../support/fixtures.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { REASON } from '../support/harness/entitlements.js';

/** The two reads as they were declared before their fast path: served by Nest's pipeline (param factories, validation pipe, guard). */
@Controller('v1/probe')
class NestPipelineReadsController {
  constructor(private readonly queries: EntitlementQueries) {}

  @Get('entitlements')
  @RequireApiKey({ kinds: ['publishable', 'secret'] })
  @RateLimit('entitlements')
  @Header('Cache-Control', 'private, no-store')
  list(@CurrentKey() auth: AuthContext, @Query() query: EntitlementsQueryDto) {
    return this.queries.publicRead(auth, query);
  }

  @Get('customers/:customerId/entitlements')
  @RequireApiKey({ kinds: ['secret'] })
  @RateLimit('entitlements')
  @Header('Cache-Control', 'private, no-store')
  read(@CurrentKey() auth: AuthContext, @Param('customerId') customerId: string) {
    return this.queries.serverRead(auth, customerId);
  }
}

@Module({ imports: [EntitlementsModule], controllers: [NestPipelineReadsController] })
class NestPipelineReadsModule {}

/** Headers that differ between any two answers (time, the request's id; the length follows the body). */
const VARYING = new Set(['date', 'x-request-id', 'content-length']);

function headersOf(res: Response): Record<string, string> {
  return Object.fromEntries(Object.entries(res.headers as Record<string, string>).filter(([name]) => !VARYING.has(name)));
}

function expectSameAnswer(fast: Response, nest: Response): void {
  expect(fast.status).toBe(nest.status);
  expect(headersOf(fast)).toEqual(headersOf(nest));
  expect(fast.headers['x-request-id']).toEqual(expect.any(String));
  expect(fast.headers['content-length']).toBe(String(Buffer.byteLength(fast.text)));
  const body = (res: Response) => (res.body as { error?: { request_id?: string } }).error;
  if (body(fast)) {
    expect({ ...body(fast), request_id: undefined }).toEqual({ ...body(nest), request_id: undefined });
    expect(body(fast)!.request_id).toBe(fast.headers['x-request-id']);
  } else {
    expect(fast.text).toBe(nest.text);
  }
}

/**
 * The two hot reads are served by a fast path (the same handler, admission and exception filter,
 * without Nest's per-request pipeline). The same request to the fast path and to a probe of the
 * same declarations served by Nest's pipeline gets the same status, headers and body: success,
 * each refusal, the rate limit, CORS for a browser origin, HEAD.
 */
describe('hot reads: the fast path answers as Nest’s pipeline does', () => {
  let t: TestApp;
  let fx: ProjectFixture;

  beforeAll(async () => {
    t = await createTestApp({}, { extraModules: [NestPipelineReadsModule] });
    fx = await createProjectWithApp(t);
  });
  afterAll(async () => t.close());

  async function newCustomer(): Promise<{ customerId: string; userId: string }> {
    const userId = `user_${Math.random().toString(36).slice(2, 10)}`;
    const res = await t.http
      .post('/v1/identify')
      .set(keyHeaders(fx, fx.keys.pubTest))
      .send({ userId, anonymousId: `anon_${userId}` });
    expect(res.status).toBe(200);
    const customerId = res.body.serviceCustomerId as string;
    const grant = await t.http
      .post(`/v1/server/customers/${customerId}/grant`)
      .set(keyHeaders(fx, fx.keys.skTest))
      .send({ entitlementKey: 'pro_access', duration: 'P30D', reason: REASON });
    expect(grant.status).toBe(200);
    return { customerId, userId };
  }

  it('the two reads are registered with the fast path', () => {
    expect([...(t.app.getHttpAdapter() as ServiceHttpAdapter).fastPaths()].sort()).toEqual([
      '/v1/entitlements',
      '/v1/server/customers/:customerId/entitlements',
    ]);
  });

  it('public GET /v1/entitlements: success, each refusal, a browser origin, HEAD', async () => {
    const { customerId, userId } = await newCustomer();
    const pub = keyHeaders(fx, fx.keys.pubTest);
    const sk = keyHeaders(fx, fx.keys.skTest);
    const cases: [Record<string, string>, Record<string, string>, number][] = [
      [{ userId }, pub, 200],
      [{ userId, extra: 'ignored' }, sk, 200],
      [{ customerId }, pub, 200],
      [{ userId: 'nobody' }, pub, 200],
      [{ userId }, { ...pub, Origin: WEB_ORIGIN }, 200],
      [{ userId }, { ...pub, Origin: 'https://elsewhere.example' }, 403],
      [{}, pub, 400],
      [{ customerId, serviceCustomerId: 'cdcust_other' }, pub, 400],
      [{ userId: 'u'.repeat(300) }, pub, 400],
      [{ userId: 'a\u0000b' }, pub, 400],
      [{ customerId: 'nope' }, pub, 400],
      [{ userId }, {}, 401],
      [{ userId }, { Authorization: 'Bearer cd_pk_test_unknown' }, 401],
    ];
    for (const [query, headers, status] of cases) {
      const fast = await t.http.get('/v1/entitlements').query(query).set(headers);
      const nest = await t.http.get('/v1/probe/entitlements').query(query).set(headers);
      expect(fast.status).toBe(status);
      expectSameAnswer(fast, nest);
    }
    const repeated = await t.http.get('/v1/entitlements?userId=a&userId=b').set(pub);
    expectSameAnswer(repeated, await t.http.get('/v1/probe/entitlements?userId=a&userId=b').set(pub));
    const fastHead = await t.http.head('/v1/entitlements').query({ userId }).set(pub);
    const nestHead = await t.http.head('/v1/probe/entitlements').query({ userId }).set(pub);
    expect(fastHead.status).toBe(200);
    expect(headersOf(fastHead)).toEqual(headersOf(nestHead));
  });

  it('server GET /v1/server/customers/{id}/entitlements: success, each refusal, an empty id', async () => {
    const { customerId } = await newCustomer();
    const sk = keyHeaders(fx, fx.keys.skTest);
    const cases: [string, Record<string, string>, number][] = [
      [customerId, sk, 200],
      [customerId, { ...sk, Origin: WEB_ORIGIN }, 200],
      ['cdcust_unknown', sk, 400],
      ['nope', sk, 400],
      [customerId, keyHeaders(fx, fx.keys.pubTest), 401],
      [customerId, {}, 401],
    ];
    for (const [id, headers, status] of cases) {
      const fast = await t.http.get(`/v1/server/customers/${encodeURIComponent(id)}/entitlements`).set(headers);
      const nest = await t.http.get(`/v1/probe/customers/${encodeURIComponent(id)}/entitlements`).set(headers);
      expect(fast.status).toBe(status);
      expectSameAnswer(fast, nest);
    }
    const emptyFast = await t.http.get('/v1/server/customers//entitlements').set(sk);
    const emptyNest = await t.http.get('/v1/probe/customers//entitlements').set(sk);
    expect(emptyFast.status).toBe(emptyNest.status);
    expect(emptyFast.body.error.code).toBe(emptyNest.body.error.code);
  });

  it('the rate limit: the same bucket, 429 with the same headers', async () => {
    const small = await createProjectWithApp(t);
    await setRateLimits(t, small.projectId, { entitlements: { sustained: 1, burst: 2 } });
    const headers = keyHeaders(small, small.keys.pubTest);
    expect((await t.http.get('/v1/entitlements').query({ userId: 'someone' }).set(headers)).status).toBe(200);
    expect((await t.http.get('/v1/probe/entitlements').query({ userId: 'someone' }).set(headers)).status).toBe(200);
    const fast = await t.http.get('/v1/entitlements').query({ userId: 'someone' }).set(headers);
    const nest = await t.http.get('/v1/probe/entitlements').query({ userId: 'someone' }).set(headers);
    expect(fast.status).toBe(429);
    expect(headersOf(fast)).toEqual({ ...headersOf(nest), 'retry-after': fast.headers['retry-after'] });
    expect(fast.body.error.code).toBe(nest.body.error.code);
  });
});
