import { Inject, Injectable } from '@nestjs/common';
import {
  type JWSRenewalInfoDecodedPayload,
  type JWSTransactionDecodedPayload,
  VerificationException,
  VerificationStatus,
} from '@apple/app-store-server-library';
import { APP_LOGGER, ApiError, type AppLogger, Clock, type Env, type TenantScope, TenantScopes } from '#platform';
import { ProductCatalog } from '#entitlements';
import { type KnownHolders, RailCustomerResolver } from '../customers/rail-customer-resolver.service.js';
import { RAIL_ALIAS_TYPES, type RailSubscriptionRecord } from '../model/rail-model.js';
import { type RailEventContext, type RailStateChange, RailStateApplier } from '../model/rail-state-applier.service.js';
import { RailRevenueFeed } from '../model/rail-revenue-feed.service.js';
import { iosMoneyReturnOf, recordAccessOf } from '../model/rail-record-access.js';
import { type IosLifecycleInput, type IosReadInput, deriveIosLifecycle, deriveIosRead } from '../lifecycle/ios-lifecycle.js';
import type { LifecycleResult } from '../lifecycle/lifecycle-outcome.js';
import type { Subscription } from '../lifecycle/subscription.js';
import { subscriptionOfRecord } from '../subscriptions/subscription-reads.service.js';
import { NotificationProcessor, type NotificationOutcome } from '../notifications/notification-processor.service.js';
import type { RailNotificationView } from '../notifications/rail-notification.view.js';
import type { RailSettingsRecord } from '../model/rail-settings.repository.js';
import { WebhookGate } from '../webhooks/webhook-gate.service.js';
import { RailFieldError } from '../model/rail-bounds.js';
import { type IosNotificationState, checkNotificationBounds, checkRenewalBounds, stateOfNotification } from './ios-notifications.js';
import { iosPayment, iosPriceLines } from '../model/rail-prices.js';
import { type StoreTransaction, checkTransactionBounds, envOfStoreEnvironment, isFamilyShared } from './ios-store-rules.js';
import type { IosStoreSettings } from './ios-store-settings.js';
import { IosStoreVerifier, StoreVerificationError, describeVerificationFailure } from './ios-store-verifier.service.js';
import { RefundRequests } from '../refunds/refund-requests.service.js';

const RAIL = 'ios_store' as const;

/** What moves the subscription object: a notification, or a read of the App Store (or a purchase sync). */
export type IosLifecycleSource = { notification: IosLifecycleInput; read?: never } | { read: IosReadInput; notification?: never };
/** The verifier's reason when chain and signature held but the bundle id (or app Apple id) is another app's. */
const OTHER_APP = describeVerificationFailure(new VerificationException(VerificationStatus.INVALID_APP_IDENTIFIER));

interface DecodedNotification {
  notificationType: string;
  subtype?: string;
  notificationUUID: string;
  signedDate: number;
  data?: { environment?: string; bundleId?: string; signedTransactionInfo?: string; signedRenewalInfo?: string };
}

function decodeUnverified(jws: string): Record<string, unknown> | null {
  try {
    const payload = JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return typeof payload === 'object' && payload !== null ? payload : null;
  } catch {
    return null;
  }
}

function asNotification(payload: unknown): DecodedNotification | null {
  const p = payload as Partial<DecodedNotification> | null;
  if (
    !p ||
    typeof p.notificationType !== 'string' ||
    typeof p.notificationUUID !== 'string' ||
    p.notificationUUID.length === 0 ||
    typeof p.signedDate !== 'number'
  ) {
    return null;
  }
  return p as DecodedNotification;
}

/** Runs a bounds check of rail-bounds.ts; a field out of bounds is 400 invalid_param_value naming it. */
function bounded(check: () => void): void {
  try {
    check();
  } catch (err) {
    if (err instanceof RailFieldError) throw ApiError.invalidParam(err.message);
    throw err;
  }
}

