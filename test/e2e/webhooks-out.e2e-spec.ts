import { Webhook } from 'standardwebhooks';
import { JobQueue, JobWorker, Sql, type TenantScope } from '#platform';
import { ErasureWorker } from '#identity';
import { EntitlementWriter } from '#entitlements';
import { WebhookDispatcher } from '#webhooks';
import { deliveryDeadAfterAllAttempts } from '../support/factories/webhooks.js';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { testScope } from '../support/scopes.js';
import { type WebhookReceiver, startWebhookReceiver, verifyServiceSignature } from '../support/webhook-receiver.js';

const REASON = 'Goodwill credit after the March outage';

/** The error envelope, and (when given) a message naming the field. */
function expectErr(res: { status: number; body: any; headers: Record<string, string> }, status: number, code: string, message?: RegExp): void {
  expectError(res, status, code);
  if (message) expect(res.body.error.message).toMatch(message);
}

describe('outbound webhooks', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let counter = 0;

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123456789' }, { ownDatabase: true });
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const drain = () => t.app.get(WebhookDispatcher).drain();
  /** Event bodies still stored for a customer. */
  const storedBodies = async (scope: TenantScope, customerId: string): Promise<number> => {
    const [{ n }] = await t.dataSource.query(
      `SELECT count(*)::int AS n FROM webhook_events WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND body IS NOT NULL`,
      [scope.projectId, scope.env, customerId],
    );
    return n;
  };
  const advance = (seconds: number) => t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds });
  const path = () => `/hook/${++counter}`;

  async function newCustomer(fx: ProjectFixture, key = fx.keys.skTest): Promise<{ customerId: string; userId: string }> {
    const userId = `user_${++counter}`;
    const res = await t.http
      .post('/v1/identify')
      .set(keyHeaders(fx, key))
      .send({ userId, anonymousId: `anon_${counter}` });
    expect(res.status).toBe(200);
    return { customerId: res.body.serviceCustomerId, userId };
  }

  async function endpoint(fx: ProjectFixture, hookPath: string, extra: Record<string, unknown> = {}) {
    const res = await t.http
      .post(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(hookPath), env: 'sandbox', ...extra });
    expect(res.status).toBe(201);
    return res.body as { id: string; secret: string };
  }

  const grant = (fx: ProjectFixture, customerId: string, entitlementKey = 'pro_access', duration = 'P30D') =>
    t.http.post(`/v1/server/customers/${customerId}/grant`).set(keyHeaders(fx, fx.keys.skTest)).send({ entitlementKey, duration, reason: REASON });

  describe('operator endpoints', () => {
    it('create shows the secret once; list, read, patch, delete; every write audited', async () => {
      const fx = await createProjectWithApp(t);
      const created = await endpoint(fx, path(), { eventTypes: ['customer.entitlements.updated'], description: 'Back-end' });
      expect(created).toEqual(
        expect.objectContaining({
          object: 'webhook_endpoint',
          id: expect.stringMatching(/^we_/),
          projectId: fx.projectId,
          env: 'sandbox',
          eventTypes: ['customer.entitlements.updated'],
          status: 'enabled',
          secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
        }),
      );
      expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
      const list = await t.http.get(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`).set(operatorAuth());
      expect(list.status).toBe(200);
      expect(list.body.data).toHaveLength(1);
      expect(list.body.data[0].secret).toBeUndefined();
      const read = await t.http.get(`/admin/v1/webhook-endpoints/${created.id}`).set(operatorAuth());
      expect(read.body.secret).toBeUndefined();
      const patched = await t.http
        .patch(`/admin/v1/webhook-endpoints/${created.id}`)
        .set(operatorAuth())
        .send({ status: 'disabled', eventTypes: ['*'] });
      expect(patched.status).toBe(200);
      expect(patched.body).toEqual(expect.objectContaining({ status: 'disabled', eventTypes: ['*'] }));
      const deleted = await t.http.delete(`/admin/v1/webhook-endpoints/${created.id}`).set(operatorAuth());
      expect(deleted.body).toEqual({ object: 'webhook_endpoint', id: created.id, deleted: true });
      expectErr(await t.http.get(`/admin/v1/webhook-endpoints/${created.id}`).set(operatorAuth()), 404, 'resource_missing');
      const audit = await t.dataSource.query(`SELECT event_type, request_id FROM audit_entries WHERE project_id = $1 AND rail = 'webhooks' ORDER BY id`, [
        fx.projectId,
      ]);
      expect(audit.map((a: { event_type: string }) => a.event_type)).toEqual([
        'webhook_endpoint.created',
        'webhook_endpoint.updated',
        'webhook_endpoint.deleted',
      ]);
      expect(audit.every((a: { request_id: string | null }) => a.request_id)).toBe(true);
    });

    it('validation names the field; at most 16 endpoints per project and environment; unknown ids 404', async () => {
      const fx = await createProjectWithApp(t);
      const url = `/admin/v1/projects/${fx.projectId}/webhook-endpoints`;
      expectErr(await t.http.post(url).set(operatorAuth()).send({ env: 'sandbox' }), 400, 'missing_required_param', /url/);
      expectErr(
        await t.http
          .post(url)
          .set(operatorAuth())
          .send({ url: receiver.url('/x'), env: 'staging' }),
        400,
        'invalid_param_value',
        /env/,
      );
      expectErr(await t.http.post(url).set(operatorAuth()).send({ url: 'ftp://example.com/x', env: 'sandbox' }), 400, 'invalid_param_value', /url/);
      expectErr(
        await t.http
          .post(url)
          .set(operatorAuth())
          .send({ url: receiver.url('/x'), env: 'sandbox', eventTypes: ['customer.unknown'] }),
        400,
        'invalid_param_value',
        /eventTypes/,
      );
      for (let i = 0; i < 16; i++) await endpoint(fx, `/full/${i}`);
      expectErr(
        await t.http
          .post(url)
          .set(operatorAuth())
          .send({ url: receiver.url('/x'), env: 'sandbox' }),
        400,
        'invalid_param_value',
        /16/,
      );
      // the other environment has its own 16
      expect(
        (
          await t.http
            .post(url)
            .set(operatorAuth())
            .send({ url: receiver.url('/x'), env: 'production' })
        ).status,
      ).toBe(201);
      expectErr(
        await t.http
          .post('/admin/v1/projects/proj_missing/webhook-endpoints')
          .set(operatorAuth())
          .send({ url: receiver.url('/x'), env: 'sandbox' }),
        404,
        'resource_missing',
      );
      expectErr(await t.http.post('/admin/v1/webhook-deliveries/wd_missing/retry').set(operatorAuth()), 404, 'resource_missing');
    });
  });

  it('a grant is delivered, signed for the public client check and for Standard Webhooks', async () => {
    const fx = await createProjectWithApp(t);
    const p = path();
    const hook = await endpoint(fx, p);
    const { customerId, userId } = await newCustomer(fx);
    expect((await grant(fx, customerId)).status).toBe(200);
    await drain();
    const got = receiver.of(p);
    expect(got.map((r) => r.json.type).sort()).toEqual(['customer.entitlements.updated', 'entitlement.granted_manually']);
    for (const r of got) {
      expect(r.headers['user-agent']).toBe('entitlements-webhooks/1');
      expect(r.headers['service-signature']).toBe(r.headers['crossdeck-signature']);
      expect(verifyServiceSignature(r.body, String(r.headers['service-signature']), hook.secret)).toBe(true);
      expect(verifyServiceSignature(r.body, String(r.headers['service-signature']), 'whsec_other')).toBe(false);
      expect(new Webhook(hook.secret).verify(r.body, r.headers as Record<string, string>)).toEqual(r.json);
      expect(r.headers['webhook-id']).toBe(r.json.id);
      expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    }
    const updated = got.find((r) => r.json.type === 'customer.entitlements.updated')!.json;
    expect(updated).toEqual(
      expect.objectContaining({ object: 'event', apiVersion: 'v1', projectId: fx.projectId, env: 'sandbox', id: expect.stringMatching(/^evt_/) }),
    );
    expect(updated.data).toEqual(
      expect.objectContaining({
        serviceCustomerId: customerId,
        developerUserId: userId,
        sequence: 1,
        changes: [expect.objectContaining({ key: 'pro_access', change: 'activated', cause: 'grant', rail: 'manual' })],
      }),
    );
    expect(updated.data.entitlements.map((e: { key: string }) => e.key)).toEqual(['pro_access']);
    // a second change: the sequence grows
    await grant(fx, customerId, 'pro_access', 'P90D');
    await drain();
    const second = receiver.of(p).filter((r) => r.json.type === 'customer.entitlements.updated');
    expect(second.map((r) => r.json.data.sequence)).toEqual([1, 2]);
    expect(second[1].json.data.changes[0]).toEqual(expect.objectContaining({ change: 'extended', cause: 'grant' }));
    const deliveries = await t.http.get(`/admin/v1/webhook-endpoints/${hook.id}/deliveries?status=succeeded&limit=2`).set(operatorAuth());
    expect(deliveries.body).toEqual(expect.objectContaining({ object: 'list', hasMore: true }));
    expect(deliveries.body.data[0]).toEqual(expect.objectContaining({ object: 'webhook_delivery', status: 'succeeded', attempts: 1, lastStatusCode: 200 }));
  });

  it('after a rotation through the API both secrets sign, the previous one last', async () => {
    const fx = await createProjectWithApp(t);
    const p = path();
    const hook = await endpoint(fx, p, { eventTypes: ['customer.entitlements.updated'] });
    // The service clock runs during the call: the expiry is 24 h after the moment of rotation.
    const rotatedFrom = t.clock.nowSeconds();
    const rotated = await t.http.post(`/admin/v1/webhook-endpoints/${hook.id}/rotate-secret`).set(operatorAuth());
    const rotatedBy = t.clock.nowSeconds();
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(hook.secret);
    expect(rotated.body.previousSecretExpiresAt).toBeGreaterThanOrEqual(rotatedFrom + 86_400);
    expect(rotated.body.previousSecretExpiresAt).toBeLessThanOrEqual(rotatedBy + 86_400);
    const { customerId } = await newCustomer(fx);
    await grant(fx, customerId);
    await drain();
    const [r] = receiver.of(p);
    const header = String(r.headers['service-signature']);
    expect(header.match(/v1=/g)).toHaveLength(2);
    expect(verifyServiceSignature(r.body, header, hook.secret)).toBe(true); // the old secret's is last
    expect(verifyServiceSignature(r.body, header.replace(/,v1=[0-9a-f]+$/, ''), rotated.body.secret)).toBe(true);
    expect(new Webhook(rotated.body.secret).verify(r.body, r.headers as Record<string, string>)).toEqual(r.json);
    expect(new Webhook(hook.secret).verify(r.body, r.headers as Record<string, string>)).toEqual(r.json);
    // The end of the 24 h window: the dispatch-rules medium spec.
  });

  it('a failed delivery shows its next attempt; a dead one retried by the operator is delivered again', async () => {
    // The retry schedule and the attempts up to a dead delivery: the dispatch-rules medium spec.
    const fx = await createProjectWithApp(t);
    const p = path();
    receiver.on(p, 500);
    const hook = await endpoint(fx, p, { eventTypes: ['entitlement.granted_manually'] });
    const { customerId } = await newCustomer(fx);
    await grant(fx, customerId);
    await drain();
    const deliveries = async () => (await t.http.get(`/admin/v1/webhook-endpoints/${hook.id}/deliveries`).set(operatorAuth())).body.data[0];
    let d = await deliveries();
    expect(d).toEqual(expect.objectContaining({ status: 'failed', attempts: 1, lastStatusCode: 500, lastError: 'HTTP 500' }));
    expect(d.nextAttemptAt - t.clock.nowSeconds()).toBeGreaterThanOrEqual(9);
    expect(d.nextAttemptAt - t.clock.nowSeconds()).toBeLessThanOrEqual(10);
    await drain();
    expect(receiver.of(p)).toHaveLength(1); // not due yet
    await deliveryDeadAfterAllAttempts(t.dataSource, d.id);
    d = await deliveries();
    expect(d).toEqual(expect.objectContaining({ status: 'dead', attempts: 9, nextAttemptAt: null }));
    receiver.on(p, 204);
    const retried = await t.http.post(`/admin/v1/webhook-deliveries/${d.id}/retry`).set(operatorAuth());
    expect(retried.status).toBe(202);
    expect(retried.body.status).toBe('pending');
    expectErr(await t.http.post(`/admin/v1/webhook-deliveries/${d.id}/retry`).set(operatorAuth()), 400, 'invalid_param_value');
    await drain();
    expect(await deliveries()).toEqual(expect.objectContaining({ status: 'succeeded', attempts: 10, lastStatusCode: 204 }));
    const ids = new Set(receiver.of(p).map((r) => r.json.id));
    expect(ids.size).toBe(1); // the same event id in every attempt
  });

  it('a rolled-back change yields no event', async () => {
    const fx = await createProjectWithApp(t);
    const p = path();
    await endpoint(fx, p);
    const { customerId } = await newCustomer(fx);
    const scope = testScope(fx.projectId, 'sandbox');
    await expect(
      t.app.get(Sql).transaction(async () => {
        await t.app.get(EntitlementWriter).apply(scope, {
          kind: 'rail_state',
          rail: 'card_payments',
          customerId,
          rows: [
            {
              customerId,
              entitlementKey: 'pro_access',
              productId: 'prod_pro',
              subscriptionId: 'sub_1',
              state: 'active',
              validUntil: t.clock.nowSeconds() + 3600,
              auditEventId: 'rail_evt_rolledbackchange000001',
            },
          ],
          causes: { activated: 'purchase', extended: 'purchase', deactivated: 'purchase' },
          events: [],
          audit: {
            eventId: 'rail_evt_rolledbackchange000001',
            rail: 'card_payments',
            eventType: 'customer.subscription.created',
            customerId,
            decision: 'applied',
            reason: 'a change rolled back',
            actor: 'rail:card_payments',
            requestId: null,
          },
        });
        const [{ n }] = await t.app.get(Sql).rows<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_events WHERE customer_id = $1`, [customerId]);
        expect(n).toBe(1);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const [{ n }] = await t.dataSource.query(`SELECT count(*)::int AS n FROM webhook_events WHERE customer_id = $1`, [customerId]);
    expect(n).toBe(0);
    await drain();
    expect(receiver.of(p)).toHaveLength(0);
  });

  it('time passing: an entitlement whose validUntil passed is reported once, cause expiration', async () => {
    const fx = await createProjectWithApp(t);
    const p = path();
    await endpoint(fx, p, { eventTypes: ['customer.entitlements.updated'] });
    const { customerId } = await newCustomer(fx);
    await grant(fx, customerId, 'pro_access', 'P30D');
    await drain();
    await advance(31 * 86_400);
    // What the worker's poll does (it does not poll under NODE_ENV=test): keep the recurring job queued, run what is due.
    const worker = t.app.get(JobWorker);
    const scan = async () => {
      await t.app.get(JobQueue).enqueue('webhooks.report_expirations', {}, { dedupeKey: 'recurring' });
      await worker.runDue({ types: ['webhooks.report_expirations'] });
    };
    await scan();
    await scan();
    await drain();
    const updates = receiver.of(p).map((r) => r.json.data);
    expect(updates).toHaveLength(2);
    expect(updates[1]).toEqual(
      expect.objectContaining({
        sequence: 2,
        entitlements: [],
        changes: [expect.objectContaining({ key: 'pro_access', change: 'deactivated', cause: 'expiration' })],
      }),
    );
  });

  it('erasure purges the stored payloads and sends customer.erased', async () => {
    const fx = await createProjectWithApp(t);
    const p = path();
    receiver.on(p, 500);
    await endpoint(fx, p);
    const { customerId } = await newCustomer(fx);
    await grant(fx, customerId);
    await drain();
    const scope = testScope(fx.projectId, 'sandbox');
    expect(await storedBodies(scope, customerId)).toBe(2);
    expect((await t.http.post('/v1/identity/forget').set(keyHeaders(fx, fx.keys.skTest)).send({ customerId })).status).toBe(200);
    await advance(86_400);
    await t.app.get(ErasureWorker).runOnce({ projectId: fx.projectId });
    expect(await storedBodies(scope, customerId)).toBe(0);
    receiver.on(p, 200);
    await drain();
    const erased = receiver.of(p).filter((r) => r.json.type === 'customer.erased');
    expect(erased.map((r) => r.json.data)).toEqual([{ serviceCustomerId: customerId }]);
  });

  it('a hung endpoint delays neither another endpoint nor the API', async () => {
    const fx = await createProjectWithApp(t);
    const hung = path();
    const fine = path();
    receiver.on(hung, 'hang');
    await endpoint(fx, hung);
    await endpoint(fx, fine);
    const dispatcher = t.app.get(WebhookDispatcher);
    const { customerId } = await newCustomer(fx);
    for (let i = 0; i < 12; i++) expect((await grant(fx, customerId, `key_${i}`)).status).toBe(200);
    const started = Date.now();
    while (receiver.of(fine).length < 24 && Date.now() - started < 5_000) {
      await dispatcher.poll();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(receiver.of(fine)).toHaveLength(24);
    expect(Date.now() - started).toBeLessThan(3_000);
    const granted = Date.now();
    expect((await grant(fx, customerId, 'key_last')).status).toBe(200);
    expect(Date.now() - granted).toBeLessThan(1_000);
  });

  it('a hung endpoint holds at most its 8 slots, never another endpoint, the claim or a database connection', async () => {
    const fx = await createProjectWithApp(t);
    const hung = path();
    const fine = path();
    receiver.on(hung, 'hang');
    const held = await endpoint(fx, hung);
    await endpoint(fx, fine);
    const dispatcher = t.app.get(WebhookDispatcher);
    const { customerId } = await newCustomer(fx);
    for (let i = 0; i < 10; i++) expect((await grant(fx, customerId, `key_${i}`)).status).toBe(200);
    const started = Date.now();
    let most = 0;
    while (receiver.of(fine).length < 20 && Date.now() - started < 5_000) {
      await dispatcher.poll();
      await new Promise((r) => setTimeout(r, 20));
      most = Math.max(most, receiver.hanging(hung));
    }
    expect(receiver.of(fine)).toHaveLength(20);
    expect(Date.now() - started).toBeLessThan(3_000);
    // Its backlog of 20 waits: 8 attempts hang, the rest are neither leased nor started.
    await receiver.waitFor(() => receiver.hanging(hung) === 8, 2_000);
    for (let i = 0; i < 5; i++) expect(await dispatcher.poll()).toBe(0);
    expect(Math.max(most, receiver.hanging(hung))).toBe(8);
    const [leases] = await t.dataSource.query(
      `SELECT count(*) FILTER (WHERE leased_by IS NOT NULL)::int AS leased, count(*)::int AS due FROM webhook_deliveries WHERE endpoint_id = $1 AND status = 'pending'`,
      [held.id],
    );
    expect(leases).toEqual({ leased: 8, due: 20 });
    // No connection of the pool waits on the hung sends (none in a transaction, none running a statement).
    const busy = await t.dataSource.query(
      `SELECT state FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')`,
    );
    expect(busy).toEqual([]);
    // A burst of API requests meanwhile is answered at once.
    const burst = Date.now();
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => grant(fx, customerId, `burst_${i}`)));
    expect(answers.map((r) => r.status)).toEqual(Array(16).fill(200));
    expect(Date.now() - burst).toBeLessThan(3_000);
  });

  it('hung endpoints filling the replica-wide cap stop holding it after a second: another endpoint is still delivered', async () => {
    const hungPaths: string[] = [];
    // 3 projects × 11 hung endpoints × 8 slots: 264 attempts hang, more than the 256 young ones a poll may start.
    for (let p = 0; p < 3; p++) {
      const fx = await createProjectWithApp(t);
      for (let i = 0; i < 11; i++) {
        const hung = path();
        receiver.on(hung, 'hang');
        hungPaths.push(hung);
        await endpoint(fx, hung);
      }
      const { customerId } = await newCustomer(fx);
      for (let i = 0; i < 4; i++) expect((await grant(fx, customerId, `key_${i}`)).status).toBe(200);
    }
    const fx = await createProjectWithApp(t);
    const fine = path();
    await endpoint(fx, fine);
    const { customerId } = await newCustomer(fx);
    const dispatcher = t.app.get(WebhookDispatcher);
    // The hung endpoints' attempts start first and fill the cap.
    const filling = Date.now();
    while (hungPaths.reduce((n, p) => n + receiver.hanging(p), 0) < 256 && Date.now() - filling < 5_000) {
      await dispatcher.poll();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(hungPaths.reduce((n, p) => n + receiver.hanging(p), 0)).toBeGreaterThanOrEqual(256);
    for (let i = 0; i < 4; i++) expect((await grant(fx, customerId, `key_${i}`)).status).toBe(200);
    const started = Date.now();
    while (receiver.of(fine).length < 8 && Date.now() - started < 8_000) {
      await dispatcher.poll();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(receiver.of(fine)).toHaveLength(8);
    // Well before the hung attempts' 10 s timeout.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(Math.max(...hungPaths.map((p) => receiver.hanging(p)))).toBeLessThanOrEqual(8);
  }, 60_000);
});
