import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, type AppLogger, ApiError, Clock, Sql, type TenantScope } from '#platform';
import type { AuthContext } from '#keys';
import { RailCustomerResolver } from '../customers/rail-customer-resolver.service.js';
import { EntitlementReadService, ProductCatalog } from '#entitlements';
import type { JWSRenewalInfoDecodedPayload, JWSTransactionDecodedPayload } from '@apple/app-store-server-library';
import { deriveIosRead } from '../lifecycle/ios-lifecycle.js';
import { checkRenewalBounds } from '../ios/ios-notifications.js';
import { iosMoneyReturnOf, recordAccessOf } from '../model/rail-record-access.js';
import { RailRevenueFeed } from '../model/rail-revenue-feed.service.js';
import type { LifecycleResult } from '../lifecycle/lifecycle-outcome.js';
import { subscriptionOfRecord } from '../subscriptions/subscription-reads.service.js';
import { RailFieldError } from '../model/rail-bounds.js';
import { iosPayment, iosPriceLines } from '../model/rail-prices.js';
import { type StoreTransaction, checkTransactionBounds, isFamilyShared, stateOfTransaction } from '../ios/ios-store-rules.js';
import type { IosStoreSettings } from '../ios/ios-store-settings.js';
import { IosStoreVerifier, StoreVerificationError } from '../ios/ios-store-verifier.service.js';
import type { PurchaseRail } from '../model/rail-model.js';
import { RailSettingsRepository } from '../model/rail-settings.repository.js';
import { type RailStateChange, RailStateApplier } from '../model/rail-state-applier.service.js';
import { RailSubscriptionsRepository } from '../model/rail-subscriptions.repository.js';
import type { PurchaseResultView, PurchaseSyncDto } from './purchase-sync.dto.js';

/** `rail` of the body: `apple` is what field clients send for the iOS store. */
export function purchaseSyncRail(rail: string): 'ios_store' {
  if (rail === 'ios_store' || rail === 'apple') return 'ios_store';
  if (rail === 'card_payments' || rail === 'android_store') {
    throw ApiError.invalidParam(
      `rail: ${rail} purchases are not synced here; the service reads them from the rail's notifications at POST /v1/webhooks/${rail}/{projectId}`,
    );
  }
  throw ApiError.invalidParam('rail: must be ios_store (or apple)');
}

/**
 * The de-duplication id of a transaction: its transactionId, and `<transactionId>:revoked`
 * for its revoked version (the store re-signs the same transaction with a revocationDate on
 * a refund), so a re-send changes nothing but the revocation of a known purchase applies once.
 */
export function transactionDedupId(transactionId: string, state: { endedBy?: 'revoked' }): string {
  return state.endedBy === 'revoked' ? `${transactionId}:revoked` : transactionId;
}

/** A decoded transaction with the ids the rail needs. */
interface UsableTransaction extends StoreTransaction {
  transactionId: string;
  originalTransactionId: string;
  productId: string;
  signedDate: number;
}

function usable(transaction: StoreTransaction): UsableTransaction {
  for (const field of ['transactionId', 'originalTransactionId', 'productId'] as const) {
    const value = transaction[field];
    if (typeof value !== 'string' || value.length === 0 || value.length > 200) {
      throw ApiError.invalidParam(`signedTransactionInfo: the decoded transaction has no usable ${field}`);
    }
  }
  if (typeof transaction.signedDate !== 'number') throw ApiError.invalidParam('signedTransactionInfo: the decoded transaction has no signedDate');
  try {
    checkTransactionBounds(transaction, 'signedTransactionInfo');
  } catch (err) {
    if (err instanceof RailFieldError) throw ApiError.invalidParam(err.message);
    throw err;
  }
  return transaction as UsableTransaction;
}

/**
 * `POST /v1/purchases/sync`: verifies a signed iOS transaction, resolves whose purchase it
 * is through the alias graph, and applies it through the shared rail model, all in one
 * database transaction (a re-sent transactionId changes nothing).
 */
