import { randomUUID } from 'node:crypto';
import { keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { expectTypedError } from '../support/expect-error.js';
import { telemetryHarness, DAY_MS } from '../support/harness/telemetry.js';
import { testScope } from '../support/scopes.js';
import { laterDeliveryWrittenFirst } from '../support/factories/telemetry.js';

describe('telemetry: POST /v1/events (keys, request rules, de-duplication, error issues)', () => {
  const h = telemetryHarness();
  let t: TestApp;
  let p: ProjectFixture;
  beforeAll(() => {
    ({ t, p } = h);
  });
  const { eid, ev, send, rows, countProjectEvents } = h;

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
      expectTypedError(await t.http.post('/v1/events').send({ events: [ev()] }), 401, 'authentication_error', 'missing_api_key');
      expectTypedError(
        await t.http
          .post('/v1/events')
          .set('Authorization', 'Bearer cd_pub_test_nope0000000000000000000000000000')
          .send({ events: [ev()] }),
        401,
        'authentication_error',
        'invalid_api_key',
      );
    });

    it('a publishable web key from a foreign origin: 403 origin_not_allowed', async () => {
      const res = await t.http
        .post('/v1/events')
        .set({ Authorization: `Bearer ${p.keys.pubTest}`, Origin: 'https://evil.example' })
        .send({ events: [ev()] });
      expectTypedError(res, 403, 'permission_error', 'origin_not_allowed');
    });

    it("an envelope environment other than the key's: 403 env_mismatch, nothing stored", async () => {
      const e = ev();
      expectTypedError(await send({ events: [e], environment: 'production' }), 403, 'permission_error', 'env_mismatch');
      expectTypedError(await send({ events: [e], environment: 'staging' }), 403, 'permission_error', 'env_mismatch');
      expectTypedError(await send({ events: [e], environment: 'sandbox' }, p.keys.skLive), 403, 'permission_error', 'env_mismatch');
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
      const res = await t.http
        .post('/events')
        .set(keyHeaders(p, p.keys.pubTest))
        .send({ events: [ev()] });
      expect(res.status).toBe(202);
    });
  });

  describe('request rules at their edges', () => {
    it('events: 100 pass, 101 is 400 invalid_param_value, none is missing_required_param, 0 is invalid', async () => {
      const hundred = Array.from({ length: 100 }, () => ev());
      expect((await send({ events: hundred })).body).toEqual({ object: 'list', received: 100, env: 'sandbox' });
      const res = await send({ events: [...Array.from({ length: 100 }, () => ev()), ev()] });
      expectTypedError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toContain('events');
      expectTypedError(await send({ events: [] }), 400, 'invalid_request_error', 'invalid_param_value');
      const missing = await send({ appId: p.appId });
      expectTypedError(missing, 400, 'invalid_request_error', 'missing_required_param');
      expect(missing.body.error.message).toContain('events');
    });

    it('name: 128 characters pass, 129 do not', async () => {
      expect((await send({ events: [ev({ name: 'n'.repeat(128) })] })).status).toBe(202);
      const res = await send({ events: [ev({ name: 'n'.repeat(129) })] });
      expectTypedError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toMatch(/^events\[0\]\.name: /);
    });

    it('eventId: 64 characters pass, 65 do not', async () => {
      const id = 'e'.repeat(60) + randomUUID().slice(0, 4);
      expect((await send({ events: [ev({ eventId: id })] })).status).toBe(202);
      const res = await send({ events: [ev({ eventId: id + 'x' })] });
      expectTypedError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toMatch(/^events\[0\]\.eventId: /);
    });

    it('properties: 8192 bytes of JSON pass, 8193 do not', async () => {
      const ofBytes = (bytes: number) => ({ k: 'x'.repeat(bytes - JSON.stringify({ k: '' }).length) });
      const ok = ev({ properties: ofBytes(8192) });
      expect((await send({ events: [ok] })).status).toBe(202);
      expect(JSON.stringify((await rows([ok.eventId as string]))[0].properties)).toHaveLength(8192);
      const res = await send({ events: [ev({ properties: ofBytes(8193) })] });
      expectTypedError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toBe('events[0].properties: must be at most 8192 bytes when JSON-serialised (got 8193)');
    });

    it('every event needs an identity hint; any one of the three will do', async () => {
      const res = await send({ events: [ev(), ev({ anonymousId: undefined })] });
      expectTypedError(res, 400, 'invalid_request_error', 'invalid_param_value');
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
      expectTypedError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toMatch(/^events\[7\]\.name: /);
      expect(await countProjectEvents()).toBe(before);
      const ts = await send({ events: [ev(), ev({ timestamp: 1.5 })] });
      expect(ts.body.error.message).toBe('events[1].timestamp: must be an integer (Unix milliseconds)');
    });

    it('the body is at most 1 MB: 100 events of almost 8 KB pass, a larger declared body is 413', async () => {
      const full = Array.from({ length: 100 }, () => ev({ properties: { k: 'x'.repeat(8000) } }));
      expect((await send({ events: full })).body.received).toBe(100);
      const res = await send({ events: [ev()], padding: 'x'.repeat(1024 * 1024) });
      expectTypedError(res, 413, 'invalid_request_error', 'invalid_param_value');
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
      const many = ev({
        tags: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'v'])),
        categoryTags: Array.from({ length: 20 }, (_, i) => `c${i}`),
      });
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
      expectTypedError(res, 400, 'invalid_request_error', 'invalid_param_value');
      expect(res.body.error.message).toMatch(/^events\[0\]\.properties: /);
    });
    it('deeply nested properties are measured like any others: 400 past 8 KB, a 500 never', async () => {
      const raw = (body: string) =>
        t.http
          .post('/v1/events')
          .set({ ...keyHeaders(p, p.keys.pubTest), 'Content-Type': 'application/json' })
          .send(body);
      const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
      // Deeper than the native serialiser's stack, well within the 1 MB body.
      const deep = await raw(`{"events":[{"name":"x","anonymousId":"a","properties":{"d":${nested(200_000)}}}]}`);
      expectTypedError(deep, 400, 'invalid_request_error', 'invalid_param_value');
      expect(deep.body.error.message).toBe('events[0].properties: must be at most 8192 bytes when JSON-serialised (got 400006)');
      // 8192 bytes exactly, 4093 levels deep: valid, stored as sent.
      const eventId = eid();
      const edge = await raw(`{"events":[{"name":"x","eventId":"${eventId}","anonymousId":"a","properties":{"d":${nested(4093)}}}]}`);
      expect(edge.body).toEqual({ object: 'list', received: 1, env: 'sandbox' });
      const [{ bytes }] = await t.dataSource.query(`SELECT octet_length(properties::text) AS bytes FROM events WHERE project_id = $1 AND event_id = $2`, [
        p.projectId,
        eventId,
      ]);
      expect(bytes).toBeGreaterThan(8000);
    });

    it('an envelope environment that is not a string is 403 env_mismatch, never a 500', async () => {
      const raw = (body: string) =>
        t.http
          .post('/v1/events')
          .set({ ...keyHeaders(p, p.keys.pubTest), 'Content-Type': 'application/json' })
          .send(body);
      const event = JSON.stringify(ev());
      for (const environment of ['{"toString":1}', '["sandbox"]', '['.repeat(100_000) + ']'.repeat(100_000), '5']) {
        const res = await raw(`{"events":[${event}],"environment":${environment}}`);
        expectTypedError(res, 403, 'permission_error', 'env_mismatch');
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

    it('a delivery written after a later one of the same event (its retry overtook it) does not overwrite it, and still counts', async () => {
      const original = ev({ properties: { attempt: 1 } });
      expect((await send({ events: [original] })).status).toBe(202);
      // The retry, received a minute later, written first (on another replica, or in another statement while the original waited on a stall).
      await laterDeliveryWrittenFirst(t.dataSource, testScope(p.projectId), original.eventId as string, {
        laterByMs: 60_000,
        name: 'page.viewed.retry',
        properties: { attempt: 2 },
      });
      expect((await send({ events: [original] })).body.received).toBe(1);
      const stored = await rows([original.eventId as string]);
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
      const issue = async () =>
        (
          await t.dataSource.query(
            `SELECT event_count::int AS n, first_seen_ms::float8 AS first, last_seen_ms::float8 AS last, env FROM error_issues WHERE project_id = $1 AND fingerprint = $2`,
            [p.projectId, fp],
          )
        )[0];
      expect(await issue()).toMatchObject({ n: 3, env: 'sandbox' });
      await send({ events: errors.slice(0, 2) });
      expect((await issue()).n).toBe(3);
      await send({ events: [ev({ name: 'error.unhandled', properties: { fingerprint: fp } })] });
      expect((await issue()).n).toBe(4);
    });
  });
});
