import { RailReader } from '#rails';
import { TenantScopes } from '#platform';
import { WebhookDispatcher } from '#webhooks';
import { operatorAuth } from '../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { keptBeforeObjectsAndPrice } from '../support/factories/subscriptions.js';
import { expectError } from '../support/expect-error.js';
import { BUNDLE, PRODUCTS, railReadHarness, uid } from '../support/harness/rails-read.js';
import { type TransactionFields, createStoreChain, notificationPayload, signStoreJws } from '../support/store-signing.js';

const DAY = 86_400;

describe('rails: refresh reads the rails (POST /v1/server/customers/{customerId}/refresh)', () => {
  const h = railReadHarness({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123456789' }, { ownDatabase: true });
  const { now, card, google, cardCustomer, iosCustomer, androidCustomer, appleReports, googleReports, refresh, audit, auditCount } = h;
  // Outbound events are recorded only where an endpoint is enabled: a receiver listens to the sandbox.
  let receiver: WebhookReceiver;
  const hookPath = '/hooks/refresh';
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    const res = await h.t.http
      .post(`/admin/v1/projects/${h.fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(hookPath), env: 'sandbox' });
    expect(res.status).toBe(201);
  });
  afterAll(async () => receiver?.close());
  /** The events delivered about the customer so far, in the order they arrived (the outbox drained first). */
  const delivered = async (customerId: string, type?: string): Promise<{ type: string; data: any }[]> => {
    await h.t.app.get(WebhookDispatcher).drain();
    return receiver
      .of(hookPath)
      .map((r) => r.json as { type: string; data: any })
      .filter((e) => e.data.serviceCustomerId === customerId && (!type || e.type === type));
  };
  const events = async (customerId: string) => (await delivered(customerId)).map((e) => e.type);

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

  describe('the subscription object', () => {
    const subscriptionsOf = async (customerId: string) =>
      (await h.t.http.get(`/v1/server/customers/${customerId}/subscriptions`).set({ Authorization: `Bearer ${h.fx.keys.skTest}`, ...h.fx.lockHeaders })).body
        .data as any[];
    const storedObject = async (rail: string, subscriptionId: string) =>
      (
        await h.t.dataSource.query(
          `SELECT subscription FROM rail_subscriptions WHERE project_id = $1 AND env = 'sandbox' AND rail = $2 AND subscription_id = $3`,
          [h.fx.projectId, rail, subscriptionId],
        )
      )[0]?.subscription ?? null;
    const ledgerPrice = async (rail: string, subscriptionId: string) =>
      (
        await h.t.dataSource.query(
          `SELECT currency, monthly_minor::float8 AS "monthlyMinor" FROM revenue_subscriptions WHERE project_id = $1 AND env = 'sandbox' AND rail = $2 AND subscription_id = $3`,
          [h.fx.projectId, rail, subscriptionId],
        )
      )[0] ?? null;
    /** A record as the service kept it before subscription objects and the revenue ledger's price existed. */
    const forgetObjectAndPrice = (rail: string, subscriptionId: string) =>
      keptBeforeObjectsAndPrice(h.t.dataSource, TenantScopes.operator(h.fx.projectId, 'sandbox'), rail, subscriptionId);

    it('iOS: a refresh of a record kept before objects fills its object and its price at once (same period); a second refresh writes nothing', async () => {
      const expiresMs = h.t.clock.nowMs() + 10 * DAY * 1000;
      const { customerId, tx } = await iosCustomer({ expiresMs });
      await forgetObjectAndPrice('ios_store', tx.originalTransactionId);
      expect(await ledgerPrice('ios_store', tx.originalTransactionId)).toEqual({ currency: null, monthlyMinor: null });
      expect((await subscriptionsOf(customerId))[0]).toEqual(expect.objectContaining({ price: null, currentPeriodStartsAt: null }));
      // The store reports the same period, now with its price (milliunits).
      appleReports(tx, 1, { price: 9990, currency: 'USD' });
      const res = await refresh(customerId);
      expect(res.body.refreshed).toEqual([{ rail: 'ios_store', id: tx.originalTransactionId, decision: 'applied', auditEventId: expect.any(String) }]);
      expect(await storedObject('ios_store', tx.originalTransactionId)).toEqual(
        expect.objectContaining({
          state: 'active',
          kind: 'auto_renewing',
          periodType: 'normal',
          willRenew: true,
          currentPeriodStartsAt: Math.floor(tx.purchaseDate! / 1000),
          currentPeriodEndsAt: Math.floor(expiresMs / 1000),
          price: { amountMicros: 9_990_000, currency: 'USD' },
          storeEnvironment: 'sandbox',
        }),
      );
      expect((await subscriptionsOf(customerId))[0]).toEqual(expect.objectContaining({ isActive: true, price: { amountMicros: 9_990_000, currency: 'USD' } }));
      expect(await ledgerPrice('ios_store', tx.originalTransactionId)).toEqual({ currency: 'USD', monthlyMinor: expect.any(Number) });
      expect((await ledgerPrice('ios_store', tx.originalTransactionId)).monthlyMinor).toBeGreaterThan(0);
      // Nothing happened to the subscription itself: no subscription.* event, no entitlement change.
      // (The purchase's two events share a millisecond: their order is not what is checked.)
      expect((await events(customerId)).sort()).toEqual(['customer.entitlements.updated', 'subscription.started']);

      const before = await auditCount();
      const again = await refresh(customerId);
      expect(again.body.refreshed).toEqual([{ rail: 'ios_store', id: tx.originalTransactionId, decision: 'no_change', auditEventId: null }]);
      expect(await auditCount()).toBe(before);
    });

    it('card: a refresh of a record kept before objects fills its object and the ledger price at once', async () => {
      const { customerId, cardCustomer: cus, sub } = await cardCustomer({ periodEnd: now() + 20 * DAY });
      await forgetObjectAndPrice('card_payments', sub.id);
      const [item] = (sub.items as { data: Record<string, unknown>[] }).data;
      item.price = { ...(item.price as object), unit_amount: 1500, currency: 'eur', recurring: { interval: 'month', interval_count: 1 } };
      item.quantity = 2;
      const res = await refresh(customerId);
      expect(res.body.refreshed).toEqual([{ rail: 'card_payments', id: cus, decision: 'applied', auditEventId: expect.any(String) }]);
      expect(await storedObject('card_payments', sub.id)).toEqual(
        expect.objectContaining({ id: sub.id, state: 'active', price: { amountMicros: 30_000_000, currency: 'EUR' }, storeEnvironment: 'sandbox' }),
      );
      expect(await ledgerPrice('card_payments', sub.id)).toEqual({ currency: 'EUR', monthlyMinor: 3000 });
      const again = await refresh(customerId);
      expect(again.body.refreshed).toEqual([{ rail: 'card_payments', id: cus, decision: 'no_change', auditEventId: null }]);
    });

    it('iOS: a billing problem the notification missed is read into the object (grace period; the event has no rail event id)', async () => {
      const { customerId, tx } = await iosCustomer({ expiresMs: h.t.clock.nowMs() + 60_000 });
      const graceEndMs = h.t.clock.nowMs() + 6 * DAY * 1000;
      h.apple.subscriptions.sandbox.set(tx.originalTransactionId, {
        status: 4,
        transaction: { ...tx, signedDate: h.t.clock.nowMs() },
        renewal: { autoRenewStatus: 1, gracePeriodExpiresDate: graceEndMs, isInBillingRetryPeriod: true },
      });
      const res = await refresh(customerId);
      expect(res.body.refreshed).toEqual([expect.objectContaining({ rail: 'ios_store', decision: 'applied' })]);
      const [object] = await subscriptionsOf(customerId);
      expect(object).toEqual(
        expect.objectContaining({
          state: 'in_grace_period',
          isActive: true,
          willRenew: true,
          billingIssueDetectedAt: expect.any(Number),
          gracePeriodEndsAt: Math.floor(graceEndMs / 1000),
          accessEndsAt: Math.floor(graceEndMs / 1000),
        }),
      );
      expect(res.body.data).toEqual([expect.objectContaining({ key: 'pro', isActive: true, validUntil: Math.floor(graceEndMs / 1000) })]);
      const [issue] = await delivered(customerId, 'subscription.billing_issue');
      expect(issue.data).toEqual(
        expect.objectContaining({
          railEventId: null,
          gracePeriodEndsAt: Math.floor(graceEndMs / 1000),
          subscription: expect.objectContaining({ state: 'in_grace_period' }),
          state: 'in_grace_period',
        }),
      );
    });
  });

  it('iOS: an extension without payment is cause extension on customer.entitlements.updated; an upgrade to other keys is product_change', async () => {
    const catalogue = [...PRODUCTS, { rail: 'ios_store', productId: 'pro.yearly', entitlementKeys: ['pro_plus'] }];
    expect((await h.t.http.put(`/admin/v1/projects/${h.fx.projectId}/products`).set(operatorAuth()).send({ products: catalogue })).status).toBe(200);
    const { customerId, tx } = await iosCustomer({ expiresMs: h.t.clock.nowMs() + DAY * 1000 });
    const notify = async (notificationType: string, subtype: string | undefined, fields: Partial<TransactionFields>) => {
      const payload = notificationPayload({
        notificationType,
        subtype,
        signedDate: h.t.clock.nowMs(),
        bundleId: BUNDLE,
        environment: 'Sandbox',
        signedTransactionInfo: signStoreJws(h.apple.chain, { ...tx, signedDate: h.t.clock.nowMs(), environment: 'Sandbox', ...fields }),
      });
      const res = await h.t.http.post(`/v1/webhooks/ios_store/${h.fx.projectId}`).send({ signedPayload: signStoreJws(h.apple.chain, payload) });
      expect(res.body.decision).toBe('applied');
    };
    const causes = async () =>
      (await delivered(customerId, 'customer.entitlements.updated')).map((e) =>
        (e.data.changes as { key: string; change: string; cause: string }[]).map((c) => `${c.key}:${c.change}/${c.cause}`),
      );
    await notify('RENEWAL_EXTENDED', undefined, { expiresDate: h.t.clock.nowMs() + 5 * DAY * 1000 });
    expect((await causes()).at(-1)).toEqual(['pro:extended/extension']);
    await notify('DID_CHANGE_RENEWAL_PREF', 'UPGRADE', {
      productId: 'pro.yearly',
      transactionId: uid('2000'),
      expiresDate: h.t.clock.nowMs() + 365 * DAY * 1000,
    });
    expect((await causes()).at(-1)?.sort()).toEqual(['pro:deactivated/product_change', 'pro_plus:activated/product_change']);
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
    // No customer holds the card customer id in either environment.
    for (const env of ['sandbox', 'production']) {
      const found = await h.t.http.get(`/admin/v1/projects/${h.fx.projectId}/customers?env=${env}&q=${encodeURIComponent(cus)}`).set(operatorAuth());
      expect(found.status).toBe(200);
      expect(found.body.data).toEqual([]);
    }
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
