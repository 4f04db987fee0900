// A database that cannot be reached or stops answering: requests end with a
// `503 internal_error` envelope and Retry-After within the connect / read timeouts, the outage
// is logged once per interval (not a stack per request), and the app recovers without a
// restart. The app talks to the test PostgreSQL through a TCP relay on another port that this
// test controls: "down" refuses and resets every connection, "silent" keeps the connections
// open and forwards nothing (a stopped or partitioned server). bench/faults/postgres-outage.mjs
// does the same with a real PostgreSQL it stops and starts.
import { randomUUID } from 'node:crypto';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { DATABASE_UNREACHABLE_LOG_INTERVAL_MS } from '../../libs/platform/src/errors/all-exceptions.filter.js';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

type Mode = 'up' | 'down' | 'silent';

/** A TCP relay in front of PostgreSQL whose behaviour the test switches. */
class DatabaseRelay {
  mode: Mode = 'up';
  port = 0;
  private server?: Server;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly upstream: { host: string; port: number }) {}

  async start(port = 0): Promise<void> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }

  private accept(client: Socket): void {
    this.track(client);
    if (this.mode === 'silent') return; // accepted, never answered
    const server = connect(this.upstream.port, this.upstream.host);
    this.track(server);
    client.pipe(server);
    server.pipe(client);
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
  }

  /** Refuses new connections and resets the open ones (a stopped server). */
  async down(): Promise<void> {
    this.mode = 'down';
    await new Promise<void>((resolve) => {
      this.server!.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    });
  }

  /** Keeps every connection open and forwards nothing more (a server that stopped answering). */
  silent(): void {
    this.mode = 'silent';
    for (const s of this.sockets) {
      s.unpipe();
      s.pause();
    }
  }

  /** Back on the same port; connections of a silent period are reset, as the server would on restart. */
  async up(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.mode = 'up';
    if (!this.server?.listening) await this.start(this.port);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    if (this.server?.listening) await new Promise((resolve) => this.server!.close(resolve));
  }
}

describe('a database that cannot be reached or stops answering', () => {
  let relay: DatabaseRelay;
  let t: TestApp;
  let p: ProjectFixture;
  const lines: Array<Record<string, any>> = [];
  let customerId: string;
  const read = () => t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(keyHeaders(p, p.keys.skTest)).timeout(20_000);
  const write = () =>
    t.http
      .post('/v1/events')
      .set(keyHeaders(p, p.keys.pubTest))
      .send({ events: [{ name: 'outage.test', eventId: `evt_${randomUUID()}`, anonymousId: 'anon_outage' }] })
      .timeout(20_000);
  const unreachableLines = () => lines.filter((l) => l.msg === 'database unreachable: answering 503');

  beforeAll(async () => {
    const url = new URL(process.env.DATABASE_URL!);
    relay = new DatabaseRelay({ host: url.hostname, port: Number(url.port || 5432) });
    await relay.start();
    url.hostname = '127.0.0.1';
    url.port = String(relay.port);
    t = await createTestApp(
      {
        DATABASE_URL: url.toString(),
        DB_STATEMENT_TIMEOUT_MS: '500',
        DB_POOL_ACQUIRE_TIMEOUT_MS: '500',
        KEY_CACHE_TTL_MS: '60000',
        LOG_LEVEL: 'warn',
      },
      { onLogLine: (line) => lines.push(line) },
    );
    p = await createProjectWithApp(t);
    const identified = await t.http.post('/v1/identify').set(keyHeaders(p, p.keys.skTest)).send({ userId: 'outage_user', anonymousId: 'outage_anon' });
    expect(identified.status).toBe(200);
    customerId = identified.body.serviceCustomerId;
    expect((await read()).status).toBe(200); // the key is cached now
  });
  afterAll(async () => {
    await relay?.up();
    await t?.close();
    await relay?.close();
  });

  it('stopped: every request is a 503 internal_error envelope with Retry-After, logged once for the interval', async () => {
    await relay.down();
    lines.length = 0;
    const results = [];
    for (let i = 0; i < 10; i++) results.push(i % 2 ? await read() : await write());
    for (const res of results) {
      expect({ status: res.status, type: res.body.error?.type, code: res.body.error?.code }).toEqual({
        status: 503,
        type: 'internal_error',
        code: 'internal_error',
      });
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
      expect(JSON.stringify(res.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/i);
    }
    // 10 requests inside one DATABASE_UNREACHABLE_LOG_INTERVAL_MS: at most one line (the first
    // failure of the outage), no stacks, no per-request "unhandled error".
    expect(DATABASE_UNREACHABLE_LOG_INTERVAL_MS).toBeGreaterThanOrEqual(5_000);
    expect(unreachableLines().length).toBe(1);
    expect(unreachableLines()[0].err.stack).toBeFalsy();
    expect(unreachableLines()[0].err.code).toBe('ECONNREFUSED');
    expect(lines.filter((l) => l.msg === 'unhandled error')).toEqual([]);
  });

  it('back on the same port: the app recovers without a restart', async () => {
    await relay.up();
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await read()).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    expect((await write()).status).toBe(202);
  });

  it('silent (connections open, no answer): requests end with a 5xx envelope instead of hanging, then recover', async () => {
    relay.silent();
    const results = await Promise.all([read(), write(), read()]);
    for (const res of results) {
      // 503 when the connection or the read timed out; 500 when the pool was busy with stuck connections.
      expect([500, 503]).toContain(res.status);
      expect(res.body.error.type).toBe('internal_error');
    }
    expect(results.some((res) => res.status === 503)).toBe(true);
    await relay.up();
    let status = 0;
    for (let i = 0; i < 80 && status !== 200; i++) {
      status = (await read()).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
  });
});