/**
 * `POST /v1/webhooks/ios_store/{projectId}`: App Store Server Notifications V2. The
 * `signedPayload` is verified like purchase sync (the project's trusted roots, marker OIDs,
 * signature, bundle id; production then sandbox); the transaction and renewal inside are
 * applied through the shared rail model.
 */
@Injectable()
export class IosWebhookService {
  constructor(
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    private readonly gate: WebhookGate,
    private readonly verifier: IosStoreVerifier,
    private readonly processor: NotificationProcessor,
    private readonly applier: RailStateApplier,
    private readonly customers: RailCustomerResolver,
    private readonly catalog: ProductCatalog,
    private readonly clock: Clock,
    private readonly revenue: RailRevenueFeed,
    private readonly refunds: RefundRequests,
  ) {}

  /** `settings`: the project's iOS rail, loaded by the webhook gate (404 already answered there). */
  async receive(projectId: string, settings: RailSettingsRecord<IosStoreSettings>, rawBody: Buffer, requestId: string): Promise<RailNotificationView> {
    const receivedAtMs = this.clock.nowMs();
    const body = this.gate.jsonObject(rawBody);
    if (typeof body.signedPayload !== 'string' || body.signedPayload.length === 0) throw ApiError.invalidParam('signedPayload must be a string');
    const signedPayload = body.signedPayload;

    let env: Env;
    let payload: unknown;
    let otherApp = false;
    try {
      const verified = await this.verifier.verifyNotification(projectId, settings, signedPayload);
      env = verified.env;
      payload = verified.payload;
    } catch (err) {
      if (!(err instanceof StoreVerificationError)) throw err;
      if (err.reasons.production !== OTHER_APP && err.reasons.sandbox !== OTHER_APP) {
        throw this.gate.invalidSignature(projectId, RAIL, `signedPayload: ${err.message}`, requestId);
      }
      // Chain and signature held: an authentic notification of another app.
      otherApp = true;
      payload = decodeUnverified(signedPayload);
      env = envOfStoreEnvironment((payload as DecodedNotification | null)?.data?.environment);
    }
    const notification = asNotification(payload);
    if (!notification) throw ApiError.invalidParam('signedPayload is not an App Store Server Notification V2 (notificationType, notificationUUID, signedDate)');
    bounded(() => checkNotificationBounds(notification));
    const scope: TenantScope = TenantScopes.ofVerifiedRailPayload(projectId, env);
    const previous = await this.processor.previousAnswer(projectId, RAIL, notification.notificationUUID);
    if (previous) return previous;

    const context: RailEventContext = {
      eventType: notification.notificationType,
      notificationId: notification.notificationUUID,
      signatureVerified: true,
      reconciledWithProvider: false,
      rawEventReceivedAt: receivedAtMs,
      actor: `rail:${RAIL}`,
      requestId,
      details: notification.subtype ? { subtype: notification.subtype } : {},
    };
    const transaction = otherApp ? null : await this.transactionOf(projectId, settings, env, notification, requestId);
    const renewal = otherApp ? null : await this.renewalOf(projectId, settings, env, notification, requestId);
    const base = { scope, rail: RAIL, notificationId: notification.notificationUUID, eventType: notification.notificationType, receivedAtMs };
    return this.processor.process(base, async () => {
      if (otherApp)
        return this.applier.record(
          scope,
          {
            rail: RAIL,
            customerId: null,
            decision: 'rejected',
            reason: `Notification for another app (bundle id ${notification.data?.bundleId ?? 'unknown'})`,
          },
          context,
        );
      if (!transaction)
        return this.applier.record(
          scope,
          { rail: RAIL, customerId: null, decision: 'no_op', reason: `${notification.notificationType} carries no transaction` },
          context,
        );
      return this.apply(scope, notification, transaction, renewal, context);
    });
  }

