import { randomUUID } from 'node:crypto';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectTypedError } from '../support/expect-error.js';
import { telemetryHarness } from '../support/harness/telemetry.js';

describe('telemetry: POST /v1/events versioning and throttling', () => {
  const h = telemetryHarness();
  let t: TestApp;
  beforeAll(() => {
    ({ t } = h);
  });
  const { ev, send, rows } = h;

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
      const post = (body: object, extra: Record<string, string> = {}) =>
        strict.http
          .post('/v1/events')
          .set({ ...keyHeaders(sp, sp.keys.pubTest), ...extra })
          .send(body);

      it('below the floor: 426 sdk_version_unsupported with minVersion and surface; nothing stored', async () => {
        const e = ev();
        const res = await post({ events: [e], sdk: { name: '@service/web', version: '0.2.9' } });
        expectTypedError(res, 426, 'version_error', 'sdk_version_unsupported');
        expect(res.body.error).toMatchObject({ minVersion: '0.3.0', surface: 'web' });
        expect(await rows([e.eventId as string], sp)).toHaveLength(0);
      });

      it('the Service-Sdk-Version header counts when the envelope has no sdk', async () => {
        const res = await post({ events: [ev()] }, { 'Service-Sdk-Version': 'ServiceSwift@0.4.0' });
        expectTypedError(res, 426, 'version_error', 'sdk_version_unsupported');
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
      expect(
        await rows(
          events.map((e) => e.eventId as string),
          q,
        ),
      ).toHaveLength(5);
      expect(
        await rows(
          events.slice(0, 5).map((e) => e.eventId as string),
          q,
        ),
      ).toHaveLength(5);
    });

    it('nothing landable: 429 rate_limited with Retry-After and X-Service-Sample-Rate', async () => {
      expect((await post(Array.from({ length: 5 }, () => ev()))).body).toEqual({ object: 'list', received: 5, env: 'sandbox' });
      const e = ev();
      const res = await post([e, ev()]);
      expectTypedError(res, 429, 'rate_limit_error', 'rate_limited');
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
      const landed = (
        await rows(
          first.map((e) => e.eventId as string),
          q,
        )
      )
        .map((r: any) => r.event_id)
        .sort();
      expect(landed).toEqual([first[0].eventId, first[3].eventId].sort());

      // The same fingerprints within the minute: nothing landable.
      expectTypedError(await post(batch()), 429, 'rate_limit_error', 'rate_limited');

      // A minute later (the bucket refilled by only 0.06 token) each fingerprint gets one more.
      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 61 });
      const later = await post(batch());
      expect(later.body).toMatchObject({ received: 2, throttled: { dropped: 3 } });
    });

    it('the allowance is per project and environment', async () => {
      expect((await post(Array.from({ length: 5 }, () => ev()))).status).toBe(202);
      expect(
        (
          await post(
            Array.from({ length: 5 }, () => ev()),
            q.keys.pubLive,
          )
        ).status,
      ).toBe(202);
      const fp = randomUUID().slice(0, 8);
      const err = () => [ev({ name: 'error.unhandled', properties: { fingerprint: fp } })];
      expect((await post(err())).body.received).toBe(1);
      expect((await post(err(), q.keys.pubLive)).body.received).toBe(1);
      expect((await post(err())).status).toBe(429);
    });
  });
});
