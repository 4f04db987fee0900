import { randomUUID } from 'node:crypto';
import { ErasureWorker } from '../../libs/identity/src/index.js';
import { EventIdentityResolver, EventPartitionMaintenance, anonymiseCustomerEvents } from '../../libs/telemetry/src/index.js';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { createTestDatabase, dropTestDatabase, type TestDatabaseHandle } from '../support/test-database.js';

const DAY_MS = 86_400_000;
const GENEROUS = { events: { sustained: 100_000, burst: 100_000 }, alias: { sustained: 1000, burst: 10_000 }, forget: { sustained: 1000, burst: 10_000 } };

function expectError(res: { status: number; body: any }, status: number, type: string, code: string) {
  expect(res.status).toBe(status);
  expect(res.body.error).toEqual(expect.objectContaining({ type, code }));
}

describe('telemetry: POST /v1/events', () => {
  let t: TestApp;
  let p: ProjectFixture;

  const eid = () => `evt_${randomUUID()}`;
  const ev = (overrides: Record<string, unknown> = {}) => ({
    name: 'page.viewed',
    eventId: eid(),
    timestamp: t.clock.nowMs() - 1000,
    anonymousId: 'anon_1',
    properties: { path: '/pricing' },
    ...overrides,
  });
  function send(body: unknown, key = p.keys.pubTest, fixture = p, extra: Record<string, string> = {}) {
    return t.http.post('/v1/events').set({ ...keyHeaders(fixture, key), ...extra }).send(body as object);
  }
  async function rows(eventIds: string[], fixture = p) {
    return t.dataSource.query(
      `SELECT event_id, env, app_id, name, timestamp_ms::float8 AS timestamp_ms, client_timestamp_ms::float8 AS client_timestamp_ms, level, fingerprint,
              properties, tags, category_tags, developer_user_id, anonymous_id, service_customer_id, customer_id,
              deliveries, client_day::text AS client_day, sdk_name, sdk_version, tableoid::regclass::text AS partition
         FROM events WHERE project_id = $1 AND event_id = ANY($2::text[]) ORDER BY event_id`,
      [fixture.projectId, eventIds],
    );
  }
  async function countProjectEvents(fixture = p): Promise<number> {
    const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM events WHERE project_id = $1`, [fixture.projectId]);
    return n;
  }

  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
    await setRateLimits(t, p.projectId, GENEROUS);
  });
  afterAll(async () => t.close());

  describe('keys and environments', () => {
    it('accepts a publishable key: 202 with object, received and env, no-store', async () => {
      const events = [ev(), ev()];
      const res = await send({ events });
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ object: 'list', received: 2, env: 'sandbox' });
      expect(res.headers['cache-control']).toBe('no-store');
      const stored = await rows(events.map((e) => e.eventId as string));
      expect(stored).toHaveLength(2);
      expect(stored[0]).toMatchObject({ env: 'sandbox', app_id: p.appId, anonymous_id: 'anon_1', customer_id: null, deliveries: 1 });
    });

    it('accepts a secret key, and live keys write production', async () => {
      expect((await send({ events: [ev()] }, p.keys.skTest)).body).toEqual({ object: 'list', received: 1, env: 'sandbox' });
      const live = ev();
      const res = await send({ events: [live], environment: 'production' }, p.keys.pubLive);
      expect(res.status).toBe(202);
      expect(res.body.env).toBe('production');
      expect((await rows([live.eventId as string]))[0].env).toBe('production');
    });

    it('no key: 401 missing_api_key; unknown key: 401 invalid_api_key', async () => {
      expectError(await t.http.post('/v1/events').send({ events: [ev()] }), 401, 'authentication_error', 'missing_api_key');
      expectError(await t.http.post('/v1/events').set('Authorization', 'Bearer cd_pub_test_nope0000000000000000000000000000').send({ events: [ev()] }), 401, 'authentication_error', 'invalid_api_key');
    });

    it('a publishable web key from a foreign origin: 403 origin_not_allowed', async () => {
      const res = await t.http.post('/v1/events').set({ Authorization: `Bearer ${p.keys.pubTest}`, Origin: 'https://evil.example' }).send({ events: [ev()] });
      expectError(res, 403, 'permission_error', 'origin_not_allowed');
    });

    it('an envelope environment other than the key\'s: 403 env_mismatch, nothing stored', async () => {
      const e = ev();
      expectError(await send({ events: [e], environment: 'production' }), 403, 'permission_error', 'env_mismatch');
      expectError(await send({ events: [e], environment: 'staging' }), 403, 'permission_error', 'env_mismatch');
      expectError(await send({ events: [e], environment: 'sandbox' }, p.keys.skLive), 403, 'permission_error', 'env_mismatch');
      expect(await rows([e.eventId as string])).toHaveLength(0);
      expect((await send({ events: [e], environment: 'sandbox', appId: p.appId, envelopeVersion: 3 })).status).toBe(202);
    });

    it('is documented in OpenAPI (body, 202 view, errors)', async () => {
      const doc = (await t.http.get('/docs/json')).body;
      const op = doc.paths['/v1/events'].post;
      expect(op.tags).toContain('telemetry');
      expect(JSON.stringify(op.requestBody)).toContain('EventsBatchDto');
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['202', '400', '401', '403', '426', '429']));
      expect(doc.components.schemas.EventsBatchDto.properties.events.maxItems).toBe(100);
    });

    it('also served without the /v1 prefix', async () => {
      const res = await t.http.post('/events').set(keyHeaders(p, p.keys.pubTest)).send({ events: [ev()] });
      expect(res.status).toBe(202);
    });
  });

  describe('request rules at their edges', () => {
    it('events: 100 pass, 101 is 400 invalid_param_value, none is missing_required_param, 0 is invalid', async () => {
      const hundred = Array.from({ length: 100 }, () => ev());
      expect((await send({ events: hundred })).body).toEqual({ object: 'list', received: 100, env: 'sandbox' });
      const res = await send({ events: [...Array.from({ length: 100 }, () => ev()), ev()] });
      expectError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toContain('events');
      expectError(await send({ events: [] }), 400, 'invalid_request_error', 'invalid_param_value');
      const missing = await send({ appId: p.appId });
      expectError(missing, 400, 'invalid_request_error', 'missing_required_param');
      expect(missing.body.error.message).toContain('events');
    });

    it('name: 128 characters pass, 129 do not', async () => {
      expect((await send({ events: [ev({ name: 'n'.repeat(128) })] })).status).toBe(202);
      const res = await send({ events: [ev({ name: 'n'.repeat(129) })] });
      expectError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toMatch(/^events\[0\]\.name: /);
    });

    it('eventId: 64 characters pass, 65 do not', async () => {
      const id = 'e'.repeat(60) + randomUUID().slice(0, 4);
      expect((await send({ events: [ev({ eventId: id })] })).status).toBe(202);
      const res = await send({ events: [ev({ eventId: id + 'x' })] });
      expectError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toMatch(/^events\[0\]\.eventId: /);
    });

    it('properties: 8192 bytes of JSON pass, 8193 do not', async () => {
      const ofBytes = (bytes: number) => ({ k: 'x'.repeat(bytes - JSON.stringify({ k: '' }).length) });
      const ok = ev({ properties: ofBytes(8192) });
      expect((await send({ events: [ok] })).status).toBe(202);
      expect(JSON.stringify((await rows([ok.eventId as string]))[0].properties)).toHaveLength(8192);
      const res = await send({ events: [ev({ properties: ofBytes(8193) })] });
      expectError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toBe('events[0].properties: must be at most 8192 bytes when JSON-serialised (got 8193)');
    });

    it('every event needs an identity hint; any one of the three will do', async () => {
      const res = await send({ events: [ev(), ev({ anonymousId: undefined })] });
      expectError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toMatch(/^events\[1\]: at least one identity hint/);
      const hinted = [ev({ anonymousId: undefined, developerUserId: 'user_1' }), ev({ anonymousId: undefined, serviceCustomerId: 'cdcust_x' })];
      expect((await send({ events: hinted })).status).toBe(202);
    });

    it('all-or-nothing: the first invalid event names index and field and nothing lands', async () => {
      const events = Array.from({ length: 10 }, () => ev());
      events[7] = ev({ name: '' });
      events[8] = ev({ timestamp: 'yesterday' });
      const before = await countProjectEvents();
      const res = await send({ events });
      expectError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toMatch(/^events\[7\]\.name: /);
      expect(await countProjectEvents()).toBe(before);
      const ts = await send({ events: [ev(), ev({ timestamp: 1.5 })] });
      expect(ts.body.error.message).toBe('events[1].timestamp: must be an integer (Unix milliseconds)');
    });

    it('the body is at most 1 MB: 100 events of almost 8 KB pass, a larger body is 400', async () => {
      const full = Array.from({ length: 100 }, () => ev({ properties: { k: 'x'.repeat(8000) } }));
      expect((await send({ events: full })).body.received).toBe(100);
      const res = await send({ events: [ev()], padding: 'x'.repeat(1024 * 1024) });
      expectError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toContain('limit');
    });

    it('unknown fields (seq, context) are ignored', async () => {
      const e = ev({ seq: 12, context: { page: { url: 'https://x' } } });
      const res = await send({ events: [e], seq: 3, context: {} });
      expect(res.status).toBe(202);
      expect((await rows([e.eventId as string]))[0].properties).toEqual({ path: '/pricing' });
    });

    it('malformed level, tags and categoryTags are dropped, never rejected', async () => {
      const bad = ev({ level: 'fatal', tags: { ok: 'yes', num: 5, long: 'x'.repeat(65) }, categoryTags: ['ok', 7, 'y'.repeat(33)] });
      const worse = ev({ level: 42, tags: 'nope', categoryTags: { a: 1 } });
      const many = ev({ tags: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'v'])), categoryTags: Array.from({ length: 20 }, (_, i) => `c${i}`) });
      const good = ev({ level: 'warning', tags: { release: '1.2.3' }, categoryTags: ['checkout'] });
      const res = await send({ events: [bad, worse, many, good] });
      expect(res.status).toBe(202);
      expect(res.body.received).toBe(4);
      const stored = new Map<string, any>((await rows([bad, worse, many, good].map((e) => e.eventId as string))).map((r: any) => [r.event_id, r]));
      expect(stored.get(bad.eventId as string)).toMatchObject({ level: null, tags: { ok: 'yes' }, category_tags: ['ok'] });
      expect(stored.get(worse.eventId as string)).toMatchObject({ level: null, tags: null, category_tags: null });
      expect(Object.keys(stored.get(many.eventId as string).tags)).toHaveLength(32);
      expect(stored.get(many.eventId as string).category_tags).toHaveLength(16);
      expect(stored.get(good.eventId as string)).toMatchObject({ level: 'warning', tags: { release: '1.2.3' }, category_tags: ['checkout'] });
    });

    it('timestamps beyond +/-24 h are clamped to the receive time; inside they are kept', async () => {
      const now = t.clock.nowMs();
      const inside = ev({ timestamp: now - 23 * 3600_000 });
      const past = ev({ timestamp: now - 2 * DAY_MS });
      const future = ev({ timestamp: now + 25 * 3600_000 });
      const none = ev({ timestamp: undefined });
      expect((await send({ events: [inside, past, future, none] })).status).toBe(202);
      const after = t.clock.nowMs();
      const stored = new Map<string, any>((await rows([inside, past, future, none].map((e) => e.eventId as string))).map((r: any) => [r.event_id, r]));
      expect(stored.get(inside.eventId as string).timestamp_ms).toBe(inside.timestamp);
      for (const e of [past, future, none]) {
        const r = stored.get(e.eventId as string);
        expect(r.timestamp_ms).toBeGreaterThanOrEqual(now);
        expect(r.timestamp_ms).toBeLessThanOrEqual(after);
      }
      expect(stored.get(past.eventId as string).client_timestamp_ms).toBe(past.timestamp);
      expect(stored.get(none.eventId as string).client_timestamp_ms).toBeNull();
    });

    it('events without an eventId get a server id', async () => {
      const marker = `srv-${randomUUID()}`;
      const res = await send({ events: [ev({ eventId: undefined, name: marker }), ev({ eventId: undefined, name: marker })] });
      expect(res.body.received).toBe(2);
      const stored = await t.dataSource.query(`SELECT event_id FROM events WHERE project_id = $1 AND name = $2`, [p.projectId, marker]);
      expect(stored).toHaveLength(2);
      for (const r of stored) expect(r.event_id).toMatch(/^srv_[0-9a-f-]{36}$/);
    });

    it('stores the envelope sdk, or the Service-Sdk-Version header', async () => {
      const a = ev();
      const b = ev();
      await send({ events: [a], sdk: { name: '@service/web', version: '1.5.0' } });
      await send({ events: [b] }, p.keys.pubTest, p, { 'Service-Sdk-Version': 'service-web@1.4.0' });
      const [ra, rb] = [(await rows([a.eventId as string]))[0], (await rows([b.eventId as string]))[0]];
      expect([ra.sdk_name, ra.sdk_version]).toEqual(['@service/web', '1.5.0']);
      expect([rb.sdk_name, rb.sdk_version]).toEqual(['service-web', '1.4.0']);
    });

    it('text PostgreSQL cannot store is a 400, not a 500', async () => {
      const res = await send({ events: [ev({ properties: { note: 'a\u0000b' } })] });
      expectError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toMatch(/^events\[0\]\.properties: /);
    });
    it('deeply nested properties are measured like any others: 400 past 8 KB, a 500 never', async () => {
      const raw = (body: string) => t.http.post('/v1/events').set({ ...keyHeaders(p, p.keys.pubTest), 'Content-Type': 'application/json' }).send(body);
      const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
      // Deeper than the native serialiser's stack, well within the 1 MB body.
      const deep = await raw(`{"events":[{"name":"x","anonymousId":"a","properties":{"d":${nested(200_000)}}}]}`);
      expectError(deep, 400, 'invalid_request_error', 'invalid_param_value');
      expect(deep.body.error.message).toBe('events[0].properties: must be at most 8192 bytes when JSON-serialised (got 400006)');
      // 8192 bytes exactly, 4093 levels deep: valid, stored as sent.
      const eventId = eid();
      const edge = await raw(`{"events":[{"name":"x","eventId":"${eventId}","anonymousId":"a","properties":{"d":${nested(4093)}}}]}`);
      expect(edge.body).toEqual({ object: 'list', received: 1, env: 'sandbox' });
      const [{ bytes }] = await t.dataSource.query(`SELECT octet_length(properties::text) AS bytes FROM events WHERE project_id = $1 AND event_id = $2`, [p.projectId, eventId]);
      expect(bytes).toBeGreaterThan(8000);
    });

    it('an envelope environment that is not a string is 403 env_mismatch, never a 500', async () => {
      const raw = (body: string) => t.http.post('/v1/events').set({ ...keyHeaders(p, p.keys.pubTest), 'Content-Type': 'application/json' }).send(body);
      const event = JSON.stringify(ev());
      for (const environment of ['{"toString":1}', '["sandbox"]', '['.repeat(100_000) + ']'.repeat(100_000), '5']) {
        const res = await raw(`{"events":[${event}],"environment":${environment}}`);
        expectError(res, 403, 'permission_error', 'env_mismatch');
      }
    });

    it('backslash-heavy properties are checked in linear time', async () => {
      // A long run of backslashes before a \u escape: the old regular expression backtracked
      // quadratically (about 2.5 s of blocked event loop for this 800 KB batch).
      const events = Array.from({ length: 100 }, () => ev({ properties: { a: `${'\\'.repeat(4080)}\u0001` } }));
      const started = Date.now();
      const res = await send({ events });
      expect(res.body.received).toBe(100);
      expect(Date.now() - started).toBeLessThan(1500);
    });
  });

  describe('de-duplication', () => {
    it('a retry with the same eventId overwrites itself: one row, updated', async () => {
      const first = ev({ properties: { attempt: 1 } });
      expect((await send({ events: [first] })).status).toBe(202);
      const retry = { ...first, name: 'page.viewed.retry', properties: { attempt: 2 } };
      expect((await send({ events: [retry] })).body.received).toBe(1);
      const stored = await rows([first.eventId as string]);
      expect(stored).toHaveLength(1);
      expect(stored[0]).toMatchObject({ name: 'page.viewed.retry', properties: { attempt: 2 }, deliveries: 2 });
    });

    it('a clamped event retried a day later still overwrites itself (the partition day follows the client clock)', async () => {
      const skewed = ev({ timestamp: t.clock.nowMs() - 10 * DAY_MS, properties: { attempt: 1 } });
      await send({ events: [skewed] });
      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 86_400 });
      await send({ events: [{ ...skewed, properties: { attempt: 2 } }] });
      const stored = await rows([skewed.eventId as string]);
      expect(stored).toHaveLength(1);
      expect(stored[0]).toMatchObject({ properties: { attempt: 2 }, deliveries: 2 });
    });

    it('the same eventId twice in one batch is one row (the later wins)', async () => {
      const id = eid();
      const res = await send({ events: [ev({ eventId: id, properties: { n: 1 } }), ev({ eventId: id, properties: { n: 2 } })] });
      expect(res.status).toBe(202);
      const stored = await rows([id]);
      expect(stored).toHaveLength(1);
      expect(stored[0].properties).toEqual({ n: 2 });
    });

    it('the same eventId in two projects or environments is two rows', async () => {
      const id = eid();
      await send({ events: [ev({ eventId: id })] });
      await send({ events: [ev({ eventId: id })] }, p.keys.pubLive);
      const stored = await rows([id]);
      expect(stored.map((r: any) => r.env).sort()).toEqual(['production', 'sandbox']);
    });

    it('concurrent overlapping retries neither fail nor duplicate', async () => {
      const events = Array.from({ length: 50 }, () => ev());
      const reversed = [...events].reverse();
      const results = await Promise.all([send({ events }), send({ events: reversed }), send({ events }), send({ events: reversed })]);
      for (const res of results) expect(res.status).toBe(202);
      expect(await rows(events.map((e) => e.eventId as string))).toHaveLength(50);
    });
  });

  describe('error events and issues', () => {
    it('stores the fingerprint of error events and groups them into one issue (retries are not counted twice)', async () => {
      const fp = randomUUID().slice(0, 8);
      const errors = [
        ev({ name: 'error.unhandled', properties: { fingerprint: fp.toUpperCase(), message: 'boom' } }),
        ev({ name: 'error.http', properties: { fingerprint: fp } }),
        ev({ name: 'checkout.failed', level: 'error', properties: { fingerprint: fp } }),
        ev({ name: 'page.viewed', properties: { fingerprint: fp } }),
        ev({ name: 'error.message', properties: { fingerprint: 'not-hex!' } }),
      ];
      expect((await send({ events: errors })).body.received).toBe(5);
      const stored = new Map<string, any>((await rows(errors.map((e) => e.eventId as string))).map((r: any) => [r.event_id, r]));
      expect(errors.map((e) => stored.get(e.eventId as string).fingerprint)).toEqual([fp, fp, fp, null, null]);
      const issue = async () => (await t.dataSource.query(`SELECT event_count::int AS n, first_seen_ms::float8 AS first, last_seen_ms::float8 AS last, env FROM error_issues WHERE project_id = $1 AND fingerprint = $2`, [p.projectId, fp]))[0];
      expect(await issue()).toMatchObject({ n: 3, env: 'sandbox' });
      await send({ events: errors.slice(0, 2) });
      expect((await issue()).n).toBe(3);
      await send({ events: [ev({ name: 'error.unhandled', properties: { fingerprint: fp } })] });
      expect((await issue()).n).toBe(4);
    });
  });

  describe('versioning (426)', () => {
    it('flag off (default): a client below the floor is accepted', async () => {
      const res = await send({ events: [ev()], sdk: { name: '@service/web', version: '0.1.0' } });
      expect(res.status).toBe(202);
    });

    describe('flag on', () => {
      let strict: TestApp;
      let sp: ProjectFixture;
      beforeAll(async () => {
        strict = await createTestApp({ SDK_VERSION_ENFORCEMENT: 'enabled' });
        sp = await createProjectWithApp(strict);
      });
      afterAll(async () => strict.close());
      const post = (body: object, extra: Record<string, string> = {}) => strict.http.post('/v1/events').set({ ...keyHeaders(sp, sp.keys.pubTest), ...extra }).send(body);

      it('below the floor: 426 sdk_version_unsupported with minVersion and surface; nothing stored', async () => {
        const e = ev();
        const res = await post({ events: [e], sdk: { name: '@service/web', version: '0.2.9' } });
        expectError(res, 426, 'version_error', 'sdk_version_unsupported');
        expect(res.body.error).toMatchObject({ minVersion: '0.3.0', surface: 'web' });
        expect(await rows([e.eventId as string], sp)).toHaveLength(0);
      });

      it('the Service-Sdk-Version header counts when the envelope has no sdk', async () => {
        const res = await post({ events: [ev()] }, { 'Service-Sdk-Version': 'ServiceSwift@0.4.0' });
        expectError(res, 426, 'version_error', 'sdk_version_unsupported');
        expect(res.body.error).toMatchObject({ minVersion: '0.5.0', surface: 'swift' });
      });

      it('at or above the floor, or unknown clients, are accepted', async () => {
        expect((await post({ events: [ev()], sdk: { name: '@service/web', version: '0.3.0' } })).status).toBe(202);
        expect((await post({ events: [ev()] }, { 'Service-Sdk-Version': 'service-node@1.0.0' })).status).toBe(202);
        expect((await post({ events: [ev()], sdk: { name: 'homegrown', version: '0.0.1' } })).status).toBe(202);
        expect((await post({ events: [ev()] })).status).toBe(202);
      });
    });
  });

  describe('throttling (events bucket, operator override)', () => {
    let q: ProjectFixture;
    beforeEach(async () => {
      q = await createProjectWithApp(t);
      // Burst 5, practically no refill: the test controls time with the test clock.
      await setRateLimits(t, q.projectId, { events: { sustained: 0.001, burst: 5 } });
    });
    const post = (events: unknown[], key?: string) => send({ events }, key ?? q.keys.pubTest, q);

    it('a batch larger than the tokens left lands what fits and reports throttled', async () => {
      const events = Array.from({ length: 8 }, () => ev());
      const res = await post(events);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({
        object: 'list',
        received: 5,
        env: 'sandbox',
        throttled: { dropped: 3, sampleRate: 0.625, retryAfterMs: expect.any(Number) },
      });
      expect(res.body.throttled.retryAfterMs).toBeGreaterThan(0);
      expect(await rows(events.map((e) => e.eventId as string), q)).toHaveLength(5);
      expect((await rows(events.slice(0, 5).map((e) => e.eventId as string), q))).toHaveLength(5);
    });

    it('nothing landable: 429 rate_limited with Retry-After and X-Service-Sample-Rate', async () => {
      expect((await post(Array.from({ length: 5 }, () => ev()))).body).toEqual({ object: 'list', received: 5, env: 'sandbox' });
      const e = ev();
      const res = await post([e, ev()]);
      expectError(res, 429, 'rate_limit_error', 'rate_limited');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const rate = Number(res.headers['x-service-sample-rate']);
      expect(rate).toBeGreaterThanOrEqual(0);
      expect(rate).toBeLessThanOrEqual(1);
      expect(await rows([e.eventId as string], q)).toHaveLength(0);
    });

    it('buckets are per environment', async () => {
      expect((await post(Array.from({ length: 5 }, () => ev()))).status).toBe(202);
      expect((await post([ev()])).status).toBe(429);
      expect((await post([ev()], q.keys.pubLive)).status).toBe(202);
    });

    it('the bucket refills at the sustained rate', async () => {
      await setRateLimits(t, q.projectId, { events: { sustained: 1, burst: 5 } });
      expect((await post(Array.from({ length: 5 }, () => ev()))).status).toBe(202);
      expect((await post([ev()])).status).toBe(429);
      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 3 });
      const res = await post(Array.from({ length: 5 }, () => ev()));
      expect(res.body.received).toBeGreaterThanOrEqual(3);
      expect(res.body.received).toBeLessThanOrEqual(4);
    });

    it('while throttling, one error event per fingerprint per minute still lands', async () => {
      expect((await post(Array.from({ length: 5 }, () => ev()))).status).toBe(202);
      const fpA = randomUUID().slice(0, 8);
      const fpB = randomUUID().slice(0, 8);
      const batch = () => [
        ev({ name: 'error.unhandled', properties: { fingerprint: fpA } }),
        ev({ name: 'error.unhandled', properties: { fingerprint: fpA } }),
        ev({ name: 'page.viewed' }),
        ev({ name: 'error.http', level: 'error', properties: { fingerprint: fpB } }),
        ev({ name: 'error.message' }),
      ];
      const first = batch();
      const res = await post(first);
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ received: 2, throttled: { dropped: 3 } });
      const landed = (await rows(first.map((e) => e.eventId as string), q)).map((r: any) => r.event_id).sort();
      expect(landed).toEqual([first[0].eventId, first[3].eventId].sort());

      // The same fingerprints within the minute: nothing landable.
      expectError(await post(batch()), 429, 'rate_limit_error', 'rate_limited');

      // A minute later (the bucket refilled by only 0.06 token) each fingerprint gets one more.
      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 61 });
      const later = await post(batch());
      expect(later.body).toMatchObject({ received: 2, throttled: { dropped: 3 } });
    });

    it('the allowance is per project and environment', async () => {
      expect((await post(Array.from({ length: 5 }, () => ev()))).status).toBe(202);
      expect((await post(Array.from({ length: 5 }, () => ev()), q.keys.pubLive)).status).toBe(202);
      const fp = randomUUID().slice(0, 8);
      const err = () => [ev({ name: 'error.unhandled', properties: { fingerprint: fp } })];
      expect((await post(err())).body.received).toBe(1);
      expect((await post(err(), q.keys.pubLive)).body.received).toBe(1);
      expect((await post(err())).status).toBe(429);
    });
  });

  describe('identity resolution (out of band) and erasure', () => {
    const identify = (body: object) => t.http.post('/v1/identify').set(keyHeaders(p, p.keys.pubTest)).send(body);
    /** A fresh user on a fresh device, identified: its customer id. */
    const identifiedDevice = async () => {
      const userId = `user_${randomUUID().slice(0, 8)}`;
      const anonymousId = `anon_${randomUUID().slice(0, 8)}`;
      const customerId: string = (await identify({ userId, anonymousId })).body.serviceCustomerId;
      return { userId, anonymousId, customerId };
    };

    async function hintSet(anonymousId: string | null, developerUserId: string | null = null, serviceCustomerId: string | null = null) {
      const found = await t.dataSource.query(
        `SELECT pending, attempts, resolve_after_ms::float8 AS resolve_after_ms, customer_id FROM event_identity_hints
          WHERE project_id = $1 AND env = 'sandbox' AND anonymous_id IS NOT DISTINCT FROM $2 AND developer_user_id IS NOT DISTINCT FROM $3 AND service_customer_id IS NOT DISTINCT FROM $4`,
        [p.projectId, anonymousId, developerUserId, serviceCustomerId],
      );
      return found[0];
    }

    it('hints are resolved to the customer by the background resolver, once per hint set; misses are retried later', async () => {
      const userId = `user_${randomUUID().slice(0, 8)}`;
      const anonymousId = `anon_${randomUUID().slice(0, 8)}`;
      const who = await identify({ userId, anonymousId });
      expect(who.status).toBe(200);
      const customerId = who.body.serviceCustomerId;
      const byUser = ev({ anonymousId: undefined, developerUserId: userId });
      const byAnon = [ev({ anonymousId }), ev({ anonymousId }), ev({ anonymousId })];
      const byCustomer = ev({ anonymousId: undefined, serviceCustomerId: customerId });
      const stranger = ev({ anonymousId: `anon_${randomUUID().slice(0, 8)}` });
      const all = [byUser, ...byAnon, byCustomer, stranger];
      await send({ events: all });
      const ids = all.map((e) => e.eventId as string);
      expect((await rows(ids)).every((r: any) => r.customer_id === null)).toBe(true);
      expect(await hintSet(anonymousId)).toMatchObject({ pending: true, attempts: 0, customer_id: null });

      const resolver = t.app.get(EventIdentityResolver);
      // Several replicas at once: the claim keeps them apart, the result is the same.
      const runs = await Promise.all([resolver.runOnce(), resolver.runOnce()]);
      expect(runs[0].resolvedSets + runs[1].resolvedSets).toBeGreaterThanOrEqual(3);
      expect(runs[0].eventsResolved + runs[1].eventsResolved).toBeGreaterThanOrEqual(5);
      const stored = new Map<string, any>((await rows(ids)).map((r: any) => [r.event_id, r]));
      for (const e of [byUser, ...byAnon, byCustomer]) expect(stored.get(e.eventId as string).customer_id).toBe(customerId);
      expect(stored.get(stranger.eventId as string).customer_id).toBeNull();
      expect(await hintSet(anonymousId)).toMatchObject({ pending: false, customer_id: customerId });
      expect(await hintSet(stranger.anonymousId as string)).toMatchObject({ pending: true, attempts: 1, customer_id: null });

      // New events of a resolved set are resolved on the next run.
      const later = ev({ anonymousId });
      await send({ events: [later] });
      expect(await hintSet(anonymousId)).toMatchObject({ pending: true });
      await resolver.runOnce();
      expect((await rows([later.eventId as string]))[0].customer_id).toBe(customerId);

      // Idempotent: nothing due now; the miss is retried after its back-off.
      await resolver.runOnce();
      expect((await hintSet(stranger.anonymousId as string)).attempts).toBe(1);
      await identify({ userId: `user_${randomUUID().slice(0, 8)}`, anonymousId: stranger.anonymousId });
      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 61 });
      await resolver.runOnce();
      expect((await rows([stranger.eventId as string]))[0].customer_id).toMatch(/^cdcust_/);
    });

    it('hints never reach another project or environment: a foreign serviceCustomerId stays unresolved, a foreign appId is not stored', async () => {
      const other = await createProjectWithApp(t);
      const foreignCustomer = (await t.http.post('/v1/identify').set(keyHeaders(other, other.keys.pubTest)).send({ userId: `user_${randomUUID().slice(0, 8)}`, anonymousId: `anon_${randomUUID().slice(0, 8)}` })).body.serviceCustomerId;
      const liveCustomer = (await t.http.post('/v1/identify').set(keyHeaders(p, p.keys.pubLive)).send({ userId: `user_${randomUUID().slice(0, 8)}`, anonymousId: `anon_${randomUUID().slice(0, 8)}` })).body.serviceCustomerId;
      expect(foreignCustomer).toMatch(/^cdcust_/);
      expect(liveCustomer).toMatch(/^cdcust_/);
      const byForeign = ev({ anonymousId: undefined, serviceCustomerId: foreignCustomer });
      const byLive = ev({ anonymousId: undefined, serviceCustomerId: liveCustomer });
      expect((await send({ events: [byForeign, byLive], appId: other.appId })).status).toBe(202);
      await t.app.get(EventIdentityResolver).runOnce();
      const stored = await rows([byForeign.eventId as string, byLive.eventId as string]);
      expect(stored).toHaveLength(2);
      for (const r of stored) expect(r).toMatchObject({ env: 'sandbox', app_id: p.appId, customer_id: null });
      expect(await countProjectEvents(other)).toBe(0);
    });

    it('a set that keeps missing backs off, then waits for new events', async () => {
      const anonymousId = `anon_${randomUUID().slice(0, 8)}`;
      await send({ events: [ev({ anonymousId })] });
      const resolver = t.app.get(EventIdentityResolver);
      for (let i = 0; i < 5; i++) {
        await resolver.runOnce();
        await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 6 * 3600 + 1 });
      }
      expect(await hintSet(anonymousId)).toMatchObject({ pending: false, attempts: 5, customer_id: null });
      await resolver.runOnce();
      expect((await hintSet(anonymousId)).attempts).toBe(5);
      await send({ events: [ev({ anonymousId })] });
      expect((await hintSet(anonymousId)).pending).toBe(true);
    });

    it('a retry with different hints is resolved again', async () => {
      const { anonymousId, customerId } = await identifiedDevice();
      const e = ev({ anonymousId });
      await send({ events: [e] });
      await t.app.get(EventIdentityResolver).runOnce();
      expect((await rows([e.eventId as string]))[0].customer_id).toBe(customerId);
      await send({ events: [e] });
      expect((await rows([e.eventId as string]))[0].customer_id).toBe(customerId);
      await send({ events: [{ ...e, anonymousId: `anon_${randomUUID().slice(0, 8)}` }] });
      expect((await rows([e.eventId as string]))[0].customer_id).toBeNull();
    });

    it('forgetting a customer anonymises their events (hints, customer and properties)', async () => {
      const { userId, anonymousId, customerId } = await identifiedDevice();
      const resolved = ev({ anonymousId: undefined, developerUserId: userId, properties: { email: 'a@b.c' }, tags: { plan: 'pro' } });
      await send({ events: [resolved] });
      await t.app.get(EventIdentityResolver).runOnce();
      const pending = ev({ anonymousId, properties: { email: 'a@b.c' } });
      const error = ev({ anonymousId, name: 'error.unhandled', properties: { fingerprint: 'abcdef12' } });
      const bystander = ev({ anonymousId: `anon_${randomUUID().slice(0, 8)}`, properties: { keep: true } });
      await send({ events: [pending, error, bystander] });

      const forget = await t.http.post('/v1/identity/forget').set(keyHeaders(p, p.keys.skTest)).send({ customerId });
      expect(forget.status).toBe(200);
      await t.app.get(ErasureWorker).runOnce({ projectId: p.projectId });

      const stored = new Map<string, any>((await rows([resolved, pending, error, bystander].map((e) => e.eventId as string))).map((r: any) => [r.event_id, r]));
      for (const e of [resolved, pending, error]) {
        expect(stored.get(e.eventId as string)).toMatchObject({
          developer_user_id: null,
          anonymous_id: null,
          service_customer_id: null,
          customer_id: null,
          properties: {},
          tags: null,
        });
      }
      expect(await hintSet(anonymousId)).toBeUndefined();
      expect(await hintSet(null, userId)).toBeUndefined();
      expect(stored.get(error.eventId as string)).toMatchObject({ name: 'error.unhandled', fingerprint: 'abcdef12' });
      expect(stored.get(bystander.eventId as string)).toMatchObject({ properties: { keep: true }, anonymous_id: bystander.anonymousId });
    });
    it('erasure locks the hint sets before the events, in the order of ingestion and the resolver, so it cannot deadlock with them', async () => {
      const { userId, anonymousId, customerId } = await identifiedDevice();
      const e = ev({ anonymousId });
      await send({ events: [e] });
      await t.app.get(EventIdentityResolver).runOnce();
      expect((await rows([e.eventId as string]))[0].customer_id).toBe(customerId);

      // A writer in the ingestion's lock order (a retry of the event): its hint set, then the event row.
      const writer = t.dataSource.createQueryRunner();
      await writer.connect();
      await writer.startTransaction();
      try {
        await writer.query(`SELECT 1 FROM event_identity_hints WHERE project_id = $1 AND env = 'sandbox' AND anonymous_id = $2 FOR UPDATE`, [p.projectId, anonymousId]);
        const erasure = t.dataSource
          .transaction((m) => anonymiseCustomerEvents({ projectId: p.projectId, env: 'sandbox' }, { customerId, userIds: [userId], anonymousIds: [anonymousId] }, m))
          .then(() => 'erased', (err: Error) => err.message);
        // The erasure is now blocked on a lock (the hint set); it must not hold the event row.
        for (let waited = 0; ; waited += 20) {
          const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
          if (n > 0) break;
          if (waited > 5000) throw new Error('the erasure never waited on the hint set');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await writer.query(`UPDATE events SET deliveries = deliveries + 1 WHERE project_id = $1 AND env = 'sandbox' AND event_id = $2`, [p.projectId, e.eventId]);
        await writer.commitTransaction();
        expect(await erasure).toBe('erased');
      } finally {
        if (writer.isTransactionActive) await writer.rollbackTransaction();
        await writer.release();
      }
      expect((await rows([e.eventId as string]))[0]).toMatchObject({ anonymous_id: null, customer_id: null, properties: {}, deliveries: 2 });
      expect(await hintSet(anonymousId)).toBeUndefined();
    });

    it('an anonymous-only forget of an identified customer anonymises only that device\'s events', async () => {
      const userId = `user_${randomUUID().slice(0, 8)}`;
      const phone = `anon_${randomUUID().slice(0, 8)}`;
      const laptop = `anon_${randomUUID().slice(0, 8)}`;
      await identify({ userId, anonymousId: phone });
      await identify({ userId, anonymousId: laptop });
      const fromPhone = ev({ anonymousId: phone, properties: { screen: 'home' } });
      const fromLaptop = ev({ anonymousId: laptop, properties: { screen: 'cart' } });
      await send({ events: [fromPhone, fromLaptop] });
      await t.app.get(EventIdentityResolver).runOnce();

      const forget = await t.http.post('/v1/identity/forget').set(keyHeaders(p, p.keys.pubTest)).send({ anonymousId: phone });
      expect(forget.status).toBe(200);
      expect(forget.body.serviceCustomerId).toBeNull();

      const stored = new Map<string, any>((await rows([fromPhone.eventId as string, fromLaptop.eventId as string])).map((r: any) => [r.event_id, r]));
      expect(stored.get(fromPhone.eventId as string)).toMatchObject({ anonymous_id: null, customer_id: null, properties: {} });
      expect(stored.get(fromLaptop.eventId as string)).toMatchObject({ anonymous_id: laptop, properties: { screen: 'cart' } });
      expect(stored.get(fromLaptop.eventId as string).customer_id).toMatch(/^cdcust_/);
    });
  });

  // Last: moves the clock far ahead and drops partitions.
  describe('storage: daily partitions, default partition, retention', () => {
    // Partitions are shared by every tenant of a database, and these tests move the clock
    // months ahead and drop "old" days: they get a database of their own, so that suites
    // running in parallel never lose the partition they are writing to.
    let ownDatabase: TestDatabaseHandle;
    beforeAll(async () => {
      await t.close();
      ownDatabase = await createTestDatabase();
      t = await createTestApp({ DATABASE_URL: ownDatabase.url });
      p = await createProjectWithApp(t);
      await setRateLimits(t, p.projectId, GENEROUS);
    }, 60_000);
    afterAll(async () => {
      await t.close();
      await dropTestDatabase(ownDatabase);
      t = await createTestApp(); // the file's afterAll closes it
    });

    it('events land in the partition of their client day; far-off clocks in the default partition, moved out when their day is created; old days dropped', async () => {
      const maintenance = t.app.get(EventPartitionMaintenance);
      const now = t.clock.nowMs();
      const today = ev();
      const farFuture = ev({ timestamp: now + 20 * DAY_MS });
      await send({ events: [today, farFuture] });
      const before = new Map<string, any>((await rows([today.eventId as string, farFuture.eventId as string])).map((r: any) => [r.event_id, r]));
      expect(before.get(today.eventId as string).partition).toBe(`events_p${new Date(today.timestamp as number).toISOString().slice(0, 10).replaceAll('-', '')}`);
      expect(before.get(farFuture.eventId as string).partition).toBe('events_default');
      expect(before.get(farFuture.eventId as string).timestamp_ms).toBeLessThan(now + DAY_MS);

      const first = await maintenance.runOnce();
      expect(first.ran).toBe(true);
      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 15 * 86_400 });
      const second = await maintenance.runOnce();
      const futureDay = `events_p${new Date(farFuture.timestamp as number).toISOString().slice(0, 10).replaceAll('-', '')}`;
      expect(second.created).toContain(futureDay);
      const moved = (await rows([farFuture.eventId as string]))[0];
      expect(moved.partition).toBe(futureDay);
      // The moved row is still de-duplicated in its new partition.
      await send({ events: [{ ...farFuture, properties: { again: true } }] });
      expect(await rows([farFuture.eventId as string])).toEqual([expect.objectContaining({ partition: futureDay, deliveries: 2, properties: { again: true } })]);

      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 100 * 86_400 });
      const third = await maintenance.runOnce();
      expect(third.dropped.length).toBeGreaterThan(0);
      expect(await rows([today.eventId as string])).toHaveLength(0);
      const partitions = await maintenance.partitions();
      expect(partitions).toContain('events_default');
      expect(partitions.every((name) => name === 'events_default' || name >= `events_p${new Date(t.clock.nowMs() - 90 * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '')}`)).toBe(true);
    });

    it('a new day\'s partition is attached even when an insert of that day lands in the default partition meanwhile', async () => {
      const maintenance = t.app.get(EventPartitionMaintenance);
      await maintenance.runOnce();
      // The first day past the partitions kept ahead: its events go to the default partition.
      const day = Math.floor(t.clock.nowMs() / DAY_MS) + 8;
      const name = `events_p${new Date(day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '')}`;
      expect(await maintenance.partitions()).not.toContain(name);
      const eventId = eid();
      const writer = t.dataSource.createQueryRunner();
      await writer.connect();
      await writer.startTransaction();
      try {
        // An ingestion still in flight when the job creates the day.
        await writer.query(
          `INSERT INTO events (project_id, env, event_id, client_day, app_id, name, timestamp_ms, received_at_ms)
           VALUES ($1, 'sandbox', $2, DATE '1970-01-01' + $3::int, $4, 'late.write', $5, $5)`,
          [p.projectId, eventId, day, p.appId, t.clock.nowMs()],
        );
        await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 86_400 });
        const run = maintenance.runOnce();
        for (let waited = 0; ; waited += 20) {
          const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
          if (n > 0) break;
          if (waited > 4000) throw new Error('the maintenance never waited on the in-flight insert');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await writer.commitTransaction();
        expect((await run).created).toContain(name);
      } finally {
        if (writer.isTransactionActive) await writer.rollbackTransaction();
        await writer.release();
      }
      expect((await rows([eventId]))[0]).toMatchObject({ partition: name, name: 'late.write' });
    });

    it('a busy events table postpones a partition drop a little, and inserts keep flowing meanwhile', async () => {
      const maintenance = t.app.get(EventPartitionMaintenance);
      await maintenance.runOnce();
      const inFlight = t.dataSource.createQueryRunner();
      await inFlight.connect();
      await inFlight.startTransaction();
      try {
        // What an insert in flight holds on the parent table.
        await inFlight.query('LOCK TABLE events IN ROW EXCLUSIVE MODE');
        const run = maintenance.runOnce(1); // a one-day retention: there are days to drop
        for (let waited = 0; ; waited += 20) {
          const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'DROP TABLE%'`);
          if (n > 0) break;
          if (waited > 4000) throw new Error('the maintenance never tried to drop');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const sent = await send({ events: [ev()] });
        expect(sent.status).toBe(202);
        await inFlight.commitTransaction();
        const summary = await run;
        expect(summary.dropped.length).toBeGreaterThan(0);
      } finally {
        if (inFlight.isTransactionActive) await inFlight.rollbackTransaction();
        await inFlight.release();
      }
    });
  });
});
