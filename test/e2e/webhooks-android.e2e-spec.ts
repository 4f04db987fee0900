import { randomBytes } from 'node:crypto';
import { RailSecrets } from '#rails';
import { AndroidPublisherStandIn } from '../support/android-publisher-standin.js';
import { createProject, createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { tablesContaining } from '../support/plaintext-scan.js';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';

const PACKAGE = 'com.example.rails';
const PUSH_TOKEN = `push_${randomBytes(24).toString('hex')}`;

let seq = 0;
const uid = (prefix: string) => `${prefix}${Date.now().toString(36)}${(++seq).toString(36)}${Math.random().toString(36).slice(2, 8)}`;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

describe('webhooks: Android store (POST /v1/webhooks/android_store/{projectId}?token=…)', () => {
  let t: TestApp;
  let fx: ProjectFixture;
  let file: RailSecretsFile;
  const google = new AndroidPublisherStandIn();
  const logs: Record<string, unknown>[] = [];
  const now = () => Math.floor(t.clock.nowMs() / 1000);

  beforeAll(async () => {
    await google.start();
    file = new RailSecretsFile();
    t = await createTestApp(
      { RAIL_SECRETS_FILE: file.path, ANDROID_PUBLISHER_BASE_URL: google.baseUrl, LOG_LEVEL: 'warn' },
      { onLogLine: (line) => logs.push(line) },
    );
    fx = await createProjectWithApp(t, { platform: 'android', packageName: PACKAGE });
    file.write({ projects: { [fx.projectId]: { android_store: { pushToken: PUSH_TOKEN, serviceAccount: google.serviceAccount() } } } });
    t.app.get(RailSecrets).reloadIfChanged();
    expect((await t.http.put(`/admin/v1/projects/${fx.projectId}/rails/android_store`).set(operatorAuth()).send({ packageName: PACKAGE })).status).toBe(200);
    const products = await t.http
      .put(`/admin/v1/projects/${fx.projectId}/products`)
      .set(operatorAuth())
      .send({
        products: [
          { rail: 'android_store', productId: 'pro_monthly', entitlementKeys: ['pro'] },
          { rail: 'android_store', productId: 'pro_yearly', entitlementKeys: ['pro', 'cloud_sync'] },
          { rail: 'android_store', productId: 'lifetime_unlock', entitlementKeys: ['lifetime'] },
        ],
      });
    expect(products.status).toBe(200);
  });
  afterAll(async () => {
    await t?.close();
    await google.stop();
    file?.remove();
  });

  type Notification = Record<string, unknown>;
  const subNotification = (
    type: number,
    purchaseToken: string,
    o: { subscriptionId?: string; eventTimeMillis?: number; packageName?: string } = {},
  ): Notification => ({
    version: '1.0',
    packageName: o.packageName ?? PACKAGE,
    eventTimeMillis: String(o.eventTimeMillis ?? t.clock.nowMs()),
    subscriptionNotification: { version: '1.0', notificationType: type, purchaseToken, subscriptionId: o.subscriptionId ?? 'pro_monthly' },
  });
  function push(notification: Notification | string, o: { messageId?: string; token?: string | null; projectId?: string } = {}) {
    const data = typeof notification === 'string' ? notification : Buffer.from(JSON.stringify(notification)).toString('base64');
    const body = {
      message: { data, messageId: o.messageId ?? uid(''), publishTime: new Date().toISOString() },
      subscription: 'projects/example/subscriptions/rtdn',
    };
    const token = o.token === undefined ? PUSH_TOKEN : o.token;
    const query = token === null ? '' : `?token=${encodeURIComponent(token)}`;
    return t.http.post(`/v1/webhooks/android_store/${o.projectId ?? fx.projectId}${query}`).send(body);
  }

  function subscription(
    token: string,
    o: { state?: string; productId?: string; expiry?: number; test?: boolean; ack?: boolean; account?: string; linked?: string } = {},
  ) {
    const purchase: Record<string, unknown> = {
      regionCode: 'US',
      startTime: iso(now() - 60),
      subscriptionState: o.state ?? 'SUBSCRIPTION_STATE_ACTIVE',
      latestOrderId: uid('GPA.'),
      acknowledgementState: o.ack ? 'ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED' : 'ACKNOWLEDGEMENT_STATE_PENDING',
      lineItems: [{ productId: o.productId ?? 'pro_monthly', expiryTime: iso(o.expiry ?? now() + 30 * 86400), autoRenewingPlan: { autoRenewEnabled: true } }],
    };
    if (o.test) purchase.testPurchase = {};
    if (o.account) purchase.externalAccountIdentifiers = { obfuscatedExternalAccountId: o.account };
    if (o.linked) purchase.linkedPurchaseToken = o.linked;
    google.subscriptions.set(`${PACKAGE}|${token}`, purchase);
    return purchase;
  }

  const entitlements = (customerId: string, key = fx.keys.skLive) => t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(keyHeaders(fx, key));
  const audit = (eventId: string, key = fx.keys.skLive) => t.http.get(`/v1/server/audit/${eventId}`).set(keyHeaders(fx, key));
  const notificationsStored = async () =>
    (await t.dataSource.query(`SELECT count(*)::int AS n FROM rail_notifications WHERE project_id = $1`, [fx.projectId]))[0].n as number;

  describe('operator configuration', () => {
    it('PUT rails/android_store takes the package name; GET rails shows secretsConfigured', async () => {
      const res = await t.http.get(`/admin/v1/projects/${fx.projectId}/rails`).set(operatorAuth());
      expect(res.body).toMatchObject({ object: 'list', data: [{ rail: 'android_store', enabled: true, packageName: PACKAGE, secretsConfigured: true }] });
      expectError(await t.http.put(`/admin/v1/projects/${fx.projectId}/rails/android_store`).set(operatorAuth()).send({}), 400, 'missing_required_param');
      expectError(
        await t.http.put(`/admin/v1/projects/${fx.projectId}/rails/android_store`).set(operatorAuth()).send({ packageName: 'not a package' }),
        400,
        'invalid_param_value',
      );
      expectError(
        await t.http.put('/admin/v1/projects/proj_nope/rails/android_store').set(operatorAuth()).send({ packageName: PACKAGE }),
        404,
        'resource_missing',
      );
    });
  });

  describe('answers and errors in the documented order', () => {
    it('404 for an unknown project or a project without the rail', async () => {
      expectError(await push(subNotification(4, 'tok'), { projectId: 'proj_nope', token: 'x' }), 404, 'resource_missing');
      const bare = await createProject(t);
      expectError(await push(subNotification(4, 'tok'), { projectId: bare }), 404, 'resource_missing');
    });

    it('400 invalid_param_value when the body is not JSON or has no message.data (before the token)', async () => {
      expectError(
        await t.http.post(`/v1/webhooks/android_store/${fx.projectId}?token=wrong`).set('Content-Type', 'application/json').send('{oops'),
        400,
        'invalid_param_value',
      );
      expectError(
        await t.http.post(`/v1/webhooks/android_store/${fx.projectId}?token=wrong`).send({ message: { messageId: '1' } }),
        400,
        'invalid_param_value',
      );
    });

    it('400 invalid_signature for a wrong or missing token, or none configured; one log line, nothing stored, nothing read', async () => {
      const before = { stored: await notificationsStored(), calls: google.calls.length };
      logs.length = 0;
      expectError(await push(subNotification(4, 'tok'), { token: 'wrong-token-wrong-token' }), 400, 'invalid_signature');
      expectError(await push(subNotification(4, 'tok'), { token: null }), 400, 'invalid_signature');
      const other = await createProject(t);
      await t.http.put(`/admin/v1/projects/${other}/rails/android_store`).set(operatorAuth()).send({ packageName: PACKAGE });
      expectError(await push(subNotification(4, 'tok'), { projectId: other }), 400, 'invalid_signature');
      expect(logs.filter((line) => line.msg === 'store notification refused: authentication failed')).toHaveLength(3);
      expect(JSON.stringify(logs)).not.toContain(PUSH_TOKEN);
      expect({ stored: await notificationsStored(), calls: google.calls.length }).toEqual(before);
    });

    it('authenticated but not a developer notification: 400 invalid_param_value', async () => {
      expectError(await push('!!!not-base64-json!!!'), 400, 'invalid_param_value');
      expectError(await push({ version: '1.0', packageName: PACKAGE, eventTimeMillis: '1' }), 400, 'invalid_param_value');
    });

    it('authenticated with an id over 512 characters or a time out of range: 400 invalid_param_value naming the field, nothing stored', async () => {
      const before = await notificationsStored();
      const long = 'x'.repeat(600);
      const cases: [string, Awaited<ReturnType<typeof push>>][] = [
        ['message.messageId', await push(subNotification(4, uid('tok')), { messageId: long })],
        ['message.data.subscriptionNotification.purchaseToken', await push(subNotification(4, long))],
        ['message.data.eventTimeMillis', await push(subNotification(4, uid('tok'), { eventTimeMillis: 2 ** 63 }))],
      ];
      const token = uid('tok');
      subscription(token, { account: long });
      cases.push(['purchase.externalAccountIdentifiers.obfuscatedExternalAccountId', await push(subNotification(4, token))]);
      for (const [field, res] of cases) {
        expectError(res, 400, 'invalid_param_value');
        expect(res.body.error.message.startsWith(`${field}: `)).toBe(true);
      }
      expect(google.acknowledged).not.toContain(`subscription:pro_monthly:${token}`);
      expect(await notificationsStored()).toBe(before);
    });

    it('a test notification is no_op; another package is rejected without reading anything', async () => {
      const calls = google.calls.length;
      const test = await push({ version: '1.0', packageName: PACKAGE, eventTimeMillis: String(t.clock.nowMs()), testNotification: { version: '1.0' } });
      expect(test.body).toEqual(expect.objectContaining({ decision: 'no_op', serviceCustomerId: null, env: 'production' }));
      expect((await audit(test.body.auditEventId)).body.data.eventType).toBe('TEST_NOTIFICATION');
      const wrong = await push(subNotification(4, 'tok', { packageName: 'com.other.app' }));
      expect(wrong.status).toBe(200);
      expect(wrong.body).toEqual(expect.objectContaining({ decision: 'rejected', serviceCustomerId: null }));
      expect(google.calls.length).toBe(calls);
    });
  });

  describe('subscriptions', () => {
    it('SUBSCRIPTION_PURCHASED: read with a token from token_uri, acknowledged, applied until the expiry', async () => {
      const token = uid('tok');
      const expiry = now() + 30 * 86400;
      subscription(token, { expiry });
      const messageId = uid('');
      const res = await push(subNotification(4, token), { messageId });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'rail_notification',
        rail: 'android_store',
        notificationId: messageId,
        env: 'production',
        decision: 'applied',
        duplicate: false,
        serviceCustomerId: expect.stringMatching(/^cdcust_/),
        crossdeckCustomerId: expect.stringMatching(/^cdcust_/),
        auditEventId: expect.stringMatching(/^rail_evt_/),
      });
      expect(res.body.crossdeckCustomerId).toBe(res.body.serviceCustomerId);
      expect(google.tokensIssued).toBeGreaterThan(0);
      expect(google.acknowledged).toContain(`subscription:pro_monthly:${token}`);
      const read = await entitlements(res.body.serviceCustomerId);
      expect(read.body.data).toEqual([
        expect.objectContaining({
          key: 'pro',
          isActive: true,
          validUntil: expiry,
          source: { rail: 'android_store', productId: 'pro_monthly', subscriptionId: token },
        }),
      ]);
      expect((await audit(res.body.auditEventId)).body.data).toEqual(
        expect.objectContaining({
          rail: 'android_store',
          env: 'production',
          eventType: 'SUBSCRIPTION_PURCHASED',
          decision: 'applied',
          customerId: res.body.serviceCustomerId,
          signatureVerified: true,
          reconciledWithProvider: true,
          rawEventReceivedAt: expect.any(Number),
          processedAt: expect.any(Number),
        }),
      );
    });

    it('503 rail_unavailable when the Publisher API or the token endpoint fails; nothing stored; the retry applies', async () => {
      const token = uid('tok');
      subscription(token);
      const messageId = uid('');
      const stored = await notificationsStored();
      google.failReads = true;
      try {
        const res = await push(subNotification(4, token), { messageId });
        expect({ status: res.status, type: res.body.error?.type, code: res.body.error?.code }).toEqual({
          status: 503,
          type: 'internal_error',
          code: 'rail_unavailable',
        });
      } finally {
        google.failReads = false;
      }
      expect(await notificationsStored()).toBe(stored);
      const retry = await push(subNotification(4, token), { messageId });
      expect(retry.body).toEqual(expect.objectContaining({ decision: 'applied', duplicate: false }));

      // A fresh project's service account has no cached token: a failing token endpoint is 503 too.
      const other = await createProjectWithApp(t, { platform: 'android', packageName: PACKAGE });
      file.write({
        projects: {
          [fx.projectId]: { android_store: { pushToken: PUSH_TOKEN, serviceAccount: google.serviceAccount() } },
          [other.projectId]: {
            android_store: {
              pushToken: PUSH_TOKEN,
              serviceAccount: { ...google.serviceAccount(), client_email: 'other@example-project.iam.gserviceaccount.com' },
            },
          },
        },
      });
      t.app.get(RailSecrets).reloadIfChanged();
      await t.http.put(`/admin/v1/projects/${other.projectId}/rails/android_store`).set(operatorAuth()).send({ packageName: PACKAGE });
      google.failTokens = true;
      try {
        expectError(await push(subNotification(4, token), { projectId: other.projectId }), 503, 'rail_unavailable');
      } finally {
        google.failTokens = false;
      }
      // The stand-in refuses an assertion for another client: also 503 (the rail retries).
      expectError(await push(subNotification(4, token), { projectId: other.projectId }), 503, 'rail_unavailable');
    });
  });

  it('the push token and the service account key never reach the database', async () => {
    const privateKeyBody = google.serviceAccount().private_key.split('\n')[5];
    const scanned = await tablesContaining(t.dataSource, [PUSH_TOKEN, privateKeyBody]);
    for (const { table, hits } of scanned) expect({ table, hits }).toEqual({ table, hits: 0 });
  });

  describe('revenue ledger', () => {
    it('the line item’s recurring price, over the base plan’s period, is the subscription’s MRR; its order is recognised once', async () => {
      const token = uid('tok_rev_');
      const purchase = subscription(token, { ack: true, productId: 'pro_yearly' });
      purchase.lineItems = [
        {
          productId: 'pro_yearly',
          expiryTime: iso(now() + 365 * 86400),
          autoRenewingPlan: { autoRenewEnabled: true, recurringPrice: { currencyCode: 'USD', units: '59', nanos: 990_000_000 } },
          offerDetails: { basePlanId: 'annual' },
        },
      ];
      const read = async () => (await t.http.get('/v1/revenue').set(keyHeaders(fx, fx.keys.skLive))).body.data;
      const before = await read();
      expect((await push(subNotification(4, token, { subscriptionId: 'pro_yearly' }))).body.decision).toBe('applied');
      const after = await read();
      // 59.99 a year is 499.92 a month.
      expect(after.byRail.android_store - before.byRail.android_store).toBe(500);
      expect(after.byRailDetail.android_store.mrrCents).toBe(after.byRail.android_store);
      expect(after.recognisedCashThisMonthCents - before.recognisedCashThisMonthCents).toBe(5999);
      // The same order read again (a renewal-status change) is not counted twice; expiry leaves MRR.
      await push(subNotification(3, token, { subscriptionId: 'pro_yearly' }));
      expect((await read()).recognisedCashThisMonthCents).toBe(after.recognisedCashThisMonthCents);
      purchase.subscriptionState = 'SUBSCRIPTION_STATE_EXPIRED';
      await push(subNotification(13, token, { subscriptionId: 'pro_yearly' }));
      expect((await read()).byRail.android_store).toBe(before.byRail.android_store);
    });
  });
});
