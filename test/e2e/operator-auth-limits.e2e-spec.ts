import { randomBytes } from 'node:crypto';
import { RateLimiterService } from '#platform';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { expectError, expectTypedError } from '../support/expect-error.js';

/**
 * Guesses of the operator token: failed bearer authentications on the operator API and failed
 * console sign-ins are limited per client address, and the client address comes from
 * X-Forwarded-For only through the proxies TRUST_PROXY names.
 */

const ownToken = () => `op_limits_${randomBytes(12).toString('hex')}`;

/** A new app's Redis connection is not up at once (until then the limits fail open): the suites count on it. */
async function limitingApp(env: Record<string, string>): Promise<TestApp> {
  const t = await createTestApp(env);
  const limiter = t.app.get(RateLimiterService);
  for (let i = 0; i < 100 && (await limiter.takeFor('probe', 'probe', { sustained: 1, burst: 1 }, 0)).failedOpen; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return t;
}

describe('operator auth: failed attempts per client address', () => {
  describe('TRUST_PROXY unset: the socket address is the client, X-Forwarded-For is ignored', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await limitingApp({ OPERATOR_TOKEN: ownToken() });
    });
    afterAll(async () => t.close());

    it('ten wrong bearer tokens a minute, then 429 with Retry-After for any token (a forged X-Forwarded-For changes nothing) until the bucket refills', async () => {
      const path = '/admin/v1/projects/proj_nope';
      for (let i = 0; i < 10; i++) {
        const res = await t.http.get(path).set('Authorization', `Bearer guess_${i}`).set('X-Forwarded-For', `198.51.100.${i}`);
        expectTypedError(res, 401, 'authentication_error', 'invalid_operator_token');
      }
      const limited = await t.http.get(path).set('Authorization', 'Bearer guess_again').set('X-Forwarded-For', '198.51.100.200');
      expectTypedError(limited, 429, 'rate_limit_error', 'rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(6);
      expectError(await t.http.get(path).set('Authorization', `Bearer ${t.config.operatorToken}`), 429, 'rate_limited');
      // A request without any Authorization header is no guess: still the plain 401.
      expectError(await t.http.get(path), 401, 'invalid_operator_token');
      t.clock.advance(60);
      expectError(await t.http.get(path).set('Authorization', `Bearer ${t.config.operatorToken}`), 404, 'resource_missing');
    });

    it('an unknown operator path counts a wrong bearer token the same way', async () => {
      const other = await limitingApp({ OPERATOR_TOKEN: ownToken() });
      try {
        for (let i = 0; i < 10; i++)
          expectError(await other.http.get('/admin/v1/no-such-route').set('Authorization', `Bearer guess_${i}`), 401, 'invalid_operator_token');
        expectError(await other.http.get('/admin/v1/no-such-route').set('Authorization', `Bearer ${other.config.operatorToken}`), 429, 'rate_limited');
        expectError(await other.http.get('/admin/v1/projects/proj_nope').set('Authorization', `Bearer ${other.config.operatorToken}`), 429, 'rate_limited');
        // A path the router refuses (malformed percent-encoding) is no way around it.
        expectError(await other.http.get('/admin/v1/%zz').set('Authorization', `Bearer ${other.config.operatorToken}`), 429, 'rate_limited');
        other.clock.advance(60);
        expectError(await other.http.get('/admin/v1/no-such-route').set('Authorization', `Bearer ${other.config.operatorToken}`), 404, 'resource_missing');
      } finally {
        await other.close();
      }
    });

    it('the right bearer token costs nothing', async () => {
      for (let i = 0; i < 15; i++) {
        expectError(await t.http.get('/admin/v1/projects/proj_nope').set('Authorization', `Bearer ${t.config.operatorToken}`), 404, 'resource_missing');
      }
    });
  });

  describe('TRUST_PROXY names the proxy: the forwarded client address is the one limited', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await limitingApp({ OPERATOR_TOKEN: ownToken(), TRUST_PROXY: 'loopback' });
    });
    afterAll(async () => t.close());

    it('a guesser behind the proxy is limited; an operator at another address is not', async () => {
      const path = '/admin/v1/projects/proj_nope';
      const guesser = '203.0.113.7';
      for (let i = 0; i < 10; i++) {
        expectError(await t.http.get(path).set('Authorization', `Bearer guess_${i}`).set('X-Forwarded-For', guesser), 401, 'invalid_operator_token');
      }
      expectError(await t.http.get(path).set('Authorization', 'Bearer guess').set('X-Forwarded-For', guesser), 429, 'rate_limited');
      // The proxy appends the address it saw: a guesser forging the header is still itself.
      expectError(await t.http.get(path).set('Authorization', 'Bearer guess').set('X-Forwarded-For', `198.51.100.1, ${guesser}`), 429, 'rate_limited');
      const operator = await t.http.get(path).set('Authorization', `Bearer ${t.config.operatorToken}`).set('X-Forwarded-For', '198.51.100.9');
      expectError(operator, 404, 'resource_missing');
    });

    it('console sign-in: five failures lock out the guesser only', async () => {
      const guesser = '203.0.113.8';
      for (let i = 0; i < 5; i++) {
        expectError(
          await t.http
            .post('/console/api/session')
            .set('X-Forwarded-For', guesser)
            .send({ token: `wrong-${i}` }),
          401,
          'invalid_operator_token',
        );
      }
      const limited = await t.http.post('/console/api/session').set('X-Forwarded-For', guesser).send({ token: t.config.operatorToken });
      expectTypedError(limited, 429, 'rate_limit_error', 'rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await t.http.post('/console/api/session').set('X-Forwarded-For', '198.51.100.10').send({ token: t.config.operatorToken })).status).toBe(204);
    });
  });
});