@Injectable()
export class PurchaseSyncService {
  constructor(
    private readonly sql: Sql,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    private readonly clock: Clock,
    private readonly settings: RailSettingsRepository,
    private readonly verifier: IosStoreVerifier,
    private readonly applier: RailStateApplier,
    private readonly subscriptions: RailSubscriptionsRepository,
    private readonly customers: RailCustomerResolver,
    private readonly reads: EntitlementReadService,
    private readonly catalog: ProductCatalog,
    private readonly revenue: RailRevenueFeed,
  ) {}

  async sync(auth: AuthContext, body: PurchaseSyncDto): Promise<PurchaseResultView> {
    const receivedAt = this.clock.nowMs();
    const rail = purchaseSyncRail(body.rail);
    const settings = await this.settings.find<IosStoreSettings>(auth, rail);
    if (!settings?.enabled) {
      throw ApiError.invalidParam('rail: the iOS store rail is not configured for this project (operator: PUT /admin/v1/projects/{projectId}/rails/ios_store)');
    }

    let verified;
    try {
      verified = await this.verifier.verifyTransaction(auth.projectId, settings, body.signedTransactionInfo);
    } catch (err) {
      if (!(err instanceof StoreVerificationError)) throw err;
      this.logger.info({ projectId: auth.projectId, requestId: auth.requestId, reasons: err.reasons }, 'purchase sync: signed transaction failed verification');
      throw ApiError.authentication(
        'invalid_api_key',
        'signedTransactionInfo failed verification under both the production and the sandbox environment (the code is overloaded: the signed transaction, not the API key, was refused)',
      );
    }
    if (verified.env !== auth.env) {
      throw ApiError.permission('env_mismatch', `The signed transaction belongs to the ${verified.env} environment; this key is for ${auth.env}`);
    }
    const transaction = usable(verified.payload as StoreTransaction);
    const verifiedRenewal = body.signedRenewalInfo ? await this.renewalInfo(auth, settings, verified.env, body.signedRenewalInfo) : null;
    // Renewal info of another subscription says nothing about this one.
    const renewal = verifiedRenewal?.originalTransactionId === transaction.originalTransactionId ? verifiedRenewal : null;

    const customerId = await this.sql.transaction(() => this.apply(auth, rail, transaction, renewal, body, receivedAt), { retry: true });
    return {
      object: 'purchase_result',
      serviceCustomerId: customerId,
      crossdeckCustomerId: customerId,
      env: auth.env,
      entitlements: await this.reads.listActive(auth, customerId),
    };
  }