  /** The signed transaction inside, verified in the notification's environment (failure: invalid_signature). */
  private async transactionOf(
    projectId: string,
    settings: RailSettingsRecord<IosStoreSettings>,
    env: Env,
    notification: DecodedNotification,
    requestId: string,
  ): Promise<StoreTransaction | null> {
    const jws = notification.data?.signedTransactionInfo;
    if (!jws) return null;
    let transaction: StoreTransaction;
    try {
      transaction = (await this.verifier.verifyTransactionIn(projectId, settings, env, jws)) as StoreTransaction;
    } catch (err) {
      throw this.gate.invalidSignature(projectId, RAIL, `signedTransactionInfo: ${describeVerificationFailure(err)}`, requestId);
    }
    for (const field of ['transactionId', 'originalTransactionId', 'productId'] as const) {
      if (typeof transaction[field] !== 'string' || (transaction[field] as string).length === 0) {
        throw ApiError.invalidParam(`signedTransactionInfo: the decoded transaction has no usable ${field}`);
      }
    }
    bounded(() => checkTransactionBounds(transaction, 'signedTransactionInfo'));
    return transaction;
  }

  /** The signed renewal info, when present and verified; a failure is logged, not fatal. */
  private async renewalOf(
    projectId: string,
    settings: RailSettingsRecord<IosStoreSettings>,
    env: Env,
    notification: DecodedNotification,
    requestId: string,
  ): Promise<JWSRenewalInfoDecodedPayload | null> {
    const jws = notification.data?.signedRenewalInfo;
    if (!jws) return null;
    let renewal: JWSRenewalInfoDecodedPayload;
    try {
      renewal = await this.verifier.verifyRenewalInfo(projectId, settings, env, jws);
    } catch (err) {
      this.logger.warn(
        { requestId, projectId, rail: RAIL, reason: describeVerificationFailure(err) },
        'store notification: signedRenewalInfo failed verification; ignored',
      );
      return null;
    }
    bounded(() => checkRenewalBounds(renewal));
    return renewal;
  }

  private async apply(
    scope: TenantScope,
    notification: DecodedNotification,
    transaction: StoreTransaction,
    renewal: JWSRenewalInfoDecodedPayload | null,
    context: RailEventContext,
  ): Promise<NotificationOutcome> {
    const node = { type: RAIL_ALIAS_TYPES.iosOriginalTransactionId, value: transaction.originalTransactionId as string };
    const state = stateOfNotification(notification, transaction, renewal);
    const lifecycle: IosLifecycleInput = {
      notificationType: notification.notificationType,
      subtype: notification.subtype ?? null,
      notificationUUID: notification.notificationUUID,
      transaction: transaction as JWSTransactionDecodedPayload,
      renewalInfo: renewal,
    };
    // The newest rail time wins: the signedDate of the outermost signed payload (the notification's).
    return this.applyTransactionState(scope, transaction, state, notification.signedDate, context, undefined, { notification: lifecycle }, () =>
      this.customers.findByAlias(scope, node),
    );
  }

  /** The stored subscription object, or (a record applied before objects were stored) the one its record knows. */
  private previousOf(scope: TenantScope, record: RailSubscriptionRecord | null, keys: readonly string[]): Subscription | null {
    if (!record) return null;
    return record.subscription ?? subscriptionOfRecord(record, keys, scope.env, Math.floor(this.clock.nowMs() / 1000));
  }

  private derive(previous: Subscription | null, source: IosLifecycleSource, railTimeMs: number, productId: string, keys: string[]): LifecycleResult {
    const ctx = { nowMs: this.clock.nowMs(), railTimeMs, entitlementKeysOf: (product: string) => (product === productId ? keys : []) };
    try {
      return source.notification ? deriveIosLifecycle(previous, source.notification, ctx) : deriveIosRead(previous, source.read, ctx);
    } catch (err) {
      if (err instanceof RailFieldError) throw ApiError.invalidParam(err.message);
      throw err;
    }
  }

