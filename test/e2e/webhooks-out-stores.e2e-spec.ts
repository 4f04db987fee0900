// Auto-renew turned off and on in the stores: iOS DID_CHANGE_RENEWAL_STATUS and Android
// SUBSCRIPTION_CANCELED / SUBSCRIPTION_RESTARTED yield subscription.canceled / .uncanceled.
import { randomBytes } from 'node:crypto';
import { RailSecrets } from '#rails';
import { WebhookDispatcher } from '#webhooks';
import { AndroidPublisherStandIn } from '../support/android-publisher-standin.js';
import { createProjectWithApp, type ProjectFixture } from '../support/fixtures.js';
import { createIosRailProject } from '../support/ios-rail.js';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { type StoreChain, createStoreChain, notificationPayload, signStoreJws, transactionPayload } from '../support/store-signing.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';

const BUNDLE = 'com.example.renewal.ios';
const PACKAGE = 'com.example.renewal';
const PUSH_TOKEN = `push_${randomBytes(24).toString('hex')}`;
const HOUR_MS = 3_600_000;
const RENEWAL_TYPES = ['subscription.canceled', 'subscription.uncanceled'];

describe('outbound webhooks: auto-renew off and on in the stores', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let chain: StoreChain;
  let ios: ProjectFixture;
  let android: ProjectFixture;
  let file: RailSecretsFile;
  const google = new AndroidPublisherStandIn();

  async function endpoint(fx: ProjectFixture, hook: string): Promise<void> {
    const res = await t.http
      .post(`/admin/v1/projects/${fx.projectId}/webhook-endpoints`)
      .set(operatorAuth())
      .send({ url: receiver.url(hook), env: 'sandbox', eventTypes: RENEWAL_TYPES });
    expect(res.status).toBe(201);
  }

  beforeAll(async () => {
    await google.start();
    file = new RailSecretsFile();
    t = await createTestApp(
      {
        WEBHOOKS_ALLOW_PRIVATE: 'true',
        WEBHOOK_SIGNING_KEY: 'test-signing-key-0123456789abcdef0123456789',
        RAIL_SECRETS_FILE: file.path,
        ANDROID_PUBLISHER_BASE_URL: google.baseUrl,
      },
      { ownDatabase: true },
    );
    receiver = await startWebhookReceiver();
    chain = createStoreChain();
    ios = await createIosRailProject(t, BUNDLE, chain.rootPem);
    android = await createProjectWithApp(t, { platform: 'android', packageName: PACKAGE });
    file.write({ projects: { [android.projectId]: { android_store: { pushToken: PUSH_TOKEN, serviceAccount: google.serviceAccount() } } } });
    t.app.get(RailSecrets).reloadIfChanged();
    expect((await t.http.put(`/admin/v1/projects/${android.projectId}/rails/android_store`).set(operatorAuth()).send({ packageName: PACKAGE })).status).toBe(
      200,
    );
    const products = await t.http
      .put(`/admin/v1/projects/${android.projectId}/products`)
      .set(operatorAuth())
      .send({ products: [{ rail: 'android_store', productId: 'pro_monthly', entitlementKeys: ['pro'] }] });
    expect(products.status).toBe(200);
    await endpoint(ios, '/ios');
    await endpoint(android, '/android');
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
    await google.stop();
    file?.remove();
  });

  const drain = () => t.app.get(WebhookDispatcher).drain();
  /** Deliveries are not ordered: sorted by type (canceled before uncanceled). */
  const received = (hook: string) =>
    receiver
      .of(hook)
      .map((r) => ({ type: r.json.type as string, willRenew: r.json.data.willRenew, subscriptionId: r.json.data.subscriptionId }))
      .sort((a, b) => a.type.localeCompare(b.type));

  it('iOS DID_CHANGE_RENEWAL_STATUS: AUTO_RENEW_DISABLED → canceled, AUTO_RENEW_ENABLED → uncanceled, a repeat → nothing', async () => {
    const nowMs = t.clock.nowMs();
    const tx = transactionPayload({ bundleId: BUNDLE, productId: 'pro.monthly', signedDate: nowMs, expiresDate: nowMs + 30 * 24 * HOUR_MS });
    const notify = async (type: string, subtype: string | undefined, signedDate: number) => {
      const payload = notificationPayload({
        notificationType: type,
        subtype,
        signedDate,
        bundleId: BUNDLE,
        environment: 'Sandbox',
        signedTransactionInfo: signStoreJws(chain, { ...tx, environment: 'Sandbox' }),
      });
      const res = await t.http.post(`/v1/webhooks/ios_store/${ios.projectId}`).send({ signedPayload: signStoreJws(chain, payload) });
      expect(res.status).toBe(200);
      return res;
    };
    await notify('SUBSCRIBED', undefined, nowMs);
    await notify('DID_CHANGE_RENEWAL_STATUS', 'AUTO_RENEW_DISABLED', nowMs + 1);
    await notify('DID_CHANGE_RENEWAL_STATUS', 'AUTO_RENEW_DISABLED', nowMs + 2);
    await notify('DID_CHANGE_RENEWAL_STATUS', 'AUTO_RENEW_ENABLED', nowMs + 3);
    await drain();
    expect(received('/ios')).toEqual([
      { type: 'subscription.canceled', willRenew: false, subscriptionId: tx.originalTransactionId },
      { type: 'subscription.uncanceled', willRenew: true, subscriptionId: tx.originalTransactionId },
    ]);
  });

  it('Android SUBSCRIPTION_CANCELED → canceled (still active), SUBSCRIPTION_RESTARTED → uncanceled', async () => {
    const token = `tok${randomBytes(8).toString('hex')}`;
    const expiry = new Date(t.clock.nowMs() + 30 * 24 * HOUR_MS).toISOString();
    const purchase = (state: string) =>
      google.subscriptions.set(`${PACKAGE}|${token}`, {
        regionCode: 'US',
        startTime: new Date(t.clock.nowMs() - 60_000).toISOString(),
        subscriptionState: state,
        latestOrderId: 'GPA.1',
        acknowledgementState: 'ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED',
        lineItems: [{ productId: 'pro_monthly', expiryTime: expiry, autoRenewingPlan: { autoRenewEnabled: state === 'SUBSCRIPTION_STATE_ACTIVE' } }],
        testPurchase: {},
      });
    let at = t.clock.nowMs();
    const push = async (type: number) => {
      const notification = {
        version: '1.0',
        packageName: PACKAGE,
        eventTimeMillis: String(++at),
        subscriptionNotification: { version: '1.0', notificationType: type, purchaseToken: token, subscriptionId: 'pro_monthly' },
      };
      const body = {
        message: {
          data: Buffer.from(JSON.stringify(notification)).toString('base64'),
          messageId: randomBytes(8).toString('hex'),
          publishTime: new Date().toISOString(),
        },
        subscription: 'projects/example/subscriptions/rtdn',
      };
      const res = await t.http.post(`/v1/webhooks/android_store/${android.projectId}?token=${encodeURIComponent(PUSH_TOKEN)}`).send(body);
      expect(res.status).toBe(200);
      expect(res.body.env).toBe('sandbox');
    };
    purchase('SUBSCRIPTION_STATE_ACTIVE');
    await push(4); // SUBSCRIPTION_PURCHASED
    purchase('SUBSCRIPTION_STATE_CANCELED');
    await push(3); // SUBSCRIPTION_CANCELED
    purchase('SUBSCRIPTION_STATE_ACTIVE');
    await push(7); // SUBSCRIPTION_RESTARTED
    await drain();
    expect(received('/android')).toEqual([
      { type: 'subscription.canceled', willRenew: false, subscriptionId: token },
      { type: 'subscription.uncanceled', willRenew: true, subscriptionId: token },
    ]);
  });
});
