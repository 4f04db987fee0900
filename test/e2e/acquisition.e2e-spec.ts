import { randomUUID } from 'node:crypto';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { bearer, expectNamedError } from '../support/read-api.js';

/** Campaign arrivals (the web client's `?cd_ref=` call), first touches from page views, signups counted at identify. */
describe('acquisition: arrivals, first touch and GET /v1/acquisition', () => {
  let t: TestApp;
  let p: ProjectFixture;
  let ios: ProjectFixture;

  const arrival = (body: unknown, fixture = p) =>
    t.http
      .post('/v1/integrations/hubspot/arrival')
      .set(keyHeaders(fixture, fixture.keys.pubTest))
      .send(body as object);
  const pageView = (anonymousId: string, extra: Record<string, unknown>) => ({
    name: 'page.viewed',
    eventId: `pv_${randomUUID()}`,
    timestamp: t.clock.nowMs(),
    anonymousId,
    properties: { url: 'https://localhost:3000/', path: '/', ...extra },
  });
  const identify = (userId: string, anonymousId: string) => t.http.post('/v1/identify').set(keyHeaders(p, p.keys.pubTest)).send({ userId, anonymousId });

  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
    ios = await createProjectWithApp(t, { platform: 'ios' });
    await setRateLimits(t, p.projectId, { events: { sustained: 10_000, burst: 10_000 } });
  });
  afterAll(async () => t.close());

  it('an arrival is 202 { object: arrival }; the first arrival wins and replaces a page view’s first touch', async () => {
    const own = await createProjectWithApp(t);
    const res = await arrival({ anonymousId: 'anon_hs1', ref: 'hs_contact_1' }, own);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ object: 'arrival' });
    expect((await arrival({ anonymousId: 'anon_hs1', ref: 'hs_contact_2' }, own)).status).toBe(202);

    const events = [pageView('anon_hs2', { referrer: 'https://www.google.com/' })];
    expect((await t.http.post('/v1/events').set(keyHeaders(own, own.keys.pubTest)).send({ events })).status).toBe(202);
    expect((await arrival({ anonymousId: 'anon_hs2', ref: 'hs_contact_3' }, own)).status).toBe(202);

    // Each device's customer signs up under the first touch kept for it.
    for (const [userId, anonymousId] of [
      ['u_hs1', 'anon_hs1'],
      ['u_hs2', 'anon_hs2'],
    ]) {
      expect((await t.http.post('/v1/identify').set(keyHeaders(own, own.keys.pubTest)).send({ userId, anonymousId })).status).toBe(200);
    }
    const sources = await t.http.get('/v1/acquisition').set(bearer(own.keys.skTest));
    expect(sources.body.data.sources).toEqual([
      { source: 'hs_contact_1', signups: 1 },
      { source: 'hs_contact_3', signups: 1 },
    ]);
  });

  it('customers count once under their first touch: arrival ref, else utm_source, else referrer host, else direct; highest first', async () => {
    // Two devices whose first touch is an arrival (the second after a page view).
    expect((await arrival({ anonymousId: 'anon_hs1', ref: 'hs_contact_1' })).status).toBe(202);
    expect(
      (
        await t.http
          .post('/v1/events')
          .set(keyHeaders(p, p.keys.pubTest))
          .send({ events: [pageView('anon_hs2', { referrer: 'https://www.google.com/' })] })
      ).status,
    ).toBe(202);
    expect((await arrival({ anonymousId: 'anon_hs2', ref: 'hs_contact_3' })).status).toBe(202);
    const events = [
      pageView('anon_g1', { referrer: 'https://www.google.com/search' }),
      pageView('anon_g2', { referrer: 'https://www.google.com/' }),
      pageView('anon_n1', { referrer: 'https://t.co/x', utm_source: 'newsletter' }),
      pageView('anon_d1', {}),
      pageView('anon_never', { referrer: 'https://bing.com/' }),
    ];
    expect((await t.http.post('/v1/events').set(keyHeaders(p, p.keys.pubTest)).send({ events })).status).toBe(202);
    for (const [user, anon] of [
      ['u1', 'anon_hs1'],
      ['u2', 'anon_g1'],
      ['u3', 'anon_g2'],
      ['u4', 'anon_n1'],
      ['u5', 'anon_d1'],
      ['u2', 'anon_g1'],
    ]) {
      expect((await identify(user, anon)).status).toBe(200);
    }
    // A later device of an already counted customer does not count it again.
    expect((await identify('u3', 'anon_hs2')).status).toBe(200);

    const res = await t.http.get('/v1/acquisition').set(bearer(p.keys.skTest));
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('private, no-store');
    expect(res.body.object).toBe('acquisition');
    expect(res.body.data.sources).toEqual([
      { source: 'www.google.com', signups: 2 },
      { source: 'direct', signups: 1 },
      { source: 'hs_contact_1', signups: 1 },
      { source: 'newsletter', signups: 1 },
    ]);
    const limited = await t.http.get('/v1/acquisition?limit=1').set(bearer(p.keys.skTest));
    expect(limited.body.data.sources).toEqual([{ source: 'www.google.com', signups: 2 }]);
  });

  it('keys and bodies: a secret or iOS key cannot record arrivals; fields are named', async () => {
    expectError(
      await t.http.post('/v1/integrations/hubspot/arrival').set(bearer(p.keys.skTest)).send({ anonymousId: 'anon_x', ref: 'r' }),
      401,
      'invalid_api_key',
    );
    expectError(await arrival({ anonymousId: 'anon_x', ref: 'r' }, ios), 401, 'invalid_api_key');
    expectNamedError(await arrival({ ref: 'r' }), 400, 'missing_required_param', /anonymousId/);
    expectNamedError(await arrival({ anonymousId: 'anon_x', ref: 'r'.repeat(300) }), 400, 'invalid_param_value', /ref/);
    expectError(await t.http.get('/v1/acquisition').set(keyHeaders(p, p.keys.pubTest)), 401, 'invalid_api_key');
    expectNamedError(await t.http.get('/v1/acquisition?limit=0').set(bearer(p.keys.skTest)), 400, 'invalid_param_value', /limit/);
  });
});
