import { randomUUID } from 'node:crypto';
import type { PurchaseResultView } from '../../libs/rails/src/purchases/purchase-sync.dto.js';
import { AuditJournal } from '#audit';
import { CustomerConsole, IdentifyService } from '#identity';
import { StoreNotificationsModule } from '#rails';
import { EntitlementQueries } from '../../libs/entitlements/src/reads/entitlement-queries.service.js';
import { RailsOperatorService } from '../../libs/rails/src/operator/rails-operator.service.js';
import { PurchaseSyncService } from '../../libs/rails/src/purchases/purchase-sync.service.js';
import { IOS_TEST_PRODUCTS } from '../support/ios-rail.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';
import { type StoreChain, type TransactionFields, createStoreChain, signStoreJws, transactionPayload } from '../support/store-signing.js';

const BUNDLE = 'com.example.purchase-sync.medium';
const HOUR_MS = 3_600_000;

type SyncBody = Parameters<PurchaseSyncService['sync']>[1];

/**
 * Purchase sync's rules on the rails' modules alone (no HTTP): a re-sent or concurrent
 * transaction applies once, renewals and revocations of one original transaction, whose
 * purchase it is (app account token, family sharing), lifetime purchases, the catalogue gate
 * and expiry on the service clock. Keys, paths, verification answers, rate buckets and the
 * idempotency headers stay in test/e2e/purchases.e2e-spec.ts.
 */
