import { randomBytes } from 'node:crypto';
import { AuditJournal } from '#audit';
import { EntitlementHistory, EntitlementReadService } from '#entitlements';
import { IdentifyService } from '#identity';
import type { TenantScope } from '#platform';
import { RailSecrets, type RailSettingsRecord, StoreNotificationsModule } from '#rails';
import { IdentityAdminService } from '../../libs/identity/src/operator/identity-admin.service.js';
import { AndroidWebhookService } from '../../libs/rails/src/android/android-webhook.service.js';
import type { RailNotificationView } from '../../libs/rails/src/notifications/rail-notification.view.js';
import { StoreRailSettings } from '../../libs/rails/src/settings/store-rail-settings.service.js';
import { WebhookGate } from '../../libs/rails/src/webhooks/webhook-gate.service.js';
import { AndroidPublisherStandIn } from '../support/android-publisher-standin.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { testScope } from '../support/scopes.js';

const PACKAGE = 'com.example.rails.medium';
const PUSH_TOKEN = `push_${randomBytes(24).toString('hex')}`;

let seq = 0;
const uid = (prefix: string) => `${prefix}${Date.now().toString(36)}${(++seq).toString(36)}${Math.random().toString(36).slice(2, 8)}`;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/**
 * The Android store notifications' rules on the rails' modules alone (no HTTP), with the
 * Publisher API stand-in: the read state decides, revocations and voided purchases, the
 * catalogue gate, one-time products, notifications claimed once, and whose purchase it is.
 * The push token, answers, errors and the revenue read stay in test/e2e/webhooks-android.e2e-spec.ts.
 */
