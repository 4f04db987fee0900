import { ReportingModule } from '#reporting';
import { RevenueReadsService } from '../../libs/reporting/src/revenue/revenue-reads.service.js';
import { RailSubscriptionsRepository } from '../../libs/rails/src/model/rail-subscriptions.repository.js';
import { randomUUID } from 'node:crypto';
import type { AuditEntryData } from '#audit';
import { AuditJournal } from '#audit';
import { EntitlementHistory, EntitlementReadService } from '#entitlements';
import { IdentifyService } from '#identity';
import type { IosStoreSettings, RailSettingsRecord } from '#rails';
import { StoreNotificationsModule } from '#rails';
import { IosWebhookService } from '../../libs/rails/src/ios/ios-webhook.service.js';
import type { RailNotificationView } from '../../libs/rails/src/notifications/rail-notification.view.js';
import { RailsOperatorService } from '../../libs/rails/src/operator/rails-operator.service.js';
import { PurchaseSyncService } from '../../libs/rails/src/purchases/purchase-sync.service.js';
import { WebhookGate } from '../../libs/rails/src/webhooks/webhook-gate.service.js';
import { IOS_TEST_PRODUCTS } from '../support/ios-rail.js';
import { createMediumContext, unique, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';
import {
  type StoreChain,
  type TransactionFields,
  createStoreChain,
  newTransactionId,
  notificationPayload,
  renewalInfoPayload,
  signStoreJws,
  transactionPayload,
} from '../support/store-signing.js';

const BUNDLE = 'com.example.rails.ios.medium';
const HOUR_MS = 3_600_000;

/**
 * The iOS store notifications' rules on the rails' modules alone (no HTTP): newest signed date
 * wins, renewals, refunds and revocations, grace periods, lifetime purchases, the catalogue gate,
 * and one model with purchase sync. Signatures, answers and request rules stay in
 * test/e2e/webhooks-ios.e2e-spec.ts.
 */
describe('medium: iOS store notifications', () => {
  let m: MediumContext;
  let ios: IosWebhookService;
  let chain: StoreChain;
  let projectId: string;
  let settings: RailSettingsRecord<IosStoreSettings>;
  const sandbox = () => testScope(projectId, 'sandbox');
  const nowMs = () => m.clock.nowMs();

  beforeAll(async () => {
    // The reporting module attaches the revenue ledger to the rails' feed (refunds are counted there).
    m = await createMediumContext({ modules: [StoreNotificationsModule, ReportingModule] });
    ios = m.get(IosWebhookService);
    chain = createStoreChain();
    projectId = await m.newProject();
    await m.get(RailsOperatorService).putIosStore(projectId, { bundleId: BUNDLE, trustedRootCertificates: [chain.rootPem] });
    await m.newCatalogue(sandbox(), IOS_TEST_PRODUCTS as Parameters<MediumContext['newCatalogue']>[1]);
    settings = await m.get(WebhookGate).requireRail<IosStoreSettings>(projectId, 'ios_store');
  });
  afterAll(() => m?.close());

  const transaction = (fields: Partial<TransactionFields> = {}) =>
    transactionPayload({ bundleId: BUNDLE, productId: 'pro.monthly', signedDate: nowMs(), expiresDate: nowMs() + HOUR_MS, ...fields });

  interface NotifyOptions {
    type: string;
    subtype?: string;
    tx?: TransactionFields | null;
    renewal?: Record<string, unknown>;
    signedDate?: number;
    uuid?: string;
  }
  /** A signed sandbox notification, as the webhook route hands it over once its gate let it through. */
  const notify = (o: NotifyOptions): Promise<RailNotificationView> => {
    const payload = notificationPayload({
      notificationType: o.type,
      subtype: o.subtype,
      notificationUUID: o.uuid,
      signedDate: o.signedDate ?? nowMs(),
      bundleId: BUNDLE,
      environment: 'Sandbox',
      ...(o.tx ? { signedTransactionInfo: signStoreJws(chain, { ...o.tx, environment: 'Sandbox' }) } : {}),
      ...(o.renewal ? { signedRenewalInfo: signStoreJws(chain, o.renewal) } : {}),
    });
    return ios.receive(projectId, settings, Buffer.from(JSON.stringify({ signedPayload: signStoreJws(chain, payload) })), unique('req_medium'));
  };
  const entitlements = (customerId: string) => m.get(EntitlementReadService).listActive(sandbox(), customerId);
  const activeKeys = async (customerId: string): Promise<string[]> =>
    (await entitlements(customerId))
      .filter((e) => e.isActive)
      .map((e) => e.key)
      .sort();
  const audit = (eventId: string): Promise<AuditEntryData | null> => m.get(AuditJournal).find(sandbox(), eventId);
  /** Identify binding an app account token: answers the customer. */
  const identify = async (appAccountToken: string): Promise<string> =>
    (
      await m.get(IdentifyService).identify(m.newAuth(sandbox(), { platform: 'ios' }), {
        userId: `user_${randomUUID()}`,
        anonymousId: `anon_${Date.now()}`,
        appAccountToken,
      } as Parameters<IdentifyService['identify']>[1])
    ).serviceCustomerId;

  describe('notification types', () => {
    it('duplicates are answered from the first processing; an older notification is no_op', async () => {
      const tx = transaction();
      const uuid = randomUUID();
      const t0 = nowMs();
      const first = await notify({ type: 'SUBSCRIBED', tx, uuid, signedDate: t0 });
      const again = await notify({ type: 'SUBSCRIBED', tx, uuid, signedDate: t0 });
      expect(again).toEqual({ ...first, duplicate: true });
      const expired = await notify({ type: 'EXPIRED', subtype: 'VOLUNTARY', tx: { ...tx, expiresDate: t0 + 1000 }, signedDate: t0 + 2000 });
      expect(expired.decision).toBe('applied');
      const late = await notify({ type: 'DID_RENEW', tx: { ...tx, expiresDate: t0 + 2 * HOUR_MS }, signedDate: t0 + 1000 });
      expect(late).toEqual(expect.objectContaining({ decision: 'no_op', serviceCustomerId: first.serviceCustomerId }));
      expect(await activeKeys(first.serviceCustomerId!)).toEqual([]);
    });

    it('DID_RENEW extends on the same customer (original transaction id)', async () => {
      const tx = transaction();
      const first = await notify({ type: 'SUBSCRIBED', tx, signedDate: nowMs() });
      const renewal = transaction({ originalTransactionId: tx.originalTransactionId, expiresDate: nowMs() + 30 * 24 * HOUR_MS });
      const renewed = await notify({ type: 'DID_RENEW', tx: renewal, signedDate: nowMs() + 1 });
      expect(renewed).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: first.serviceCustomerId }));
      expect((await entitlements(first.serviceCustomerId!))[0].validUntil).toBe(Math.floor(renewal.expiresDate! / 1000));
    });

    it.each(['REFUND', 'REVOKE'])('%s turns entitlements off at once', async (type) => {
      const tx = transaction();
      const first = await notify({ type: 'SUBSCRIBED', tx, signedDate: nowMs() });
      const result = await notify({ type, tx: { ...tx, revocationDate: nowMs(), revocationReason: 0 }, signedDate: nowMs() + 1 });
      expect(result).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: first.serviceCustomerId }));
      expect(await activeKeys(first.serviceCustomerId!)).toEqual([]);
      const rows = (await m.get(EntitlementHistory).of(sandbox(), first.serviceCustomerId!)).filter((row) => row.subscriptionId === tx.originalTransactionId);
      expect([...new Set(rows.map((row) => row.state))]).toEqual(['revoked']);
    });

    it('DID_FAIL_TO_RENEW / GRACE_PERIOD keeps access until the grace period ends; GRACE_PERIOD_EXPIRED ends it', async () => {
      const tx = transaction({ expiresDate: nowMs() - 1000 });
      const graceEnd = nowMs() + 6 * 24 * HOUR_MS;
      const grace = await notify({
        type: 'DID_FAIL_TO_RENEW',
        subtype: 'GRACE_PERIOD',
        tx,
        renewal: {
          ...renewalInfoPayload({ originalTransactionId: tx.originalTransactionId, productId: tx.productId, environment: 'Sandbox', signedDate: nowMs() }),
          gracePeriodExpiresDate: graceEnd,
        },
        signedDate: nowMs(),
      });
      expect(grace.decision).toBe('applied');
      expect(await activeKeys(grace.serviceCustomerId!)).toEqual(['cloud_sync', 'pro_access']);
      const ended = await notify({ type: 'GRACE_PERIOD_EXPIRED', tx, signedDate: nowMs() + 1 });
      expect(ended.decision).toBe('applied');
      expect(await activeKeys(grace.serviceCustomerId!)).toEqual([]);
    });

    it('DID_FAIL_TO_RENEW without grace period is billing retry (applied); PRICE_INCREASE without renewal info and an unknown type are no_op', async () => {
      // Billing retry keeps access only until the paid period's end: a new subscription in it is still recorded.
      const failed = await notify({ type: 'DID_FAIL_TO_RENEW', tx: transaction() });
      expect(failed.decision).toBe('applied');
      expect((await audit(failed.auditEventId))?.eventType).toBe('DID_FAIL_TO_RENEW');
      // The new price comes from the renewal info; without it nothing changes.
      for (const type of ['PRICE_INCREASE', 'SOME_FUTURE_TYPE']) {
        const result = await notify({ type, tx: transaction() });
        expect(result.decision).toBe('no_op');
        expect((await audit(result.auditEventId))?.eventType).toBe(type);
      }
    });

    it('ONE_TIME_CHARGE is lifetime; a product outside the catalogue is rejected', async () => {
      const tx = transaction({ productId: 'lifetime.unlock', type: 'Non-Consumable', expiresDate: undefined });
      const result = await notify({ type: 'ONE_TIME_CHARGE', tx });
      expect(result.decision).toBe('applied');
      expect(await entitlements(result.serviceCustomerId!)).toEqual([expect.objectContaining({ key: 'lifetime_access', isActive: true, validUntil: null })]);
      const unknown = await notify({ type: 'SUBSCRIBED', tx: transaction({ productId: 'not.in.catalogue' }) });
      expect(unknown).toEqual(expect.objectContaining({ decision: 'rejected', serviceCustomerId: null }));
    });
  });

  describe('the subscription lifecycle', () => {
    const record = (originalTransactionId: string) => m.get(RailSubscriptionsRepository).find(sandbox(), 'ios_store', originalTransactionId);
    /** This month's refunds in USD, net of reversals, as the revenue figures read the ledger. */
    const refundsCents = async (): Promise<number> => {
      const { refundsCents: cents } = await m.get(RevenueReadsService).figures(sandbox(), 'USD', m.clock.nowMs());
      expect(typeof cents).toBe('number');
      return cents as number;
    };

    it('a free trial is trialing until its end; a refund ends access at once and goes into the ledger; its reversal restores it', async () => {
      const tx = transaction({ offerType: 1, offerDiscountType: 'FREE_TRIAL', price: 0, currency: 'USD' });
      const trial = await notify({ type: 'SUBSCRIBED', subtype: 'INITIAL_BUY', tx });
      expect(trial.decision).toBe('applied');
      const customerId = trial.serviceCustomerId!;
      const refundsBefore = await refundsCents();
      expect((await record(tx.originalTransactionId))?.subscription).toEqual(
        expect.objectContaining({ state: 'trialing', periodType: 'trial', offer: { type: 'introductory', id: null, discount: 'free_trial' } }),
      );
      expect(await activeKeys(customerId)).toEqual(['cloud_sync', 'pro_access']);

      const paid = { ...tx, transactionId: newTransactionId(), offerType: undefined, offerDiscountType: undefined, price: 9990, signedDate: nowMs() + 1 };
      expect((await notify({ type: 'DID_RENEW', tx: paid, signedDate: nowMs() + 1 })).decision).toBe('applied');
      expect((await record(tx.originalTransactionId))?.subscription).toEqual(
        expect.objectContaining({ state: 'active', periodType: 'normal', price: { amountMicros: 9_990_000, currency: 'USD' } }),
      );

      const refunded = { ...paid, revocationDate: nowMs() + 2, revocationReason: 0, signedDate: nowMs() + 2 };
      expect((await notify({ type: 'REFUND', tx: refunded, signedDate: nowMs() + 2 })).decision).toBe('applied');
      expect((await record(tx.originalTransactionId))?.subscription).toEqual(expect.objectContaining({ state: 'refunded', isActive: false }));
      expect(await activeKeys(customerId)).toEqual([]);
      expect(await refundsCents()).toBe(refundsBefore + 999);

      const reversed = { ...paid, signedDate: nowMs() + 3 };
      expect((await notify({ type: 'REFUND_REVERSED', tx: reversed, signedDate: nowMs() + 3 })).decision).toBe('applied');
      expect((await record(tx.originalTransactionId))?.subscription).toEqual(expect.objectContaining({ state: 'active', isActive: true }));
      expect(await activeKeys(customerId)).toEqual(['cloud_sync', 'pro_access']);
      expect(await refundsCents()).toBe(refundsBefore);
    });
  });

  describe('one model with purchase sync', () => {
    it('a synced purchase and its notifications converge on one customer and one record', async () => {
      const appAccountToken = randomUUID();
      const identified = await identify(appAccountToken);
      const tx = transaction({ appAccountToken });
      const sync = await m
        .get(PurchaseSyncService)
        .sync(m.newAuth(sandbox(), { platform: 'ios' }), { rail: 'ios_store', signedTransactionInfo: signStoreJws(chain, tx) } as Parameters<
          PurchaseSyncService['sync']
        >[1]);
      expect(sync.serviceCustomerId).toBe(identified);
      const refund = await notify({ type: 'REFUND', tx: { ...tx, revocationDate: nowMs() }, signedDate: nowMs() + 5 });
      expect(refund).toEqual(expect.objectContaining({ decision: 'applied', serviceCustomerId: identified }));
      expect(await activeKeys(identified)).toEqual([]);
      // One record: the sandbox one the purchase made, none elsewhere.
      const records = m.get(RailSubscriptionsRepository);
      expect(await records.find(sandbox(), 'ios_store', tx.originalTransactionId)).toEqual(expect.objectContaining({ customerId: identified }));
      expect(await records.find(testScope(projectId, 'production'), 'ios_store', tx.originalTransactionId)).toBeNull();
    });

    it('a notification binds through the app account token like purchase sync', async () => {
      const appAccountToken = randomUUID();
      const identified = await identify(appAccountToken);
      expect((await notify({ type: 'SUBSCRIBED', tx: transaction({ appAccountToken }) })).serviceCustomerId).toBe(identified);
      const shared = await notify({ type: 'SUBSCRIBED', tx: transaction({ appAccountToken, inAppOwnershipType: 'FAMILY_SHARED' }) });
      expect(shared.serviceCustomerId).not.toBe(identified);
    });
  });
});
