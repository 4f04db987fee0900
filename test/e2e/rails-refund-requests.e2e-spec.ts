import { randomUUID } from 'node:crypto';
import { RefundRequestsJob } from '#rails';
import { WebhookDispatcher } from '#webhooks';
import { Sql, TenantScopes } from '#platform';
import { RailCustomerResolver } from '../../libs/rails/src/customers/rail-customer-resolver.service.js';
import { keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { expectError } from '../support/expect-error.js';
import { BUNDLE, railReadHarness } from '../support/harness/rails-read.js';
import { type TransactionFields, notificationPayload, signStoreJws } from '../support/store-signing.js';
import { operatorAuth } from '../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const TWELVE_HOURS = 12 * 3600;

describe('rails: Apple refund requests (CONSUMPTION_REQUEST, /v1/server/refund-requests)', () => {
  // A database of its own: the answering job sweeps every project's requests.
  const h = railReadHarness({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123456789' }, { ownDatabase: true });
  const answerDue = () => h.t.app.get(RefundRequestsJob).answerDue();
  let other: ProjectFixture;
  let receiver: WebhookReceiver;
  const hookPath = '/hooks/refunds';

  beforeAll(async () => {
    // Outbound events are recorded only where an endpoint is enabled: a receiver listens to the sandbox.
    receiver = await startWebhookReceiver();
    const res = await h.t.http
      .post(`/admin/v1/projects/${h.fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(hookPath), env: 'sandbox' });
    expect(res.status).toBe(201);
    other = await h.railProject();
  });
  afterAll(async () => receiver?.close());

  /** The events of one type delivered about the customer, once the outbox is drained. */
  const announced = async (customerId: string, type: string) => {
    await h.t.app.get(WebhookDispatcher).drain();
    return receiver
      .of(hookPath)
      .map((r) => r.json)
      .filter((e) => e.type === type && e.data.serviceCustomerId === customerId);
  };

  const putIos = (consumption?: unknown, projectId = h.fx.projectId) =>
    h.t.http
      .put(`/admin/v1/projects/${projectId}/rails/ios_store`)
      .set(operatorAuth())
      .send({ bundleId: BUNDLE, trustedRootCertificates: [h.apple.chain.rootPem], ...(consumption === undefined ? {} : { consumption }) });

  /** A signed CONSUMPTION_REQUEST of the customer's transaction (sandbox); the same uuid is a re-send. */
  function consumptionRequest(tx: TransactionFields, uuid = randomUUID()) {
    const payload = notificationPayload({
      notificationType: 'CONSUMPTION_REQUEST',
      notificationUUID: uuid,
      signedDate: h.t.clock.nowMs(),
      bundleId: BUNDLE,
      environment: 'Sandbox',
      signedTransactionInfo: signStoreJws(h.apple.chain, { ...tx, environment: 'Sandbox' }),
    });
    const signedPayload = signStoreJws(h.apple.chain, payload);
    const send = () => h.t.http.post(`/v1/webhooks/ios_store/${h.fx.projectId}`).send({ signedPayload });
    return { uuid, id: `cr_${uuid.replace(/-/g, '')}`, send };
  }

  const list = (query = '', fx = h.fx, key = fx.keys.skTest) => h.t.http.get(`/v1/server/refund-requests${query}`).set(keyHeaders(fx, key));
  const answer = (id: string, body: object, fx = h.fx, key = fx.keys.skTest) =>
    h.t.http.post(`/v1/server/refund-requests/${id}/answer`).set(keyHeaders(fx, key)).send(body);
  const requestOf = async (id: string) => ((await list()).body.data as { id: string }[]).find((r) => r.id === id) as Record<string, unknown> | undefined;
  const sentTo = (transactionId: string) => h.apple.consumption.filter((c) => c.transactionId === transactionId);

  /** A customer with a pending refund request. */
  async function pendingRequest() {
    const { customerId, tx } = await h.iosCustomer({ expiresMs: h.t.clock.nowMs() + 30 * 86_400_000 });
    const request = consumptionRequest(tx);
    const res = await request.send();
    expect(res.status).toBe(200);
    expect(res.body.decision).toBe('applied');
    return { customerId, tx, id: request.id, request };
  }

  it('the iOS rail settings take consumption (default off) and name a bad field', async () => {
    const rails = await h.t.http.get(`/admin/v1/projects/${h.fx.projectId}/rails`).set(operatorAuth());
    expect(rails.body.data.find((r: { rail: string }) => r.rail === 'ios_store').consumption).toEqual({
      mode: 'off',
      customerConsented: false,
      refundPreference: 'no_preference',
      sampleContentProvided: false,
    });
    const bad = [
      [{ mode: 'sometimes' }, /^consumption\.mode must be off, manual or auto/],
      [{ mode: 'auto', customerConsented: 'yes' }, /^consumption\.customerConsented must be a boolean/],
      [{ mode: 'auto', refundPreference: 'maybe' }, /^consumption\.refundPreference must be decline, grant_full, grant_prorated or no_preference/],
      [{ mode: 'auto', sampleContentProvided: 1 }, /^consumption\.sampleContentProvided must be a boolean/],
      ['auto', /^consumption/],
    ] as const;
    for (const [consumption, message] of bad) {
      const res = await putIos(consumption);
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toMatch(message);
    }
    const missing = await putIos({ customerConsented: true });
    expectError(missing, 400, 'missing_required_param');
    expect(missing.body.error.message).toBe('consumption.mode is required');
    const saved = await putIos({ mode: 'manual', refundPreference: 'decline' });
    expect(saved.status).toBe(200);
    expect(saved.body.consumption).toEqual({ mode: 'manual', customerConsented: false, refundPreference: 'decline', sampleContentProvided: false });
  });

  it('a CONSUMPTION_REQUEST is recorded once (a re-send is the same request) and announced', async () => {
    const { customerId, tx, id, request } = await pendingRequest();
    const again = await request.send();
    expect(again.status).toBe(200);
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    const mine = res.body.data.filter((r: { id: string }) => r.id === id);
    expect(mine).toHaveLength(1);
    const receivedAt = mine[0].receivedAt as number;
    expect(mine[0]).toEqual({
      object: 'refund_request',
      id,
      rail: 'ios_store',
      subscriptionId: tx.originalTransactionId,
      transactionId: tx.transactionId,
      serviceCustomerId: customerId,
      receivedAt: expect.any(Number),
      deadline: receivedAt + TWELVE_HOURS,
      state: 'pending',
      answer: null,
    });
    expect(Math.abs(receivedAt - Math.floor(h.t.clock.nowMs() / 1000))).toBeLessThan(60);
    const events = await announced(customerId, 'subscription.consumption_requested');
    expect(events).toHaveLength(1);
    expect(events[0].data).toEqual(
      expect.objectContaining({
        requestId: id,
        deadline: receivedAt + TWELVE_HOURS,
        serviceCustomerId: customerId,
        rail: 'ios_store',
        subscriptionId: tx.originalTransactionId,
        subscription: expect.objectContaining({ object: 'subscription' }),
        auditEventId: expect.any(String),
      }),
    );
    // The filter and the operator read.
    expect((await list('?state=sent')).body.data.some((r: { id: string }) => r.id === id)).toBe(false);
    expectError(await list('?state=done'), 400, 'invalid_param_value');
    const operator = await h.t.http.get(`/admin/v1/projects/${h.fx.projectId}/refund-requests?env=sandbox&state=pending`).set(operatorAuth());
    expect(operator.status).toBe(200);
    expect(operator.body.data.find((r: { id: string }) => r.id === id)).toEqual(mine[0]);
    const production = await h.t.http.get(`/admin/v1/projects/${h.fx.projectId}/refund-requests?env=production`).set(operatorAuth());
    expect(production.body.data).toEqual([]);
    expectError(await h.t.http.get(`/admin/v1/projects/proj_nope/refund-requests`).set(operatorAuth()), 404, 'resource_missing');
  });

  it('manual: the answer is validated, sent once with the right body, and recorded', async () => {
    expect((await putIos({ mode: 'manual' })).status).toBe(200);
    const { tx, id } = await pendingRequest();
    const noConsent = await answer(id, { customerConsented: false, refundPreference: 'grant_prorated', sampleContentProvided: true });
    expectError(noConsent, 400, 'invalid_param_value');
    expect(noConsent.body.error.message).toMatch(/^customerConsented must be true/);
    const badPreference = await answer(id, { customerConsented: true, refundPreference: 'refund', sampleContentProvided: true });
    expectError(badPreference, 400, 'invalid_param_value');
    expect(badPreference.body.error.message).toMatch(/^refundPreference must be/);
    expectError(await answer(id, { customerConsented: true, refundPreference: 'decline' }), 400, 'missing_required_param');
    expect(sentTo(tx.transactionId)).toEqual([]);

    const res = await answer(id, { customerConsented: true, refundPreference: 'grant_prorated', sampleContentProvided: true });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(
      expect.objectContaining({
        object: 'refund_request',
        id,
        state: 'sent',
        answer: {
          customerConsented: true,
          refundPreference: 'grant_prorated',
          sampleContentProvided: true,
          deliveryStatus: 'delivered',
          source: 'manual',
          sentAt: expect.any(Number),
        },
      }),
    );
    expect(sentTo(tx.transactionId)).toEqual([
      {
        env: 'sandbox',
        transactionId: tx.transactionId,
        body: { customerConsented: true, deliveryStatus: 'DELIVERED', sampleContentProvided: true, refundPreference: 'GRANT_PRORATED' },
      },
    ]);
    // Answered once: a second answer is refused, the job sends nothing more.
    const twice = await answer(id, { customerConsented: true, refundPreference: 'decline', sampleContentProvided: false });
    expectError(twice, 400, 'invalid_param_value');
    expect(twice.body.error.message).toMatch(/already sent/);
    await answerDue();
    expect(sentTo(tx.transactionId)).toHaveLength(1);
    expect((await requestOf(id))?.state).toBe('sent');
  });

  it('another project or environment cannot read or answer a request: 404', async () => {
    const { id } = await pendingRequest();
    const body = { customerConsented: true, refundPreference: 'decline', sampleContentProvided: false };
    expectError(await answer(id, body, other), 404, 'resource_missing');
    expectError(await answer(id, body, h.fx, h.fx.keys.skLive), 404, 'resource_missing');
    expectError(await answer('cr_nope', body), 404, 'resource_missing');
    expect((await list('', other)).body.data).toEqual([]);
    expect((await requestOf(id))?.state).toBe('pending');
  });

  it("a merge moves the customer's refund requests with its subscriptions", async () => {
    const { customerId, id } = await pendingRequest();
    const { customerId: into } = await h.iosCustomer();
    const scope = TenantScopes.operator(h.fx.projectId, 'sandbox');
    await h.t.app.get(Sql).transaction(() => h.t.app.get(RailCustomerResolver).reassignRecords(scope, customerId, into));
    expect((await requestOf(id))?.serviceCustomerId).toBe(into);
  });

  it('auto without the customer consent: nothing is sent', async () => {
    expect((await putIos({ mode: 'auto', customerConsented: false, refundPreference: 'grant_full', sampleContentProvided: true })).status).toBe(200);
    const { tx, id } = await pendingRequest();
    await answerDue();
    expect(sentTo(tx.transactionId)).toEqual([]);
    expect((await requestOf(id))?.state).toBe('pending');
  });

  it('auto: the job sends the consumption information once, within its run', async () => {
    expect((await putIos({ mode: 'auto', customerConsented: true, refundPreference: 'no_preference', sampleContentProvided: false })).status).toBe(200);
    const { tx, id } = await pendingRequest();
    const summary = await answerDue();
    expect(summary.outcomes.sent).toBeGreaterThanOrEqual(1);
    expect(sentTo(tx.transactionId)).toEqual([
      { env: 'sandbox', transactionId: tx.transactionId, body: { customerConsented: true, deliveryStatus: 'DELIVERED', sampleContentProvided: false } },
    ]);
    expect(await requestOf(id)).toEqual(
      expect.objectContaining({ state: 'sent', answer: expect.objectContaining({ source: 'auto', refundPreference: 'no_preference' }) }),
    );
    await answerDue();
    expect(sentTo(tx.transactionId)).toHaveLength(1);
  });

  it('auto: the store failing is tried again later; a success then marks it sent', async () => {
    const { tx, id } = await pendingRequest();
    h.apple.faults.sandbox = { status: 503 };
    try {
      expect((await answerDue()).outcomes).toEqual({ deferred: 1 });
    } finally {
      h.apple.faults.sandbox = null;
    }
    expect((await requestOf(id))?.state).toBe('pending');
    // Not again before the retry time …
    expect((await answerDue()).outcomes).toEqual({});
    // … and sent after it.
    h.t.clock.advance(31);
    expect((await answerDue()).outcomes).toEqual({ sent: 1 });
    expect(sentTo(tx.transactionId)).toHaveLength(1);
  });

  it('past the deadline a pending request is expired; nothing is sent and it can no longer be answered', async () => {
    expect((await putIos({ mode: 'manual' })).status).toBe(200);
    const { tx, id } = await pendingRequest();
    h.t.clock.advance(TWELVE_HOURS + 1);
    expect((await answerDue()).expired).toBeGreaterThanOrEqual(1);
    expect((await requestOf(id))?.state).toBe('expired');
    const late = await answer(id, { customerConsented: true, refundPreference: 'decline', sampleContentProvided: false });
    expectError(late, 400, 'invalid_param_value');
    expect(late.body.error.message).toMatch(/already expired/);
    expect(sentTo(tx.transactionId)).toEqual([]);
  });
});