describe('medium: purchase sync on the iOS store rail', () => {
  let m: MediumContext;
  let chain: StoreChain;
  let projectId: string;
  const sandbox = () => testScope(projectId, 'sandbox');
  const nowMs = () => m.clock.nowMs();
  /** The caller a publishable key of the project's iOS app would yield (one per request). */
  const caller = () => m.newAuth(sandbox(), { platform: 'ios' });

  beforeAll(async () => {
    m = await createMediumContext({ modules: [StoreNotificationsModule] });
    chain = createStoreChain();
    projectId = await m.newProject();
    await m.get(RailsOperatorService).putIosStore(projectId, { bundleId: BUNDLE, trustedRootCertificates: [chain.rootPem] });
    await m.newCatalogue(sandbox(), IOS_TEST_PRODUCTS as Parameters<MediumContext['newCatalogue']>[1]);
  });
  afterAll(() => m?.close());

  /** A signed transaction of the project's app (sandbox, auto-renewable, one hour left, unless overridden). */
  function signed(fields: Partial<TransactionFields> = {}): { jws: string; payload: TransactionFields } {
    const payload = transactionPayload({ bundleId: BUNDLE, productId: 'pro.monthly', signedDate: nowMs(), expiresDate: nowMs() + HOUR_MS, ...fields });
    return { jws: signStoreJws(chain, payload), payload };
  }
  const sync = (body: Omit<SyncBody, 'rail'>): Promise<PurchaseResultView> =>
    m.get(PurchaseSyncService).sync(caller(), { rail: 'ios_store', ...body } as SyncBody);
  const validUntils = (result: PurchaseResultView) => result.entitlements.map((e) => e.validUntil);
  /** The server read of a customer's entitlements (the customer must be active). */
  const serverRead = async (customerId: string) => (await m.get(EntitlementQueries).serverRead(m.newAuth(sandbox(), { kind: 'secret' }), customerId)).data;
  /** The audit entries of one customer (each test's purchases make their own customer). */
  const auditEntries = async (customerId: string) => (await m.get(AuditJournal).customerTimeline(sandbox(), customerId, 100, null)).entries;
  /** Identify binding an app account token: answers the customer. */
  const identify = async (appAccountToken: string): Promise<string> =>
    (
      await m.get(IdentifyService).identify(caller(), {
        userId: `user_${randomUUID()}`,
        anonymousId: `anon_${randomUUID()}`,
        appAccountToken,
      } as Parameters<IdentifyService['identify']>[1])
    ).serviceCustomerId;

  describe('one transaction applies once', () => {
    it('a re-sent transaction changes nothing and writes no second audit entry', async () => {
      const { jws } = signed();
      const first = await sync({ signedTransactionInfo: jws });
      const second = await sync({ signedTransactionInfo: jws });
      expect(second.serviceCustomerId).toBe(first.serviceCustomerId);
      expect(second.entitlements).toEqual(first.entitlements);
      expect(await auditEntries(first.serviceCustomerId)).toEqual([expect.objectContaining({ eventType: 'purchase_sync', decision: 'applied' })]);
    });

    it('20 concurrent duplicates are applied once', async () => {
      const { jws, payload } = signed();
      const results = await Promise.all(Array.from({ length: 20 }, () => sync({ signedTransactionInfo: jws })));
      expect(results).toHaveLength(20);
      expect(new Set(results.map((r) => r.serviceCustomerId)).size).toBe(1);
      expect(await auditEntries(results[0].serviceCustomerId)).toEqual([expect.objectContaining({ eventType: 'purchase_sync', decision: 'applied' })]);
      // The original transaction id names that one customer.
      const holders = await m.get(CustomerConsole).search(sandbox(), payload.originalTransactionId, ['ios_original_transaction_id'], 10);
      expect(holders.map((h) => [h.customerId, h.matchedBy])).toEqual([[results[0].serviceCustomerId, 'rail_id']]);
    });
  });

  describe('one original transaction', () => {
    it('a renewal (new transactionId, same originalTransactionId) lands on the same customer and extends validUntil', async () => {
      const first = signed();
      const a = await sync({ signedTransactionInfo: first.jws });
      const renewedUntil = nowMs() + 30 * 24 * HOUR_MS;
      const renewal = signed({ originalTransactionId: first.payload.originalTransactionId, signedDate: nowMs() + 1000, expiresDate: renewedUntil });
      const b = await sync({ signedTransactionInfo: renewal.jws });
      expect(b.serviceCustomerId).toBe(a.serviceCustomerId);
      expect(validUntils(b)).toEqual([Math.floor(renewedUntil / 1000), Math.floor(renewedUntil / 1000)]);
      // An older state re-sent afterwards (another transaction of the same subscription, older signedDate) changes nothing.
      const stale = signed({ originalTransactionId: first.payload.originalTransactionId, signedDate: nowMs() - 60_000, expiresDate: nowMs() + 60_000 });
      const c = await sync({ signedTransactionInfo: stale.jws });
      expect(validUntils(c)).toEqual([Math.floor(renewedUntil / 1000), Math.floor(renewedUntil / 1000)]);
    });

    it('revocation turns the entitlements off', async () => {
      const first = signed();
      const a = await sync({ signedTransactionInfo: first.jws });
      expect(a.entitlements).toHaveLength(2);
      const revoked = signed({
        originalTransactionId: first.payload.originalTransactionId,
        transactionId: first.payload.transactionId, // the store re-signs the same transaction with a revocationDate
        signedDate: nowMs() + 1000,
        revocationDate: nowMs(),
        revocationReason: 0,
      });
      const b = await sync({ signedTransactionInfo: revoked.jws });
      expect(b.serviceCustomerId).toBe(a.serviceCustomerId);
      expect(b.entitlements).toEqual([]);
      // Re-sending either version changes nothing more.
      expect((await sync({ signedTransactionInfo: revoked.jws })).entitlements).toEqual([]);
      expect((await sync({ signedTransactionInfo: first.jws })).entitlements).toEqual([]);
      expect((await auditEntries(a.serviceCustomerId)).map((e) => e.decision)).toEqual(['applied', 'applied']);
    });
  });

  describe('whose purchase it is', () => {
    it('binds through the appAccountToken identify bound (signed payload or body)', async () => {
      const token = randomUUID();
      const customerId = await identify(token);
      const inPayload = await sync({ signedTransactionInfo: signed({ appAccountToken: token }).jws });
      expect(inPayload.serviceCustomerId).toBe(customerId);
      const token2 = randomUUID();
      const customer2 = await identify(token2);
      const inBody = await sync({ signedTransactionInfo: signed().jws, appAccountToken: token2.toUpperCase() });
      expect(inBody.serviceCustomerId).toBe(customer2);
      // An unknown token: a new customer.
      const unknown = await sync({ signedTransactionInfo: signed({ appAccountToken: randomUUID() }).jws });
      expect([customerId, customer2]).not.toContain(unknown.serviceCustomerId);
    });

    it('never binds a family-shared transaction to the caller', async () => {
      const token = randomUUID();
      const customerId = await identify(token);
      const result = await sync({
        signedTransactionInfo: signed({ appAccountToken: token, inAppOwnershipType: 'FAMILY_SHARED' }).jws,
        appAccountToken: token,
      });
      expect(result.serviceCustomerId).not.toBe(customerId);
      expect(result.entitlements).toHaveLength(2);
      expect(await serverRead(customerId)).toEqual([]);
    });
  });

  describe('what a purchase grants', () => {
    it('a non-consumable is lifetime', async () => {
      const result = await sync({ signedTransactionInfo: signed({ productId: 'lifetime.unlock', type: 'Non-Consumable', expiresDate: undefined }).jws });
      expect(result.entitlements).toEqual([expect.objectContaining({ key: 'lifetime_access', isActive: true, validUntil: null })]);
    });

    it('a product missing from the catalogue grants nothing (rejected, audited)', async () => {
      const { jws } = signed({ productId: 'unknown.product' });
      const result = await sync({ signedTransactionInfo: jws });
      expect(result.entitlements).toEqual([]);
      expect(await auditEntries(result.serviceCustomerId)).toEqual([expect.objectContaining({ eventType: 'purchase_sync', decision: 'rejected' })]);
    });

    it('expires with the test clock', async () => {
      const result = await sync({ signedTransactionInfo: signed({ expiresDate: nowMs() + 60_000 }).jws });
      expect(result.entitlements).toHaveLength(2);
      m.clock.advance(120);
      expect(await serverRead(result.serviceCustomerId)).toEqual([]);
    });
  });
});
