// Production operations: readiness, access-log error codes, Prometheus metrics on
// their own listener. The SIGTERM sequence through a real process is in process.e2e-spec.ts.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { type AddressInfo, type Socket, createServer } from 'node:net';
import { Metrics, type MetricsServer, ReadinessProbe, UNMATCHED_ROUTE, notReadyReason, startMetricsServer, Readiness } from '#platform';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';

function scrape(port: number, path = '/metrics'): Promise<{ status: number; contentType: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        let body = '';
        res.on('data', (d) => (body += String(d)));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: res.headers['content-type'], body }));
      })
      .on('error', reject);
  });
}

/** The value of one sample line `name{labels} value` (labels in any order), or undefined. */
function sample(body: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of body.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) found[pair[1]] = pair[2];
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[3]);
  }
  return undefined;
}

describe('operations: readiness, access log, metrics', () => {
  let t: TestApp;
  const lines: Array<Record<string, any>> = [];
  beforeAll(async () => {
    t = await createTestApp({ LOG_LEVEL: 'info' }, { onLogLine: (line) => lines.push(line) });
  });
  afterAll(async () => t.close());

  describe('GET /v1/readyz', () => {
    it('200 ready when PostgreSQL answers; Redis reported; no auth, no-store, request id', async () => {
      const res = await t.http.get('/v1/readyz');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', redis: process.env.REDIS_URL ? 'ok' : 'not_configured' } });
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
    });

    it('Redis down is reported but does not fail readiness (the limiter fails open)', async () => {
      const other = await createTestApp({ REDIS_URL: 'redis://127.0.0.1:1' });
      try {
        const res = await other.http.get('/v1/readyz');
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', redis: 'down' } });
      } finally {
        await other.close();
      }
    });

    it('503 not_ready from the moment shutdown begins; its access-log line says why', async () => {
      const otherLines: Array<Record<string, any>> = [];
      const other = await createTestApp({ LOG_LEVEL: 'info' }, { onLogLine: (line) => otherLines.push(line) });
      try {
        other.app.get(Readiness).beginShutdown();
        const res = await other.http.get('/v1/readyz');
        expect(res.status).toBe(503);
        expect(otherLines.find((l) => l.msg === 'request' && l.requestId === res.headers['x-request-id'])).toEqual(
          expect.objectContaining({ status: 503, code: 'shutting_down' }),
        );
        expect(res.body).toEqual({ status: 'not_ready', checks: { database: 'ok', migrations: 'ok', redis: process.env.REDIS_URL ? 'ok' : 'not_configured' } });
        expect(res.headers['cache-control']).toBe('no-store');
        // Liveness is unaffected.
        expect((await other.http.get('/v1/healthz')).status).toBe(200);
      } finally {
        await other.close();
      }
    });

    it('a PostgreSQL that accepts connections but never answers is down (bounded wait), not a hang', async () => {
      const sockets = new Set<Socket>();
      const blackHole = createServer((socket) => {
        sockets.add(socket);
        socket.on('error', () => undefined);
      });
      await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
      const { port } = blackHole.address() as AddressInfo;
      const probe = new ReadinessProbe(`postgres://u:p@127.0.0.1:${port}/x`, undefined);
      try {
        expect(await probe.check()).toEqual({ status: 'not_ready', checks: { database: 'down', migrations: 'pending', redis: 'not_configured' } });
        // Concurrent probes share one check.
        const [a, b] = await Promise.all([probe.check(), probe.check()]);
        expect(a).toBe(b);
      } finally {
        await probe.close();
        for (const s of sockets) s.destroy();
        await new Promise((r) => blackHole.close(r));
      }
    });

    it('an unreachable PostgreSQL is down', async () => {
      const probe = new ReadinessProbe('postgres://u:p@127.0.0.1:1/x', undefined);
      try {
        const report = await probe.check();
        expect(report.checks.database).toBe('down');
        expect(notReadyReason(report, false)).toBe('database_unreachable');
      } finally {
        await probe.close();
      }
    });
  });

  describe('access log', () => {
    it('4xx and 5xx lines carry the error code; 2xx lines do not', async () => {
      const missing = await t.http.get('/v1/no-such-route');
      const unauth = await t.http.get('/v1/config');
      const ok = await t.http.get('/v1/healthz');
      const line = (requestId: string) => lines.find((l) => l.msg === 'request' && l.requestId === requestId);
      expect(line(missing.headers['x-request-id'])).toEqual(expect.objectContaining({ status: missing.status, code: missing.body.error.code }));
      expect(line(unauth.headers['x-request-id'])).toEqual(expect.objectContaining({ status: 401, code: 'missing_api_key' }));
      expect(line(ok.headers['x-request-id'])).toEqual(expect.objectContaining({ status: 200 }));
      expect(line(ok.headers['x-request-id'])).not.toHaveProperty('code');
    });
  });

  describe('Prometheus metrics', () => {
    let server: MetricsServer;
    let p: ProjectFixture;
    beforeAll(async () => {
      server = await startMetricsServer(t.app.get(Metrics), 0, '127.0.0.1');
      p = await createProjectWithApp(t);
      await setRateLimits(t, p.projectId, { events: { sustained: 1, burst: 3 } });
    });
    afterAll(async () => server.close());

    it('are not served on the API port', async () => {
      for (const path of ['/metrics', '/v1/metrics']) {
        const res = await t.http.get(path);
        expect(res.status).not.toBe(200); // the unknown-route envelope
        expect(res.body.error).toEqual(expect.objectContaining({ type: 'invalid_request_error' }));
        expect(res.text).not.toContain('http_requests_total');
      }
    });

    it('serve request counts and latency per route template, method and status', async () => {
      await t.http.get('/v1/healthz');
      await t.http.get('/v1/healthz');
      await t.http.get(`/v1/server/customers/cus_${randomUUID()}/entitlements`).set(keyHeaders(p, p.keys.skTest));
      await t.http.get('/v1/definitely-unknown');
      const res = await scrape(server.port);
      expect(res.status).toBe(200);
      expect(res.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(sample(res.body, 'http_requests_total', { route: '/v1/healthz', method: 'GET', status: '200' })).toBeGreaterThanOrEqual(2);
      expect(sample(res.body, 'http_request_duration_seconds_count', { route: '/v1/healthz', method: 'GET', status: '200' })).toBeGreaterThanOrEqual(2);
      expect(sample(res.body, 'http_request_duration_seconds_bucket', { route: '/v1/healthz', le: '+Inf' })).toBeGreaterThanOrEqual(2);
      // The template, never the raw path (no customer ids in label values).
      expect(res.body).toMatch(/http_requests_total\{[^}]*route="\/v1\/server\/customers\/:\w+\/entitlements"/);
      expect(res.body).not.toMatch(/route="[^"]*cus_/);
      expect(sample(res.body, 'http_requests_total', { route: UNMATCHED_ROUTE, status: '400' })).toBeGreaterThanOrEqual(1);
      expect(res.body).not.toContain('definitely-unknown');
    });

    it('serve pool gauges and the default process metrics; other paths 404', async () => {
      const res = await scrape(server.port);
      expect(sample(res.body, 'db_pool_connections', { state: 'idle' })).toEqual(expect.any(Number));
      expect(sample(res.body, 'db_pool_connections', { state: 'in_use' })).toEqual(expect.any(Number));
      expect(sample(res.body, 'db_pool_connections', { state: 'idle' })! + sample(res.body, 'db_pool_connections', { state: 'in_use' })!).toBeGreaterThan(0);
      expect(sample(res.body, 'db_pool_waiting')).toBe(0);
      expect(sample(res.body, 'process_resident_memory_bytes')).toBeGreaterThan(0);
      expect(sample(res.body, 'nodejs_eventloop_lag_seconds')).toEqual(expect.any(Number));
      expect((await scrape(server.port, '/')).status).toBe(404);
      expect((await scrape(server.port, '/v1/healthz')).status).toBe(404);
    });

    it('count rate-limit decisions and events received, de-duplicated, throttled and dropped', async () => {
      const before = await scrape(server.port);
      const value = (body: string, name: string, labels: Record<string, string> = {}) => sample(body, name, labels) ?? 0;
      const eventId = `evt_${randomUUID()}`;
      const ev = (id = `evt_${randomUUID()}`, extra: Record<string, unknown> = {}) => ({ name: 'page.viewed', eventId: id, anonymousId: 'anon_1', ...extra });
      // 3 events (one id twice, one malformed level) fit the burst of 3: allowed, one de-duplicated, one value dropped.
      const first = await t.http
        .post('/v1/events')
        .set(keyHeaders(p, p.keys.pubTest))
        .send({ events: [ev(eventId), ev(eventId), ev(undefined, { level: 'catastrophic' })] });
      expect(first.status).toBe(202);
      // The bucket is empty now: the next batch of 2 is throttled entirely (429).
      const second = await t.http
        .post('/v1/events')
        .set(keyHeaders(p, p.keys.pubTest))
        .send({ events: [ev(), ev()] });
      expect(second.status).toBe(429);
      const after = await scrape(server.port);
      const delta = (name: string, labels: Record<string, string> = {}) => value(after.body, name, labels) - value(before.body, name, labels);
      expect(delta('rate_limit_decisions_total', { bucket: 'events', decision: 'allowed' })).toBe(1);
      expect(delta('rate_limit_decisions_total', { bucket: 'events', decision: 'limited' })).toBe(1);
      expect(delta('events_received_total')).toBe(5);
      expect(delta('events_deduplicated_total')).toBe(1);
      expect(delta('events_throttled_total')).toBe(2);
      expect(delta('events_dropped_total', { reason: 'malformed_value' })).toBe(1);
      expect(after.body).toContain('# TYPE rate_limit_fail_open_total counter');
      expect(after.body).toContain('# TYPE rail_notifications_total counter');
      expect(after.body).toContain('# TYPE jobs_processed_total counter');
      expect(after.body).toContain('# TYPE job_queue_depth gauge');
      expect(after.body).toContain('# TYPE job_lag_seconds gauge');
    });

    it('a busy metrics port is a one-line configuration error', async () => {
      await expect(startMetricsServer(t.app.get(Metrics), server.port, '127.0.0.1')).rejects.toThrow(/^METRICS_PORT \d+ is already in use/);
    });
  });
});