  /**
   * Applies the state a verified transaction stands for (from a notification, or read from the
   * App Store Server API) with `railTimeMs` as its rail time; the product must be in the
   * catalogue (else `rejected`). `source` moves the subscription object (a notification's or a
   * read's lifecycle), and access follows it. Writes one audit entry.
   */
  async applyTransactionState(
    scope: TenantScope,
    transaction: StoreTransaction,
    state: IosNotificationState | null,
    railTimeMs: number,
    context: RailEventContext,
    read?: { holders: KnownHolders },
    source?: IosLifecycleSource,
    holderOf?: () => Promise<string | null>,
  ): Promise<NotificationOutcome> {
    const notification = source?.notification;
    const originalTransactionId = transaction.originalTransactionId as string;
    const productId = transaction.productId as string;
    const holders = read?.holders ?? {};
    const keys = await this.catalog.entitlementKeysFor(scope.projectId, RAIL, productId);
    if (keys.length === 0) {
      const holder = await this.customers.findByAlias(scope, { type: RAIL_ALIAS_TYPES.iosOriginalTransactionId, value: originalTransactionId }, holders);
      return this.applier.record(
        scope,
        { rail: RAIL, customerId: holder, decision: 'rejected', reason: `Product ${productId} is not in the project's catalogue for ${RAIL}` },
        context,
      );
    }
    // A notification moves the subscription object (lifecycle), and access follows its state;
    // the record's own state table stands where the lifecycle places nothing.
    let result: LifecycleResult | null = null;
    let record: RailSubscriptionRecord | null | undefined;
    if (source) {
      await this.applier.serializeSubscription(scope, RAIL, originalTransactionId);
      record = await this.applier.lockRecord(scope, RAIL, originalTransactionId);
      const previous = this.previousOf(scope, record, keys);
      result = this.derive(previous, source, railTimeMs, productId, keys);
    }
    const subscription = result?.subscription ?? null;
    if (!state && (!subscription || result?.decision !== 'applied')) {
      const holder = holderOf ? await holderOf() : null;
      return this.applier.record(scope, { rail: RAIL, customerId: holder, decision: 'no_op', reason: `${context.eventType} changes no entitlement` }, context);
    }
    let access: Pick<RailStateChange, 'state' | 'endedBy' | 'validUntil' | 'revenueState' | 'lifecycle'> = state
      ? { state: state.state, endedBy: state.endedBy, validUntil: state.validUntil }
      : { state: 'inactive', validUntil: null };
    if (subscription && result) {
      const follows = recordAccessOf(subscription, [{ productId, validUntil: subscription.currentPeriodEndsAt }]);
      access = {
        state: follows.state,
        endedBy: follows.endedBy,
        validUntil: follows.validUntil,
        revenueState: follows.revenueState,
        lifecycle: { subscription, events: result.events, decision: result.decision, railEventId: notification?.notificationUUID ?? null },
      };
    }
    const customerId = await this.customers.iosPurchaseCustomer(scope, transaction, null, holders);
    const applied = await this.applier.apply(
      scope,
      {
        rail: RAIL,
        subscriptionId: originalTransactionId,
        customerId,
        productId,
        ...access,
        railTimeMs,
        rawStatus: state?.rawStatus ?? context.eventType + (notification?.subtype ? `/${notification.subtype}` : ''),
        price: iosPriceLines(transaction),
        payment: iosPayment(transaction),
      },
      { ...context, transactionId: transaction.transactionId ?? null, details: { ...context.details, familyShared: isFamilyShared(transaction) } },
      {
        catalogueKeys: new Map([[productId, keys]]),
        onlyChanges: read !== undefined,
        subscriptionSerialized: source !== undefined,
        ...(record !== undefined ? { lockedRecord: record } : {}),
      },
    );
    const owner = applied.subscription?.customerId ?? customerId;
    // A refund request (CONSUMPTION_REQUEST) is recorded once, whatever the order of the rail's times.
    if (result?.refundRequest && applied.decision !== 'rejected') await this.refunds.record(scope, result.refundRequest, owner);
    if (result && applied.decision === 'applied') {
      for (const fact of result.ledger) {
        const money = iosMoneyReturnOf(fact, notification?.notificationUUID ?? '', originalTransactionId);
        if (money) await this.revenue.returned(scope, RAIL, owner, money);
      }
    }
    return { decision: applied.decision, customerId: owner, auditEventId: applied.auditEventId };
  }
}
