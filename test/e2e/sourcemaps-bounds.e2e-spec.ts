import type { Server } from 'node:http';
import { type AddressInfo, type Socket, connect } from 'node:net';
import { randomUUID } from 'node:crypto';
import { createProjectWithApp, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
const smallMap = { version: 3, sources: ['a.ts'], names: [], mappings: 'AAAA' };
const batch = () => ({ release: `1.0.${randomUUID().slice(0, 8)}`, environment: 'sandbox', files: [{ fileUrl: 'app:///a.js', sourceMap: b64(smallMap) }] });

describe('source maps: per-project bucket and per-replica upload cap', () => {
  let t: TestApp;
  let p: ProjectFixture;
  let port: number;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    t = await createTestApp({ SOURCEMAP_UPLOAD_CONCURRENCY: '1', SOURCEMAP_UPLOAD_QUEUE_MS: '300' });
    p = await createProjectWithApp(t);
    const server: Server = t.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await t?.close();
  });

  const upload = (key = p.keys.skTest) =>
    t.http
      .post('/v1/releases/sourcemaps')
      .set({ Authorization: `Bearer ${key}` })
      .send(batch());

  /** An upload whose body never completes: it holds its admission until the socket closes. */
  async function holdingUpload(): Promise<Socket> {
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST /v1/releases/sourcemaps HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${p.keys.skTest}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"release":`,
    );
    // Admitted once the key is checked and the bucket charged.
    await new Promise((resolve) => setTimeout(resolve, 300));
    return socket;
  }

  it('beyond the cap an upload waits SOURCEMAP_UPLOAD_QUEUE_MS, then 503 upload_capacity with Retry-After; the place is freed when the first ends', async () => {
    const holder = await holdingUpload();
    const started = Date.now();
    const refused = await upload();
    expectError(refused, 503, 'upload_capacity');
    expect(refused.headers['retry-after']).toBe('5');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);

    // A waiting upload is admitted as soon as the place is freed.
    const waiting = upload();
    await new Promise((resolve) => setTimeout(resolve, 50));
    holder.destroy();
    const admitted = await waiting;
    expect(admitted.status).toBe(200);
    expect(admitted.body.uploaded).toBe(1);
    // Other routes are not held by the cap.
    expect((await t.http.get('/v1/healthz')).status).toBe(200);
  });

  it("each project has its own bucket: over it, 429 rate_limited before the body is read; another project's uploads go on", async () => {
    const limited = await createProjectWithApp(t);
    const put = await t.http
      .put(`/admin/v1/projects/${limited.projectId}/rate-limits`)
      .set(operatorAuth())
      .send({ sourcemaps: { sustained: 0.01, burst: 2 } });
    expect(put.status).toBe(200);
    expect((await upload(limited.keys.skTest)).status).toBe(200);
    expect((await upload(limited.keys.skTest)).status).toBe(200);
    const over = await upload(limited.keys.skTest);
    expectError(over, 429, 'rate_limited');
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    expect((await upload()).status).toBe(200);
  });

  it('a batch is decoded by the worker: a bad map is a row, a good one is stored, malformed JSON is 400', async () => {
    const res = await t.http
      .post('/v1/releases/sourcemaps')
      .set({ Authorization: `Bearer ${p.keys.skTest}` })
      .send({
        ...batch(),
        files: [
          { fileUrl: 'app:///ok.js', sourceMap: b64(smallMap) },
          { fileUrl: 'app:///bad.js', sourceMap: b64({ version: 2 }) },
        ],
      });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { status: string }) => r.status)).toEqual(['uploaded', 'error']);
    const malformed = await t.http
      .post('/v1/releases/sourcemaps')
      .set({ Authorization: `Bearer ${p.keys.skTest}`, 'Content-Type': 'application/json' })
      .send('{"release":');
    expectError(malformed, 400, 'invalid_param_value');
  });
});
