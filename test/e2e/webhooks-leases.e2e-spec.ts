import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebhookDispatcher } from '#webhooks';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';

const SIGNING_KEY = 'lease-signing-key-0123456789abcdef0123456789';

/** A receiver that holds every request open until release(): attempts stay in flight, their leases held. */
async function holdingReceiver() {
  const held: http.ServerResponse[] = [];
  const ids: string[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      ids.push(`${req.url} ${String(req.headers['webhook-id'])}`);
      held.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    ids,
    release: () => held.splice(0).forEach((res) => res.writeHead(200).end('ok')),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('webhook delivery leases (database clock)', () => {
  let a: TestApp;
  let b: TestApp;
  let receiver: Awaited<ReturnType<typeof holdingReceiver>>;

  beforeAll(async () => {
    a = await createTestApp({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: SIGNING_KEY }, { ownDatabase: true });
    b = await createTestApp({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: SIGNING_KEY, DATABASE_URL: a.config.databaseUrl });
    receiver = await holdingReceiver();
  });
  afterAll(async () => {
    receiver?.release();
    await b?.close();
    await a?.close();
    await receiver?.close();
  });

  it('two dispatchers whose clocks are 62 s apart send each delivery once', async () => {
    // Replica b's clock runs 62 s ahead of replica a's: past a's 30 s leases if they were on a's clock.
    b.clock.advance(Math.round((a.clock.nowMs() - b.clock.nowMs()) / 1000) + 62);
    const fx: ProjectFixture = await createProjectWithApp(a);
    const endpoints: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await a.http
        .post(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`)
        .set(operatorAuth())
        .send({ url: receiver.url(`/hook/${i}`), env: 'sandbox' });
      expect(res.status).toBe(201);
      endpoints.push(res.body.id);
    }
    /** The deliveries of the endpoints, as the operator API lists them. */
    const listed = async (status?: string): Promise<{ status: string; attempts: number }[]> => {
      const lists = await Promise.all(
        endpoints.map((id) => a.http.get(`/admin/v1/webhook-endpoints/${id}/deliveries?limit=100${status ? `&status=${status}` : ''}`).set(operatorAuth())),
      );
      for (const list of lists) expect(list.body.hasMore).toBe(false);
      return lists.flatMap((list) => list.body.data);
    };
    for (let i = 0; i < 3; i++) {
      const identified = await a.http
        .post('/v1/identify')
        .set(keyHeaders(fx, fx.keys.skTest))
        .send({ userId: `user_${i}`, anonymousId: `anon_${i}` });
      expect(identified.status).toBe(200);
      const granted = await a.http
        .post(`/v1/server/customers/${identified.body.serviceCustomerId}/grant`)
        .set(keyHeaders(fx, fx.keys.skTest))
        .send({ entitlementKey: 'pro_access', duration: 'P30D', reason: 'Goodwill credit after the outage' });
      expect(granted.status).toBe(200);
    }
    const deliveries = (await listed()).length;
    expect(deliveries).toBeGreaterThanOrEqual(12);

    // a leases every delivery and starts sending; the receiver holds them all open.
    expect(await a.app.get(WebhookDispatcher).poll()).toBe(deliveries);
    const until = Date.now() + 5_000;
    while (receiver.ids.length < deliveries && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(receiver.ids).toHaveLength(deliveries);

    // b polls while a still holds the leases: it takes none of them.
    expect(await b.app.get(WebhookDispatcher).poll()).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    receiver.release();
    await a.app.get(WebhookDispatcher).drain();
    await b.app.get(WebhookDispatcher).drain();
    receiver.release();

    expect(receiver.ids).toHaveLength(deliveries);
    expect(new Set(receiver.ids).size).toBe(deliveries);
    const succeeded = await listed('succeeded');
    expect(succeeded).toHaveLength(deliveries);
    expect(succeeded.every((delivery) => delivery.attempts === 1)).toBe(true);
  });
});
