import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';

/**
 * The console: its files under /console (only with OPERATOR_TOKEN), its headers, the signed
 * session cookie (sign-in, state, sign-out, five failures a minute), and the operator API
 * accepting that cookie with a CSRF token on changes.
 */

const CSP = /^default-src 'self'; script-src 'self'; style-src 'self'/;

function expectConsoleHeaders(res: { headers: Record<string, string> }): void {
  expect(res.headers['content-security-policy']).toMatch(CSP);
  expect(res.headers['content-security-policy']).not.toMatch(/unsafe-inline|unsafe-eval/);
  expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
}

/** The cookie pair (`console_session=…`) of a Set-Cookie header. */
function sessionCookie(res: { headers: Record<string, unknown> }): string {
  const header = ([] as string[]).concat((res.headers['set-cookie'] as string[] | string | undefined) ?? []).find((c) => c.startsWith('console_session='));
  if (!header) throw new Error('no console_session cookie set');
  return header.split(';')[0];
}

describe('console: files, headers and the signed session', () => {
  // A token of this suite's own: the sign-in failure bucket is per deployment (token) and address.
  const token = `op_console_${randomBytes(12).toString('hex')}`;
  const bearer = { Authorization: `Bearer ${token}` };
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-dir-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><html><head><script type="module" src="/console/assets/app-3f2a1b.js"></script></head></html>');
    writeFileSync(join(dir, 'assets', 'app-3f2a1b.js'), 'console.log("console");');
    writeFileSync(join(dir, 'assets', 'app-3f2a1b.css'), 'body{margin:0}');
    t = await createTestApp({ OPERATOR_TOKEN: token, CONSOLE_DIR: dir });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function signIn(): Promise<{ cookie: string; csrf: string }> {
    const res = await t.http.post('/console/api/session').send({ token });
    expect(res.status).toBe(204);
    const cookie = sessionCookie(res);
    const state = await t.http.get('/console/api/session').set('Cookie', cookie);
    expect(state.status).toBe(200);
    return { cookie, csrf: state.body.csrfToken };
  }

  describe('files', () => {
    it('index.html at /console, /console/ and any page path, no-store, with the console headers', async () => {
      for (const path of ['/console', '/console/', '/console/customers/cdcust_1', '/console/keys?env=sandbox']) {
        const res = await t.http.get(path);
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
        expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(res.headers['cache-control']).toBe('no-store');
        expect(res.text).toContain('/console/assets/app-3f2a1b.js');
        expectConsoleHeaders(res);
      }
    });

    it('fingerprinted assets are immutable for a year; an unknown asset or a path outside the folder is 404', async () => {
      const js = await t.http.get('/console/assets/app-3f2a1b.js');
      expect(js.status).toBe(200);
      expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expectConsoleHeaders(js);
      expect((await t.http.get('/console/assets/app-3f2a1b.css')).headers['content-type']).toBe('text/css; charset=utf-8');
      const missing = await t.http.get('/console/assets/nope.js');
      expectError(missing, 404, 'resource_missing');
      expectConsoleHeaders(missing);
      expect((await t.http.get('/console/assets/..%2f..%2fpackage.json')).status).toBe(404);
      expect((await t.http.get('/console/assets/%2e%2e/index.html')).status).toBe(404);
    });

    it('an unknown console API path is 404, not the page', async () => {
      expectError(await t.http.get('/console/api/nope'), 404, 'resource_missing');
    });

    it('without OPERATOR_TOKEN everything under /console is 404; without the built folder a plain 503 says how to build it', async () => {
      const off = await createTestApp({ OPERATOR_TOKEN: '', CONSOLE_DIR: dir });
      try {
        expectError(await off.http.get('/console'), 404, 'resource_missing');
        expectError(await off.http.get('/console/assets/app-3f2a1b.js'), 404, 'resource_missing');
        expectError(await off.http.post('/console/api/session').send({ token }), 404, 'resource_missing');
        expectError(await off.http.get('/console/api/session'), 404, 'resource_missing');
      } finally {
        await off.close();
      }
      const unbuilt = await createTestApp({ OPERATOR_TOKEN: token, CONSOLE_DIR: join(dir, 'not-there') });
      try {
        const res = await unbuilt.http.get('/console/');
        expect(res.status).toBe(503);
        expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
        expect(res.text).toContain('npm run build');
        expectConsoleHeaders(res);
      } finally {
        await unbuilt.close();
      }
    });
  });

  describe('session', () => {
    it('sign-in sets an HttpOnly, SameSite=Strict, 12-hour cookie (no Secure outside production); the state names its expiry and CSRF token', async () => {
      const res = await t.http.post('/console/api/session').send({ token });
      expect(res.status).toBe(204);
      expectConsoleHeaders(res);
      const header = ([] as string[]).concat(res.headers['set-cookie'] as unknown as string[])[0];
      expect(header).toMatch(/^console_session=[A-Za-z0-9_-]+\.\d+\.[A-Za-z0-9_-]+; /);
      expect(header.split('; ').slice(1).sort()).toEqual(['HttpOnly', 'Max-Age=43200', 'Path=/', 'SameSite=Strict']);
      expect(header).not.toContain(token);
      const state = await t.http.get('/console/api/session').set('Cookie', sessionCookie(res));
      expect(state.status).toBe(200);
      expect(state.headers['cache-control']).toBe('no-store');
      expect(state.body).toEqual({ object: 'console_session', expiresAt: expect.any(Number), csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
      const expiresIn = state.body.expiresAt - t.clock.nowMs();
      expect(expiresIn).toBeGreaterThan(12 * 3600 * 1000 - 60_000);
      expect(expiresIn).toBeLessThanOrEqual(12 * 3600 * 1000);
    });

    it('no cookie, a tampered cookie or an expired one is 401; a wrong token or no token at sign-in is 401 / 400', async () => {
      expectError(await t.http.get('/console/api/session'), 401, 'invalid_operator_token');
      const { cookie } = await signIn();
      const tampered = cookie.replace(/\.(\d+)\./, (_m, exp: string) => `.${Number(exp) + 1000}.`);
      expectError(await t.http.get('/console/api/session').set('Cookie', tampered), 401, 'invalid_operator_token');
      expectError(await t.http.post('/console/api/session').send({}), 400, 'missing_required_param');
      const bad = await t.http.post('/console/api/session').send({ token: 42 });
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('token');
    });

    it('sign-out answers 204 and a cookie that clears the session', async () => {
      const res = await t.http.delete('/console/api/session');
      expect(res.status).toBe(204);
      const header = ([] as string[]).concat(res.headers['set-cookie'] as unknown as string[])[0];
      expect(header).toMatch(/^console_session=; /);
      expect(header).toContain('Max-Age=0');
    });

    it('sign-out ends the session on the server: the old cookie is refused, here and on another replica', async () => {
      const { cookie, csrf } = await signIn();
      const replica = await createTestApp({ OPERATOR_TOKEN: token, CONSOLE_DIR: dir });
      try {
        expect((await replica.http.get('/admin/v1/projects/proj_nope').set('Cookie', cookie)).status).toBe(404);
        const out = await t.http.delete('/console/api/session').set('Cookie', cookie).set('X-CSRF-Token', csrf);
        expect(out.status).toBe(204);
        expect(([] as string[]).concat(out.headers['set-cookie'] as unknown as string[])[0]).toMatch(/^console_session=; /);
        // The cookie kept (a copy, a stolen one) no longer works anywhere.
        for (const app of [t, replica]) {
          expectError(await app.http.get('/console/api/session').set('Cookie', cookie), 401, 'invalid_operator_token');
          expectError(await app.http.get('/admin/v1/projects/proj_nope').set('Cookie', cookie), 401, 'invalid_operator_token');
          expectError(
            await app.http.post('/admin/v1/projects').set('Cookie', cookie).set('X-CSRF-Token', csrf).send({ name: 'x' }),
            401,
            'invalid_operator_token',
          );
        }
        // Another session is untouched, and so is the bearer token.
        const other = await signIn();
        expect((await replica.http.get('/console/api/session').set('Cookie', other.cookie)).status).toBe(200);
        expect((await replica.http.get('/admin/v1/projects/proj_nope').set(bearer)).status).toBe(404);
      } finally {
        await replica.close();
      }
    });

    it('sign-out with a live session needs its X-CSRF-Token (403 csrf_token_invalid otherwise, and the session goes on)', async () => {
      const { cookie, csrf } = await signIn();
      expectError(await t.http.delete('/console/api/session').set('Cookie', cookie), 403, 'csrf_token_invalid');
      expectError(await t.http.delete('/console/api/session').set('Cookie', cookie).set('X-CSRF-Token', 'forged'), 403, 'csrf_token_invalid');
      const other = await signIn();
      expectError(await t.http.delete('/console/api/session').set('Cookie', cookie).set('X-CSRF-Token', other.csrf), 403, 'csrf_token_invalid');
      expect((await t.http.get('/console/api/session').set('Cookie', cookie)).status).toBe(200);
      expect((await t.http.delete('/console/api/session').set('Cookie', cookie).set('X-CSRF-Token', csrf)).status).toBe(204);
    });

    it('the cookie expires after 12 hours (service clock)', async () => {
      const { cookie } = await signIn();
      t.clock.advance(12 * 3600 + 1);
      try {
        expectError(await t.http.get('/console/api/session').set('Cookie', cookie), 401, 'invalid_operator_token');
        expectError(await t.http.get('/admin/v1/projects/proj_nope').set('Cookie', cookie), 401, 'invalid_operator_token');
      } finally {
        t.clock.advance(-(12 * 3600 + 1));
      }
    });

    it('production cookies are Secure', async () => {
      const prod = await createTestApp({
        OPERATOR_TOKEN: token,
        NODE_ENV: 'production',
        TEST_CLOCK: 'off',
        WEBHOOK_SIGNING_KEY: randomBytes(32).toString('hex'),
        PUBLIC_BASE_URL: 'https://api.example.com',
        DOCS_ENABLED: 'false',
      });
      try {
        const res = await prod.http.post('/console/api/session').send({ token });
        expect(res.status).toBe(204);
        expect(([] as string[]).concat(res.headers['set-cookie'] as unknown as string[])[0]).toContain('; Secure');
      } finally {
        await prod.close();
      }
    });
  });

  describe('the operator API with the cookie', () => {
    it('reads with the cookie alone; changes need the session’s X-CSRF-Token (403 csrf_token_invalid otherwise); bearer needs none', async () => {
      const { cookie, csrf } = await signIn();
      const created = await t.http.post('/admin/v1/projects').set('Cookie', cookie).set('X-CSRF-Token', csrf).send({ name: 'From the console' });
      expect(created.status).toBe(201);
      const read = await t.http.get(`/admin/v1/projects/${created.body.id}`).set('Cookie', cookie);
      expect(read.status).toBe(200);
      expect(read.body.name).toBe('From the console');
      expectError(await t.http.post('/admin/v1/projects').set('Cookie', cookie).send({ name: 'x' }), 403, 'csrf_token_invalid');
      expectError(await t.http.post('/admin/v1/projects').set('Cookie', cookie).set('X-CSRF-Token', 'forged').send({ name: 'x' }), 403, 'csrf_token_invalid');
      // Another session's CSRF token does not fit this session.
      const other = await signIn();
      expectError(await t.http.post('/admin/v1/projects').set('Cookie', cookie).set('X-CSRF-Token', other.csrf).send({ name: 'x' }), 403, 'csrf_token_invalid');
      expect((await t.http.post('/admin/v1/projects').set(bearer).send({ name: 'bearer' })).status).toBe(201);
      // A wrong bearer is not rescued by a valid cookie.
      expectError(
        await t.http.get(`/admin/v1/projects/${created.body.id}`).set('Cookie', cookie).set('Authorization', 'Bearer wrong'),
        401,
        'invalid_operator_token',
      );
      // A cookie signed under another operator token is refused.
      expectError(
        await t.http.get(`/admin/v1/projects/${created.body.id}`).set('Cookie', 'console_session=AAAAAAAAAAAAAAAAAAAAAAAA.99999999999999.c2lnbmF0dXJl'),
        401,
        'invalid_operator_token',
      );
    });

    it('a session works on another replica with the same token (a signed cookie: only sign-outs are stored)', async () => {
      const { cookie } = await signIn();
      const replica = await createTestApp({ OPERATOR_TOKEN: token, CONSOLE_DIR: dir });
      try {
        expect((await replica.http.get('/console/api/session').set('Cookie', cookie)).status).toBe(200);
      } finally {
        await replica.close();
      }
    });
  });

  describe('sign-in attempts', () => {
    it('five failed sign-ins a minute from one address, then 429 (even with the right token) until the bucket refills', async () => {
      const limited = await createTestApp({ OPERATOR_TOKEN: `op_limited_${randomBytes(12).toString('hex')}` });
      try {
        for (let i = 0; i < 5; i++) expectError(await limited.http.post('/console/api/session').send({ token: `wrong-${i}` }), 401, 'invalid_operator_token');
        const sixth = await limited.http.post('/console/api/session').send({ token: 'wrong-again' });
        expectError(sixth, 429, 'rate_limited');
        expect(Number(sixth.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expectError(await limited.http.post('/console/api/session').send({ token: limited.config.operatorToken }), 429, 'rate_limited');
        limited.clock.advance(60);
        expect((await limited.http.post('/console/api/session').send({ token: limited.config.operatorToken })).status).toBe(204);
      } finally {
        await limited.close();
      }
    });
  });
});