  /** The whole effect, in one transaction; returns the customer the purchase belongs to. */
  private async apply(
    auth: AuthContext,
    rail: PurchaseRail,
    transaction: UsableTransaction,
    renewal: JWSRenewalInfoDecodedPayload | null,
    body: PurchaseSyncDto,
    receivedAt: number,
  ): Promise<string> {
    const scope: TenantScope = auth;
    // Purchases of one original transaction (renewals, re-sends, concurrent duplicates) run one at a time.
    await this.subscriptions.serialize(scope, rail, transaction.originalTransactionId);
    const state = stateOfTransaction(transaction);
    const dedupId = transactionDedupId(transaction.transactionId, state);
    const seen = await this.subscriptions.findTransaction(scope, rail, dedupId);
    if (seen) return seen.customerId;

    // Whose purchase it is: docs/rails.md.
    const customerId = await this.customers.iosPurchaseCustomer(scope, transaction, body.appAccountToken);
    // The transaction moves the subscription object as a read of the store would; access follows it.
    const keys = await this.catalog.entitlementKeysFor(scope.projectId, rail, transaction.productId);
    const record = await this.applier.lockRecord(scope, rail, transaction.originalTransactionId);
    let access: Pick<RailStateChange, 'state' | 'endedBy' | 'validUntil' | 'revenueState' | 'lifecycle'> = {
      state: state.state,
      endedBy: state.endedBy,
      validUntil: state.validUntil,
    };
    let derived: LifecycleResult | null = null;
    if (keys.length > 0) {
      const nowMs = this.clock.nowMs();
      const previous = record ? (record.subscription ?? subscriptionOfRecord(record, keys, scope.env, Math.floor(nowMs / 1000))) : null;
      try {
        derived = deriveIosRead(
          previous,
          { status: null, transaction: transaction as JWSTransactionDecodedPayload, renewalInfo: renewal, recordedType: 'purchase_sync' },
          { nowMs, railTimeMs: transaction.signedDate, entitlementKeysOf: (productId) => (productId === transaction.productId ? keys : []) },
        );
      } catch (err) {
        if (err instanceof RailFieldError) throw ApiError.invalidParam(err.message);
        throw err;
      }
      if (derived.subscription) {
        const follows = recordAccessOf(derived.subscription, [{ productId: transaction.productId, validUntil: derived.subscription.currentPeriodEndsAt }]);
        access = {
          state: follows.state,
          endedBy: follows.endedBy,
          validUntil: follows.validUntil,
          revenueState: follows.revenueState,
          lifecycle: { subscription: derived.subscription, events: derived.events, decision: derived.decision, railEventId: null },
        };
      }
    }
    const result = await this.applier.apply(
      scope,
      {
        rail,
        subscriptionId: transaction.originalTransactionId,
        customerId,
        productId: transaction.productId,
        ...access,
        railTimeMs: transaction.signedDate,
        rawStatus: state.rawStatus,
        price: iosPriceLines(transaction),
        payment: iosPayment(transaction),
      },
      {
        eventType: 'purchase_sync',
        transactionId: transaction.transactionId,
        signatureVerified: true,
        reconciledWithProvider: false,
        rawEventReceivedAt: receivedAt,
        actor: `api_key:${auth.keyId}`,
        requestId: auth.requestId,
        details: { familyShared: isFamilyShared(transaction), transactionType: transaction.type ?? null },
      },
      { catalogueKeys: new Map([[transaction.productId, keys]]), subscriptionSerialized: true, lockedRecord: record },
    );
    // A refund the sync finds first (a revoked transaction) goes into the ledger as the store's notification would book it.
    if (derived && result.decision === 'applied') {
      const owner = result.subscription?.customerId ?? customerId;
      for (const fact of derived.ledger) {
        const money = iosMoneyReturnOf(fact, transaction.transactionId, transaction.originalTransactionId);
        if (money) await this.revenue.returned(scope, rail, owner, money);
      }
    }
    // A rejected purchase (product not in the catalogue) is not recorded: a re-send after the
    // catalogue is fixed applies it.
    if (result.decision !== 'rejected') {
      await this.subscriptions.claimTransaction(
        scope,
        {
          rail,
          transactionId: dedupId,
          subscriptionId: transaction.originalTransactionId,
          customerId,
          decision: result.decision,
          auditEventId: result.auditEventId,
        },
        this.clock.now(),
      );
    }
    return customerId;
  }

  /** The verified renewal info (its fields within bounds), or null when it does not verify (logged, ignored). */
  private async renewalInfo(
    auth: AuthContext,
    settings: Parameters<IosStoreVerifier['verifyRenewalInfo']>[1],
    env: AuthContext['env'],
    jws: string,
  ): Promise<JWSRenewalInfoDecodedPayload | null> {
    let renewal: JWSRenewalInfoDecodedPayload;
    try {
      renewal = await this.verifier.verifyRenewalInfo(auth.projectId, settings, env, jws);
    } catch (err) {
      this.logger.warn(
        { projectId: auth.projectId, requestId: auth.requestId, reason: err instanceof Error ? err.message : String(err) },
        'purchase sync: signedRenewalInfo failed verification; ignored',
      );
      return null;
    }
    try {
      checkRenewalBounds(renewal);
    } catch (err) {
      if (err instanceof RailFieldError) throw ApiError.invalidParam(err.message);
      throw err;
    }
    return renewal;
  }
}
