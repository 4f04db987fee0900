import { createProjectWithApp, WEB_ORIGIN, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';

/**
 * A browser calling a route this service does not have sees the service's own error envelope,
 * not a CORS failure: the answer carries Access-Control-Allow-Origin when the request's key
 * is a web app's publishable key whose allowed origins admit the Origin (the known routes' rule).
 */
describe('unknown routes: CORS headers of an allowed origin', () => {
  let t: TestApp;
  let p: ProjectFixture;

  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
  });
  afterAll(async () => t.close());

  const call = (headers: Record<string, string>) => t.http.post('/v1/not/a/route').set(headers).send({ anonymousId: 'a1' });

  it("the allowed origin with its app's publishable key: the 400 envelope, readable by the browser", async () => {
    const res = await call({ Authorization: `Bearer ${p.keys.pubTest}`, Origin: WEB_ORIGIN });
    expectError(res, 400, 'missing_required_param');
    expect(res.body.error.message).toMatch(/Unknown route/);
    expect(res.headers['access-control-allow-origin']).toBe(WEB_ORIGIN);
    expect(res.headers['access-control-expose-headers']).toMatch(/X-Request-Id/);
    const get = await t.http.get('/v1/nothing-here').set({ 'Crossdeck-Api-Key': p.keys.pubLive, Origin: WEB_ORIGIN });
    expect(get.status).toBe(400);
    expect(get.headers['access-control-allow-origin']).toBe(WEB_ORIGIN);
  });

  it('an origin the app does not allow, no key, a secret key or an unknown key: no Access-Control-Allow-Origin', async () => {
    const cases: Record<string, string>[] = [
      { Authorization: `Bearer ${p.keys.pubTest}`, Origin: 'https://evil.example' },
      { Origin: WEB_ORIGIN },
      { Authorization: `Bearer ${p.keys.skTest}`, Origin: WEB_ORIGIN },
      { Authorization: 'Bearer cd_pub_test_UnknownUnknownUnknown00', Origin: WEB_ORIGIN },
    ];
    for (const headers of cases) {
      const res = await call(headers);
      expect(res.status).toBe(400);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('a known route still decides by its own rule (the platform lock)', async () => {
    const res = await t.http
      .get('/v1/entitlements')
      .query({ anonymousId: 'a1' })
      .set({ Authorization: `Bearer ${p.keys.pubTest}`, Origin: WEB_ORIGIN });
    expect(res.status).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(WEB_ORIGIN);
  });
});
