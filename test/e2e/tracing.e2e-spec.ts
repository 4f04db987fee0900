// Tracing through HTTP: one request's spans from the incoming `traceparent` to SQL (and Redis),
// the trace id in its log lines, `traceparent` on the calls to a store, and `X-Request-Id`.
import { randomBytes } from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import type { tracing } from '@opentelemetry/sdk-node';
import { RailSecrets } from '#rails';
import { AndroidPublisherStandIn } from '../support/android-publisher-standin.js';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { startInMemoryTracing, stopInMemoryTracing } from '../support/tracing.js';

const PACKAGE = 'com.example.traced';
const PUSH_TOKEN = `push_${randomBytes(24).toString('hex')}`;
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

describe('tracing (OpenTelemetry, in-process exporter)', () => {
  let exporter: tracing.InMemorySpanExporter;
  let t: TestApp;
  let fx: ProjectFixture;
  let file: RailSecretsFile;
  const google = new AndroidPublisherStandIn();
  const logs: Record<string, unknown>[] = [];
  /** The customer the store webhook test creates. */
  let customerId = '';

  beforeAll(async () => {
    exporter = await startInMemoryTracing();
    await google.start();
    file = new RailSecretsFile();
    t = await createTestApp(
      { RAIL_SECRETS_FILE: file.path, ANDROID_PUBLISHER_BASE_URL: google.baseUrl, LOG_LEVEL: 'info' },
      { onLogLine: (line) => logs.push(line) },
    );
    fx = await createProjectWithApp(t, { platform: 'android', packageName: PACKAGE });
    file.write({ projects: { [fx.projectId]: { android_store: { pushToken: PUSH_TOKEN, serviceAccount: google.serviceAccount() } } } });
    t.app.get(RailSecrets).reloadIfChanged();
    expect((await t.http.put(`/admin/v1/projects/${fx.projectId}/rails/android_store`).set(operatorAuth()).send({ packageName: PACKAGE })).status).toBe(200);
    const products = await t.http
      .put(`/admin/v1/projects/${fx.projectId}/products`)
      .set(operatorAuth())
      .send({ products: [{ rail: 'android_store', productId: 'pro_monthly', entitlementKeys: ['pro'] }] });
    expect(products.status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
    await google.stop();
    file?.remove();
    await stopInMemoryTracing();
  });

  const spansOf = (traceId: string) => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  const parentOf = (span: tracing.ReadableSpan) => span.parentSpanContext?.spanId;
  /** Waits for the server span: it ends after the response is written, which may be after supertest resolves. */
  async function serverSpanOf(traceId: string): Promise<tracing.ReadableSpan> {
    for (let i = 0; i < 100; i++) {
      const span = spansOf(traceId).find((s) => s.kind === SpanKind.SERVER && s.instrumentationScope.name === '@opentelemetry/instrumentation-http');
      if (span) return span;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no server span in trace ${traceId}`);
  }

  it("every log line written while serving the request carries the request's trace id", async () => {
    const traceId = hex(16);
    const res = await t.http
      .get('/v1/config')
      .set('Authorization', 'Bearer cd_pub_test_nope')
      .set('traceparent', `00-${traceId}-${hex(8)}-01`);
    expect(res.status).toBe(401);
    await serverSpanOf(traceId);
    const requestId = res.headers['x-request-id'];
    const lines = logs.filter((l) => l.requestId === requestId);
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['request']));
    for (const line of lines) {
      expect(line.trace_id).toBe(traceId);
      expect(line.span_id).toMatch(/^[0-9a-f]{16}$/);
    }
  });

  it('the calls to the store (token exchange and Publisher API, through fetch) carry the trace context of the webhook request', async () => {
    const traceId = hex(16);
    const token = `tok_${hex(8)}`;
    google.subscriptions.set(`${PACKAGE}|${token}`, {
      regionCode: 'US',
      startTime: new Date(t.clock.nowMs() - 60_000).toISOString(),
      subscriptionState: 'SUBSCRIPTION_STATE_ACTIVE',
      latestOrderId: `GPA.${hex(6)}`,
      acknowledgementState: 'ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED',
      lineItems: [{ productId: 'pro_monthly', expiryTime: new Date(t.clock.nowMs() + 86_400_000).toISOString(), autoRenewingPlan: { autoRenewEnabled: true } }],
    });
    const notification = {
      version: '1.0',
      packageName: PACKAGE,
      eventTimeMillis: String(t.clock.nowMs()),
      subscriptionNotification: { version: '1.0', notificationType: 4, purchaseToken: token, subscriptionId: 'pro_monthly' },
    };
    const before = google.traceparents.length;
    const res = await t.http
      .post(`/v1/webhooks/android_store/${fx.projectId}?token=${PUSH_TOKEN}`)
      .set('traceparent', `00-${traceId}-${hex(8)}-01`)
      .send({ message: { data: Buffer.from(JSON.stringify(notification)).toString('base64'), messageId: hex(8) }, subscription: 'projects/p/subscriptions/s' });
    expect(res.status).toBe(200);
    expect(res.body.decision).toBe('applied');
    customerId = res.body.serviceCustomerId;
    const received = google.traceparents.slice(before);
    expect(received.length).toBeGreaterThan(0);
    for (const header of received) expect(header).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    await serverSpanOf(traceId);
    const outgoing = spansOf(traceId).filter((s) => s.kind === SpanKind.CLIENT && s.instrumentationScope.name === '@opentelemetry/instrumentation-undici');
    expect(outgoing.length).toBe(received.length);
  });

  it('one request: the server span continues the incoming traceparent, the route handler span is its descendant, SQL (and Redis) spans are in the same trace', async () => {
    const traceId = hex(16);
    const parentSpanId = hex(8);
    const res = await t.http
      .get(`/v1/server/customers/${customerId}/entitlements`)
      .set(keyHeaders(fx, fx.keys.skLive))
      .set('traceparent', `00-${traceId}-${parentSpanId}-01`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([expect.objectContaining({ key: 'pro', isActive: true })]);

    const server = await serverSpanOf(traceId);
    expect(parentOf(server)).toBe(parentSpanId);
    expect(server.attributes['http.route']).toBe('/v1/server/customers/:customerId/entitlements');

    const spans = spansOf(traceId);
    const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const descendsFromServer = (span: tracing.ReadableSpan): boolean => {
      for (let p = parentOf(span); p; p = byId.get(p) ? parentOf(byId.get(p)!) : undefined) if (p === server.spanContext().spanId) return true;
      return false;
    };
    const handler = spans.find((s) => s.instrumentationScope.name === '@fastify/otel' && s.name.startsWith('handler - '));
    expect(handler).toBeDefined();
    expect(descendsFromServer(handler!)).toBe(true);

    const sql = spans.filter((s) => s.attributes['db.system'] === 'postgresql' || s.attributes['db.system.name'] === 'postgresql');
    expect(sql.length).toBeGreaterThan(0);
    for (const span of sql) {
      expect(span.kind).toBe(SpanKind.CLIENT);
      expect(descendsFromServer(span)).toBe(true);
    }
    expect(sql.some((s) => String(s.attributes['db.statement'] ?? s.attributes['db.query.text'] ?? '').length > 0)).toBe(true);

    if (process.env.REDIS_URL) {
      const redis = spans.filter((s) => s.attributes['db.system'] === 'redis' || s.attributes['db.system.name'] === 'redis');
      expect(redis.length).toBeGreaterThan(0);
      for (const span of redis) expect(descendsFromServer(span)).toBe(true);
    }
  });
});

describe('X-Request-Id', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('an incoming id of a safe form is kept: echoed in the header and the error body', async () => {
    const id = 'lb-7f3a.9c:01_AB';
    const res = await t.http.get('/v1/config').set('X-Request-Id', id);
    expect(res.status).toBe(401);
    expect(res.headers['x-request-id']).toBe(id);
    expect(res.body.error.request_id).toBe(id);
    const ok = await t.http.get('/v1/healthz').set('X-Request-Id', id);
    expect(ok.headers['x-request-id']).toBe(id);
  });

  it('an id of another form is replaced by a new req_ id', async () => {
    for (const sent of ['has space', 'x'.repeat(129), 'quote"d', 'semi;colon', 'ünïcode']) {
      const res = await t.http.get('/v1/config').set('X-Request-Id', sent);
      expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
      expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
    }
    const none = await t.http.get('/v1/config');
    expect(none.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
  });
});
