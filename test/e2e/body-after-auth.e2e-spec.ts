import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { expectError } from '../support/expect-error.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';

/** ~60 KB of gzip that inflates to 25 MB of JSON: what a stranger could send to make the service work. */
function gzipBomb(): Buffer {
  return gzipSync(Buffer.from(`{"pad":"${'a'.repeat(25 * 1024 * 1024)}"}`), { level: 9 });
}

describe('request bodies are read only for an authenticated caller of a known route, within the route limit', () => {
  let t: TestApp;
  let fx: ProjectFixture;
  const bomb = gzipBomb();
  /** Raw HTTP: supertest re-encodes a pre-compressed Buffer body. */
  const sendGzip = (path: string, headers: Record<string, string> = {}, body: Buffer = bomb) =>
    new Promise<{ status: number; body: any; headers: Record<string, string> }>((resolve, reject) => {
      const { port } = t.app.getHttpServer().address() as AddressInfo;
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path,
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': body.length, ...headers },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), headers: res.headers as Record<string, string> }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
    fx = await createProjectWithApp(t);
  });
  afterAll(async () => t.close());

  it('the bomb is small on the wire', () => {
    expect(bomb.length).toBeLessThan(100 * 1024);
  });

  it('an unknown route is answered without reading or inflating the body', async () => {
    const res = await sendGzip('/v1/nothing/here');
    expectError(res, 400, 'missing_required_param');
    expect(res.body.error.message).toContain('Unknown route: POST /v1/nothing/here');
  });

  it.each(['/v1/events', '/v1/identify', '/v1/server/customers/cdcust_x/grant'])('no key on %s: 401 before the body is read', async (path) => {
    expectError(await sendGzip(path), 401, 'missing_api_key');
  });

  it('a wrong key or the wrong key kind: 401 before the body is read', async () => {
    expectError(await sendGzip('/v1/events', { Authorization: `Bearer cd_sk_test_${'a'.repeat(32)}` }), 401, 'invalid_api_key');
    expectError(await sendGzip('/v1/server/customers/cdcust_x/grant', keyHeaders(fx, fx.keys.pubTest)), 401, 'invalid_api_key');
  });

  it('no operator token: 401 before the body is read', async () => {
    expectError(await sendGzip('/admin/v1/projects'), 401, 'invalid_operator_token');
  });

  it('an authenticated caller: inflation stops at the route limit (counted on the inflated size), 400 naming the limit', async () => {
    const events = await sendGzip('/v1/events', keyHeaders(fx, fx.keys.skTest));
    expectError(events, 400, 'invalid_param_value');
    expect(events.body.error.message).toContain('1 MB');
    const operator = await sendGzip('/admin/v1/projects', operatorAuth());
    expectError(operator, 400, 'invalid_param_value');
    expect(operator.body.error.message).toContain('100 KB');
  });

  it('a corrupt gzip body from an authenticated caller is 400, not 500', async () => {
    const corrupt = Buffer.concat([gzipSync(Buffer.from('{"name":"x"}')).subarray(0, 12), Buffer.from('not gzip at all')]);
    const res = await sendGzip('/admin/v1/projects', operatorAuth(), corrupt);
    expectError(res, 400, 'invalid_param_value');
  });

  it('a small gzip body from an authenticated caller is inflated and read as usual', async () => {
    const res = await sendGzip('/admin/v1/projects', operatorAuth(), gzipSync(Buffer.from(JSON.stringify({ name: 'Zipped' }))));
    expect(res.status).toBe(201);
    expect(res.body.name).toBe('Zipped');
  });
});
