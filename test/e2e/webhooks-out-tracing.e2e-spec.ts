// Trace context into deliveries: the event keeps the `traceparent` of the change that produced
// it, and its delivery continues that trace up to the app's back-end.
import { randomBytes } from 'node:crypto';
import type { tracing } from '@opentelemetry/sdk-node';
import { WebhookDispatcher } from '#webhooks';
import { createProjectWithApp, keyHeaders } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { startInMemoryTracing, stopInMemoryTracing } from '../support/tracing.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

describe('outbound webhooks: trace context (OpenTelemetry, in-process exporter)', () => {
  let exporter: tracing.InMemorySpanExporter;
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    exporter = await startInMemoryTracing();
    t = await createTestApp({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123456789' }, { ownDatabase: true });
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
    await stopInMemoryTracing();
  });

  it("a delivery carries the change's trace: stored traceparent, a delivery span under the change, the same trace id at the receiver", async () => {
    const fx = await createProjectWithApp(t);
    const hook = '/traced';
    const created = await t.http
      .post(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(hook), env: 'sandbox', eventTypes: ['customer.entitlements.updated'] });
    expect(created.status).toBe(201);
    const identified = await t.http.post('/v1/identify').set(keyHeaders(fx, fx.keys.skTest)).send({ userId: 'traced_user', anonymousId: 'traced_anon' });
    const customerId = identified.body.serviceCustomerId;

    const traceId = hex(16);
    const granted = await t.http
      .post(`/v1/server/customers/${customerId}/grant`)
      .set(keyHeaders(fx, fx.keys.skTest))
      .set('traceparent', `00-${traceId}-${hex(8)}-01`)
      .set('tracestate', 'vendor=abc')
      .send({ entitlementKey: 'pro_access', duration: 'P30D', reason: 'Support credit after an outage' });
    expect(granted.status).toBe(200);

    const [event] = await t.dataSource.query(
      `SELECT id, traceparent, tracestate FROM webhook_events WHERE project_id = $1 AND type = 'customer.entitlements.updated'`,
      [fx.projectId],
    );
    expect(event.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(event.tracestate).toBe('vendor=abc');

    await t.app.get(WebhookDispatcher).drain();
    const [delivery] = receiver.of(hook);
    expect(delivery.json.id).toBe(event.id);
    expect(String(delivery.headers.traceparent)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(delivery.headers.tracestate).toBe('vendor=abc');

    // The delivery's span is a child of the span that recorded the event, in the change's trace.
    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    const deliverySpan = spans.find((s) => s.name === 'webhook delivery');
    expect(deliverySpan).toBeDefined();
    expect(deliverySpan!.parentSpanContext?.spanId).toBe(event.traceparent.split('-')[2]);
    expect(deliverySpan!.attributes['webhook.event_id']).toBe(event.id);
    // The receiver's header names the HTTP client span of the delivery (or the delivery span).
    const senderSpanId = String(delivery.headers.traceparent).split('-')[2];
    expect(spans.some((s) => s.spanContext().spanId === senderSpanId)).toBe(true);
  });
});