describe('medium: Android store notifications', () => {
  let m: MediumContext;
  let android: AndroidWebhookService;
  let file: RailSecretsFile;
  let projectId: string;
  let settings: RailSettingsRecord;
  const google = new AndroidPublisherStandIn();
  const production = () => testScope(projectId, 'production');
  const now = () => m.clock.nowSeconds();

  beforeAll(async () => {
    await google.start();
    file = new RailSecretsFile();
    m = await createMediumContext({ modules: [StoreNotificationsModule], env: { RAIL_SECRETS_FILE: file.path, ANDROID_PUBLISHER_BASE_URL: google.baseUrl } });
    android = m.get(AndroidWebhookService);
    projectId = await m.newProject();
    file.write({ projects: { [projectId]: { android_store: { pushToken: PUSH_TOKEN, serviceAccount: google.serviceAccount() } } } });
    m.get(RailSecrets).reloadIfChanged();
    await m.get(StoreRailSettings).put(projectId, 'android_store', { packageName: PACKAGE });
    settings = await m.get(WebhookGate).requireRail(projectId, 'android_store');
    await m.newCatalogue(production(), [
      { rail: 'android_store', productId: 'pro_monthly', entitlementKeys: ['pro'] },
      { rail: 'android_store', productId: 'pro_yearly', entitlementKeys: ['pro', 'cloud_sync'] },
      { rail: 'android_store', productId: 'lifetime_unlock', entitlementKeys: ['lifetime'] },
    ]);
  });
  afterAll(async () => {
    await m?.close();
    await google.stop();
    file?.remove();
  });

  type Notification = Record<string, unknown>;
  const subNotification = (type: number, purchaseToken: string, o: { subscriptionId?: string; eventTimeMillis?: number } = {}): Notification => ({
    version: '1.0',
    packageName: PACKAGE,
    eventTimeMillis: String(o.eventTimeMillis ?? m.clock.nowMs()),
    subscriptionNotification: { version: '1.0', notificationType: type, purchaseToken, subscriptionId: o.subscriptionId ?? 'pro_monthly' },
  });
  const oneTimeNotification = (type: number, purchaseToken: string, sku = 'lifetime_unlock'): Notification => ({
    version: '1.0',
    packageName: PACKAGE,
    eventTimeMillis: String(m.clock.nowMs()),
    oneTimeProductNotification: { version: '1.0', notificationType: type, purchaseToken, sku },
  });
  const voided = (purchaseToken: string, productType: number): Notification => ({
    version: '1.0',
    packageName: PACKAGE,
    eventTimeMillis: String(m.clock.nowMs()),
    voidedPurchaseNotification: { purchaseToken, orderId: uid('GPA.'), productType, refundType: 1 },
  });
  /** A push with the right token, as the webhook route hands it over once its gate let it through. */
  const push = (notification: Notification, o: { messageId?: string } = {}): Promise<RailNotificationView> => {
    const body = {
      message: { data: Buffer.from(JSON.stringify(notification)).toString('base64'), messageId: o.messageId ?? uid(''), publishTime: new Date().toISOString() },
      subscription: 'projects/example/subscriptions/rtdn',
    };
    return android.receive(projectId, settings, Buffer.from(JSON.stringify(body)), PUSH_TOKEN, uid('req_medium_'));
  };
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
  const entitlements = (customerId: string, scope: TenantScope = production()) => m.get(EntitlementReadService).listActive(scope, customerId);
  const activeKeys = async (customerId: string, scope: TenantScope = production()): Promise<string[]> =>
    (await entitlements(customerId, scope))
      .filter((e) => e.isActive)
      .map((e) => e.key)
      .sort();
  const audit = (eventId: string) => m.get(AuditJournal).find(production(), eventId);
  const identify = async (): Promise<string> =>
    (
      await m
        .get(IdentifyService)
        .identify(m.newAuth(production(), { platform: 'android' }), { userId: uid('user'), anonymousId: uid('anon') } as Parameters<
          IdentifyService['identify']
        >[1])
    ).serviceCustomerId;

  describe('subscriptions', () => {
    it('an acknowledged purchase is not acknowledged again; a test purchase lands in sandbox', async () => {
      const token = uid('tok');
      subscription(token, { ack: true, test: true });
      const result = await push(subNotification(4, token));
      expect(result.env).toBe('sandbox');
      expect(google.acknowledged.filter((a) => a.endsWith(token))).toEqual([]);
      expect(await activeKeys(result.serviceCustomerId!, testScope(projectId, 'sandbox'))).toEqual(['pro']);
    });

    it('a duplicate messageId is answered from the first processing without reading again', async () => {
      const token = uid('tok');
      subscription(token);
      const messageId = uid('');
      const first = await push(subNotification(2, token), { messageId });
      const calls = google.calls.length;
      const again = await push(subNotification(2, token), { messageId });
      expect(again).toEqual({ ...first, duplicate: true });
      expect(google.calls.length).toBe(calls);
    });

    it.each([
      ['SUBSCRIPTION_STATE_ACTIVE', true, null],
      ['SUBSCRIPTION_STATE_IN_GRACE_PERIOD', true, null],
      ['SUBSCRIPTION_STATE_CANCELED', true, null],
      ['SUBSCRIPTION_STATE_EXPIRED', false, null],
      ['SUBSCRIPTION_STATE_ON_HOLD', false, null],
      // A pause begins when the paid period ends: the line item's expiry is behind it.
      ['SUBSCRIPTION_STATE_PAUSED', false, -60],
      // Paused with paid time left: access until the paid period's end.
      ['SUBSCRIPTION_STATE_PAUSED', true, null],
      ['SUBSCRIPTION_STATE_PENDING', false, null],
      ['SUBSCRIPTION_STATE_PENDING_PURCHASE_CANCELED', false, null],
    ])('read state %s: active %s', async (state: string, active: boolean, expiresIn: number | null) => {
      const token = uid('tok');
      subscription(token, { state, ack: true, ...(expiresIn === null ? {} : { expiry: now() + expiresIn }) });
      const result = await push(subNotification(2, token));
      expect(result.decision).toBe('applied');
      expect(await activeKeys(result.serviceCustomerId!)).toEqual(active ? ['pro'] : []);
    });

    it('the read state wins whatever the eventTimeMillis; unchanged is no_op', async () => {
      const token = uid('tok');
      subscription(token, { ack: true });
      const first = await push(subNotification(4, token, { eventTimeMillis: m.clock.nowMs() }));
      subscription(token, { state: 'SUBSCRIPTION_STATE_EXPIRED', ack: true, expiry: now() - 10 });
      const older = await push(subNotification(13, token, { eventTimeMillis: m.clock.nowMs() - 3_600_000 }));
      expect(older).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: first.serviceCustomerId }));
      expect(await activeKeys(first.serviceCustomerId!)).toEqual([]);
      expect((await push(subNotification(13, token))).decision).toBe('no_op');
    });

    it('SUBSCRIPTION_REVOKED turns entitlements off at once, whatever the read state says', async () => {
      const token = uid('tok');
      subscription(token, { ack: true });
      const bought = await push(subNotification(4, token));
      expect(await activeKeys(bought.serviceCustomerId!)).toEqual(['pro']);
      const revoked = await push(subNotification(12, token));
      expect(revoked.decision).toBe('applied');
      expect(await activeKeys(bought.serviceCustomerId!)).toEqual([]);
      const rows = (await m.get(EntitlementHistory).of(production(), bought.serviceCustomerId!)).filter((row) => row.subscriptionId === token);
      expect(rows.map(({ key, state }) => ({ key, state }))).toEqual([{ key: 'pro', state: 'revoked' }]);
      expect((await audit(revoked.auditEventId))?.eventType).toBe('SUBSCRIPTION_REVOKED');
    });

    it('a voided subscription purchase is revoked', async () => {
      const token = uid('tok');
      subscription(token, { ack: true, productId: 'pro_yearly' });
      const bought = await push(subNotification(4, token, { subscriptionId: 'pro_yearly' }));
      expect(await activeKeys(bought.serviceCustomerId!)).toEqual(['cloud_sync', 'pro']);
      const result = await push(voided(token, 1));
      expect(result).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: bought.serviceCustomerId }));
      expect(await activeKeys(bought.serviceCustomerId!)).toEqual([]);
      expect((await audit(result.auditEventId))?.eventType).toBe('VOIDED_PURCHASE');
    });

    it('a product missing from the catalogue is rejected', async () => {
      const token = uid('tok');
      subscription(token, { ack: true, productId: 'unknown_sku' });
      expect(await push(subNotification(4, token, { subscriptionId: 'unknown_sku' }))).toEqual(
        expect.objectContaining({ decision: 'rejected', serviceCustomerId: null }),
      );
    });
  });

  describe('one-time products', () => {
    it('purchased: lifetime, acknowledged; purchaseType 0 lands in sandbox; canceled turns it off; voided revokes', async () => {
      const sandbox = testScope(projectId, 'sandbox');
      const token = uid('tok');
      google.products.set(`${PACKAGE}|lifetime_unlock|${token}`, {
        purchaseState: 0,
        acknowledgementState: 0,
        purchaseType: 0,
        purchaseTimeMillis: String(m.clock.nowMs()),
      });
      const result = await push(oneTimeNotification(1, token));
      expect(result).toEqual(expect.objectContaining({ env: 'sandbox', decision: 'applied' }));
      expect(google.acknowledged).toContain(`product:lifetime_unlock:${token}`);
      expect(await entitlements(result.serviceCustomerId!, sandbox)).toEqual([expect.objectContaining({ key: 'lifetime', isActive: true, validUntil: null })]);

      google.products.set(`${PACKAGE}|lifetime_unlock|${token}`, { purchaseState: 1, acknowledgementState: 1, purchaseType: 0 });
      const canceled = await push(oneTimeNotification(2, token));
      expect(canceled).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: result.serviceCustomerId }));
      expect(await activeKeys(result.serviceCustomerId!, sandbox)).toEqual([]);

      const other = uid('tok');
      google.products.set(`${PACKAGE}|lifetime_unlock|${other}`, { purchaseState: 0, acknowledgementState: 1 });
      const bought = await push(oneTimeNotification(1, other));
      expect(bought.env).toBe('production');
      expect(await activeKeys(bought.serviceCustomerId!)).toEqual(['lifetime']);
      const voidedResult = await push(voided(other, 2));
      expect(voidedResult).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: bought.serviceCustomerId }));
      expect(await activeKeys(bought.serviceCustomerId!)).toEqual([]);
    });
  });

  describe('whose purchase it is', () => {
    it('obfuscatedExternalAccountId naming a cdcust_ id of the environment', async () => {
      const known = await identify();
      const token = uid('tok');
      subscription(token, { ack: true, account: known });
      expect((await push(subNotification(4, token))).serviceCustomerId).toBe(known);
    });

    it('another obfuscated id becomes an alias: two purchases with it land on one customer', async () => {
      const account = uid('acct');
      const a = uid('tok');
      const b = uid('tok');
      subscription(a, { ack: true, account });
      subscription(b, { ack: true, account, productId: 'pro_yearly' });
      const first = await push(subNotification(4, a));
      const second = await push(subNotification(4, b, { subscriptionId: 'pro_yearly' }));
      expect(second.serviceCustomerId).toBe(first.serviceCustomerId);
    });

    it('a known purchase whose account id names another customer stays put; the conflict is queued for review', async () => {
      const token = uid('tok');
      subscription(token, { ack: true });
      const first = await push(subNotification(4, token));
      const other = await identify();
      subscription(token, { ack: true, account: other });
      const renewed = await push(subNotification(2, token));
      expect(renewed.serviceCustomerId).toBe(first.serviceCustomerId);
      const reviews = (await m.get(IdentityAdminService).mergeReviews(projectId, 'production')).data.filter((r) => r.otherCustomerId === other);
      expect(reviews.map((r) => [r.canonicalCustomerId, r.otherCustomerId])).toEqual([[first.serviceCustomerId, other]]);
    });

    it('linkedPurchaseToken (upgrade) keeps the customer of the previous token', async () => {
      const oldToken = uid('tok');
      const newToken = uid('tok');
      subscription(oldToken, { ack: true });
      const first = await push(subNotification(4, oldToken));
      subscription(newToken, { ack: true, productId: 'pro_yearly', linked: oldToken });
      const upgraded = await push(subNotification(4, newToken, { subscriptionId: 'pro_yearly' }));
      expect(upgraded.serviceCustomerId).toBe(first.serviceCustomerId);
      expect(await activeKeys(first.serviceCustomerId!)).toEqual(['cloud_sync', 'pro']);
    });
  });
});
