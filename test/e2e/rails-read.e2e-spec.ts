import { RailReader } from '#rails';
import { TenantScopes } from '#platform';
import { operatorAuth } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { railReadHarness, uid } from '../support/harness/rails-read.js';
import { createStoreChain } from '../support/store-signing.js';

const DAY = 86_400;

describe('rails: refresh reads the rails (POST /v1/server/customers/{customerId}/refresh)', () => {
  const h = railReadHarness();
  const { now, card, google, cardCustomer, iosCustomer, androidCustomer, appleReports, googleReports, refresh, audit, auditCount } = h;
  const events = async (customerId: string) =>
    ((await h.t.dataSource.query(`SELECT type FROM webhook_events WHERE customer_id = $1 ORDER BY created_at_ms, id`, [customerId])) as { type: string }[]).map(
      (row) => row.type,
    );

  it('card: a renewal the notification missed is kept (entitlement extended, one reconciliation entry, outbound event)', async () => {
    const { customerId, cardCustomer: cus, sub } = await cardCustomer({ periodEnd: now() + 60 });
    const renewedEnd = now() + 30 * DAY;
    card.subscription(sub.id, cus, { productId: 'prod_pro', periodEnd: renewedEnd, livemode: false });
    const res = await refresh(customerId);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'list',
      data: [expect.objectContaining({ key: 'pro', isActive: true, validUntil: renewedEnd })],
      serviceCustomerId: customerId,
      crossdeckCustomerId: customerId,
      env: 'sandbox',
      refreshed: [{ rail: 'card_payments', id: cus, decision: 'applied', auditEventId: expect.stringMatching(/^rail_evt_/) }],
    });
    expect(card.calls).toEqual(expect.arrayContaining([`GET /v1/customers/${cus}`, `GET /v1/subscriptions?customer=${cus}&status=all&limit=100`]));
    expect(card.authorizations.every((header) => header === `Bearer ${card.apiKey}`)).toBe(true);
    const entry = (await audit(res.body.refreshed[0].auditEventId)).body.data;
    expect(entry).toEqual(
      expect.objectContaining({
        rail: 'card_payments',
        eventType: 'reconciliation',
        decision: 'applied',
        customerId,
        reconciledWithProvider: true,
        signatureVerified: false,
      }),
    );
    expect(await events(customerId)).toContain('subscription.renewed');

    // Read again: the rail matches the stored state; nothing is written.
    const before = await auditCount();
    const again = await refresh(customerId);
    expect(again.body.refreshed).toEqual([{ rail: 'card_payments', id: cus, decision: 'no_change', auditEventId: null }]);
    expect(await auditCount()).toBe(before);
  });

  it('card: a cancellation the notification missed ends access (canceled subscriptions are listed with status=all)', async () => {
    const { customerId, cardCustomer: cus, sub } = await cardCustomer();
    card.subscription(sub.id, cus, { productId: 'prod_pro', periodEnd: now() + 30 * DAY, status: 'canceled', livemode: false });
    const res = await refresh(customerId);
    expect(res.body.refreshed).toEqual([expect.objectContaining({ rail: 'card_payments', decision: 'applied' })]);
    expect(res.body.data).toEqual([]);
    expect(await events(customerId)).toContain('subscription.expired');
  });

  it('iOS: a renewal the notification missed is kept; production is asked first, then sandbox', async () => {
    const { customerId, tx } = await iosCustomer({ expiresMs: h.t.clock.nowMs() + 60_000 });
    const renewedMs = h.t.clock.nowMs() + 30 * DAY * 1000;
    appleReports(tx, 1, { transactionId: uid('2000'), expiresDate: renewedMs });
    const callsBefore = h.apple.calls.length;
    const res = await refresh(customerId);
    expect(res.status).toBe(200);
    expect(res.body.refreshed).toEqual([{ rail: 'ios_store', id: tx.originalTransactionId, decision: 'applied', auditEventId: expect.any(String) }]);
    expect(res.body.data).toEqual([expect.objectContaining({ key: 'pro', isActive: true, validUntil: Math.floor(renewedMs / 1000) })]);
    expect(h.apple.calls.slice(callsBefore)).toEqual([
      `production /inApps/v1/subscriptions/${tx.originalTransactionId}`,
      `sandbox /inApps/v1/subscriptions/${tx.originalTransactionId}`,
    ]);
    expect(h.apple.refusedTokens).toEqual([]);
    const entry = (await audit(res.body.refreshed[0].auditEventId)).body.data;
    expect(entry).toEqual(expect.objectContaining({ rail: 'ios_store', eventType: 'reconciliation', reconciledWithProvider: true, signatureVerified: true }));
  });

  it('iOS: a refund the notification missed is caught (revoked at once)', async () => {
    const { customerId, tx } = await iosCustomer({ expiresMs: h.t.clock.nowMs() + 30 * DAY * 1000 });
    appleReports(tx, 5, { revocationDate: h.t.clock.nowMs() - 1000, revocationReason: 0 });
    const res = await refresh(customerId);
    expect(res.body.refreshed).toEqual([expect.objectContaining({ rail: 'ios_store', decision: 'applied' })]);
    expect(res.body.data).toEqual([]);
    expect(await events(customerId)).toContain('subscription.refunded');
  });

  it('iOS: an answer whose signature does not verify is unavailable; the stored state stays', async () => {
    const { customerId, tx } = await iosCustomer({ expiresMs: h.t.clock.nowMs() + DAY * 1000 });
    h.apple.subscriptions.sandbox.set(tx.originalTransactionId, { status: 5, transaction: { ...tx, revocationDate: h.t.clock.nowMs() } });
    // Signed by a chain the project does not trust.
    const trusted = h.apple.chain;
    h.apple.chain = createStoreChain();
    try {
      const res = await refresh(customerId);
      expect(res.body.refreshed).toEqual([expect.objectContaining({ rail: 'ios_store', decision: 'unavailable', auditEventId: null })]);
      expect(res.body.data).toEqual([expect.objectContaining({ key: 'pro', isActive: true })]);
    } finally {
      h.apple.chain = trusted;
    }
  });

  it('Android: the purchase is read with subscriptionsv2.get and a missed renewal kept', async () => {
    const { customerId, token } = await androidCustomer({ expiry: now() + 60 });
    const renewed = now() + 30 * DAY;
    googleReports(token, { expiry: renewed });
    const res = await refresh(customerId);
    expect(res.body.refreshed).toEqual([{ rail: 'android_store', id: token, decision: 'applied', auditEventId: expect.any(String) }]);
    expect(res.body.data).toEqual([expect.objectContaining({ key: 'pro', isActive: true, validUntil: renewed })]);
    expect(google.calls.at(-1)?.path).toContain(`/purchases/subscriptionsv2/tokens/${token}`);
  });

  it('Android: an expiry the notification missed ends access', async () => {
    const { customerId, token } = await androidCustomer();
    googleReports(token, { state: 'SUBSCRIPTION_STATE_EXPIRED', expiry: now() - 60 });
    const res = await refresh(customerId);
    expect(res.body.refreshed).toEqual([expect.objectContaining({ decision: 'applied' })]);
    expect(res.body.data).toEqual([]);
  });

  it('an unreadable rail (5xx) is "unavailable" (still 200) and the stored state governs', async () => {
    const { customerId, cardCustomer: cus } = await cardCustomer();
    card.fault = { status: 500 };
    try {
      const res = await refresh(customerId);
      expect(res.status).toBe(200);
      expect(res.body.refreshed).toEqual([{ rail: 'card_payments', id: cus, decision: 'unavailable', auditEventId: null }]);
      expect(res.body.data).toEqual([expect.objectContaining({ key: 'pro', isActive: true })]);
    } finally {
      card.fault = null;
      // The 5xx paused this project's card reads (RAIL_READ_BACK_OFF_MS): let it pass on the service clock.
      h.t.clock.advance(31);
    }
  });

  it('no credentials configured for the rail: unavailable', async () => {
    const { customerId } = await androidCustomer();
    const { fx } = h;
    h.writeSecrets({ [fx.projectId]: { card_payments: { webhookSecrets: ['whsec_x'] } } });
    try {
      const res = await refresh(customerId);
      expect(res.body.refreshed).toEqual([expect.objectContaining({ rail: 'android_store', decision: 'unavailable' })]);
      expect(res.body.data).toEqual([expect.objectContaining({ key: 'pro', isActive: true })]);
    } finally {
      h.writeSecrets();
    }
  });

  it('a customer without rail ids: an empty refreshed list', async () => {
    const identify = await h.t.http
      .post('/v1/identify')
      .set({ Authorization: `Bearer ${h.fx.keys.skTest}`, ...h.fx.lockHeaders })
      .send({ userId: uid('u'), anonymousId: uid('anon') });
    expect(identify.status).toBe(200);
    const res = await refresh(identify.body.serviceCustomerId);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ object: 'list', data: [], refreshed: [] }));
  });

  it('unknown customer: 400 invalid_customer; a publishable key is refused (401)', async () => {
    expectError(await refresh('cdcust_nope'), 400, 'invalid_customer');
    expectError(await refresh('nope'), 400, 'invalid_customer');
    expect((await refresh('cdcust_nope', h.fx.keys.pubTest)).status).toBe(401);
  });

  it('a read never creates a customer: an unlinked rail id is reported, not applied (migration gate)', async () => {
    const cus = uid('cus');
    card.subscription(uid('sub'), cus, { productId: 'prod_pro', periodEnd: now() + DAY, livemode: false });
    const scope = TenantScopes.ofVerifiedRailPayload(h.fx.projectId, 'sandbox');
    const reader = h.t.app.get(RailReader);
    expect(await reader.readRailId(scope, 'card_payments', cus, 'migration')).toEqual({
      rail: 'card_payments',
      id: cus,
      found: 'live',
      decision: 'no_change',
      auditEventId: null,
    });
    expect(await reader.readRailId(scope, 'card_payments', uid('cus'), 'migration')).toEqual(
      expect.objectContaining({ found: 'none', decision: 'no_subscription' }),
    );
    const [{ n }] = await h.t.dataSource.query(`SELECT count(*)::int AS n FROM customer_aliases WHERE value = $1`, [cus]);
    expect(n).toBe(0);
  });

  describe('operator: POST /admin/v1/projects/{projectId}/customers/{customerId}/refresh?env=', () => {
    it('reads the rails in the named environment', async () => {
      const { customerId, cardCustomer: cus } = await cardCustomer();
      const res = await h.t.http.post(`/admin/v1/projects/${h.fx.projectId}/customers/${customerId}/refresh?env=sandbox`).set(operatorAuth()).send();
      expect(res.status).toBe(200);
      expect(res.body).toEqual(
        expect.objectContaining({
          object: 'list',
          env: 'sandbox',
          serviceCustomerId: customerId,
          refreshed: [expect.objectContaining({ rail: 'card_payments', id: cus })],
        }),
      );
    });

    it('400 without env, 404 for an unknown project or customer', async () => {
      const { customerId } = await cardCustomer();
      const base = `/admin/v1/projects/${h.fx.projectId}/customers/${customerId}/refresh`;
      expectError(await h.t.http.post(base).set(operatorAuth()).send(), 400, 'invalid_param_value');
      expectError(await h.t.http.post(`${base}?env=staging`).set(operatorAuth()).send(), 400, 'invalid_param_value');
      expectError(await h.t.http.post(`${base}?env=production`).set(operatorAuth()).send(), 404, 'resource_missing');
      expectError(
        await h.t.http.post(`/admin/v1/projects/proj_nope/customers/${customerId}/refresh?env=sandbox`).set(operatorAuth()).send(),
        404,
        'resource_missing',
      );
      expect((await h.t.http.post(`${base}?env=sandbox`).send()).status).toBe(401);
    });
  });
});
