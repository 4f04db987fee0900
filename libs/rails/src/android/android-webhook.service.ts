import { timingSafeEqual, createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ApiError, Clock, type Env, Sql, type TenantScope, TenantScopes } from '#platform';
import { ProductCatalog } from '#entitlements';
import { type KnownHolders, RailCustomerResolver } from '../customers/rail-customer-resolver.service.js';
import { RailFieldError } from '../model/rail-bounds.js';
import type { androidpublisher_v3 } from '@googleapis/androidpublisher';
import { stateGivesAccess } from '../lifecycle/access.js';
import { type AndroidLifecycleInput, deriveAndroidLifecycle, latestOrderIdOf } from '../lifecycle/android-lifecycle.js';
import { type LedgerFact, type LifecycleResult, differs } from '../lifecycle/lifecycle-outcome.js';
import type { Money, Subscription } from '../lifecycle/subscription.js';
import { RAIL_ALIAS_TYPES, type RailSubscriptionRecord } from '../model/rail-model.js';
import { moneyReturnOf, recordAccessOf } from '../model/rail-record-access.js';
import { type RailPayment, RailRevenueFeed } from '../model/rail-revenue-feed.service.js';
import { type RailEventContext, type RailLifecycleChange, type RailStateChange, RailStateApplier } from '../model/rail-state-applier.service.js';
import { RailSubscriptionsRepository } from '../model/rail-subscriptions.repository.js';
import { NotificationProcessor, type NotificationOutcome } from '../notifications/notification-processor.service.js';
import type { RailNotificationView } from '../notifications/rail-notification.view.js';
import type { AndroidStoreSecrets } from '../secrets/rail-secrets.js';
import { RailSecrets } from '../secrets/rail-secrets.service.js';
import { subscriptionOfRecord } from '../subscriptions/subscription-reads.service.js';
import { WebhookGate } from '../webhooks/webhook-gate.service.js';
import {
  AndroidFormatError,
  ONE_TIME_NOTIFICATION_TYPES,
  SUBSCRIPTION_NOTIFICATION_TYPES,
  type AndroidNotification,
  checkEnvelopeBounds,
  type AndroidProductRead,
  type AndroidPurchaseState,
  type AndroidSubscriptionRead,
  parseDeveloperNotification,
  productState,
  readPushEnvelope,
  subscriptionState,
} from './android-notifications.js';
import { AndroidPublisherClient, AndroidPublisherUnavailable } from './android-publisher.client.js';
import { AndroidVoidedPurchasesRepository, type VoidedPurchase, type VoidedSource } from './android-voided-purchases.repository.js';
import type { RailSettingsRecord } from '../model/rail-settings.repository.js';

const RAIL = 'android_store' as const;

interface AndroidSettings {
  packageName?: string;
}

/** A purchase state read from the Publisher API, to apply. */
export type AndroidStateReading = Extract<Reading, { kind: 'state' }>;

/** A report that the purchase was voided (a notification, or an entry of the voided-purchases list), to record with the state. */
export interface Voiding {
  source: VoidedSource;
  /** Unix ms: the list entry's `voidedTimeMillis`, else when the service learned it. */
  voidedAtMs: number;
  orderId: string | null;
  voidedReason: number | null;
}

/**
 * The Publisher API answer a state was read from, as the subscription lifecycle reads it, with
 * the notification's own type number (null for a read without a notification).
 */
export type AndroidPurchaseRead =
  | { kind: 'subscription'; read: AndroidSubscriptionRead; notificationType: number | null }
  | { kind: 'product'; read: AndroidProductRead; productId: string; notificationType: number | null };

/** What was read for one notification: the state to apply, or a decision without a state. */
type Reading =
  | {
      kind: 'state';
      env: Env;
      purchaseToken: string;
      state: AndroidPurchaseState;
      revoked: boolean;
      reconciled: boolean;
      voiding?: Voiding;
      /** The answer read (absent: a voiding applied from the stored record alone). */
      purchase?: AndroidPurchaseRead;
    }
  | {
      kind: 'decision';
      env: Env;
      decision: 'no_op' | 'rejected';
      reason: string;
      customerId: string | null;
      /** A voided purchase the service holds no record of: recorded all the same. */
      voided?: { purchaseToken: string; voiding: Voiding };
    };

function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * `POST /v1/webhooks/android_store/{projectId}?token=…`: a Pub/Sub push of a real-time
 * developer notification. The notification only says that something changed: the purchase
 * is read from the Publisher API, acknowledged when it is not yet, and what was read is applied.
 */
@Injectable()
export class AndroidWebhookService {
  constructor(
    private readonly gate: WebhookGate,
    private readonly secrets: RailSecrets,
    private readonly publisher: AndroidPublisherClient,
    private readonly processor: NotificationProcessor,
    private readonly applier: RailStateApplier,
    private readonly customers: RailCustomerResolver,
    private readonly subscriptions: RailSubscriptionsRepository,
    private readonly catalog: ProductCatalog,
    private readonly voided: AndroidVoidedPurchasesRepository,
    private readonly revenue: RailRevenueFeed,
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  /** `settings`: the project's Android rail, loaded by the webhook gate (404 already answered there). */
  async receive(
    projectId: string,
    settings: RailSettingsRecord<AndroidSettings>,
    rawBody: Buffer,
    token: string | undefined,
    requestId: string,
  ): Promise<RailNotificationView> {
    const receivedAtMs = this.clock.nowMs();
    const envelope = readPushEnvelope(this.gate.jsonObject(rawBody));
    if (!envelope) throw ApiError.invalidParam('Not a Pub/Sub push: message.data is missing');
    const secrets = this.secrets.androidStore(projectId);
    if (!secrets) throw this.gate.invalidSignature(projectId, RAIL, 'no push token is configured for the project', requestId);
    if (!token || !sameSecret(token, secrets.pushToken)) throw this.gate.invalidSignature(projectId, RAIL, 'the push token does not match', requestId);

    let notification: AndroidNotification;
    try {
      if (!envelope.messageId) throw new AndroidFormatError('message.messageId is missing');
      checkEnvelopeBounds(envelope);
      notification = parseDeveloperNotification(envelope.data);
    } catch (err) {
      if (err instanceof AndroidFormatError) throw ApiError.invalidParam(`Not a developer notification: ${err.message}`);
      if (err instanceof RailFieldError) throw ApiError.invalidParam(err.message);
      throw err;
    }
    const messageId = envelope.messageId;
    const previous = await this.processor.previousAnswer(projectId, RAIL, messageId);
    if (previous) return previous;

    let reading: Reading;
    try {
      reading = await this.read(projectId, settings.settings.packageName ?? null, secrets, notification);
    } catch (err) {
      if (err instanceof AndroidPublisherUnavailable) throw this.gate.railUnavailable(projectId, RAIL, err.message, requestId);
      if (err instanceof RailFieldError) throw ApiError.invalidParam(err.message);
      throw err;
    }
    const scope: TenantScope = TenantScopes.ofVerifiedRailPayload(projectId, reading.env);
    const context: RailEventContext = {
      eventType: notification.eventType,
      notificationId: messageId,
      signatureVerified: true,
      reconciledWithProvider: reading.kind === 'state' && reading.reconciled,
      rawEventReceivedAt: receivedAtMs,
      actor: `rail:${RAIL}`,
      requestId,
      details: { packageName: notification.packageName, eventTimeMillis: notification.eventTimeMillis },
    };
    return this.processor.process({ scope, rail: RAIL, notificationId: messageId, eventType: notification.eventType, receivedAtMs }, () =>
      reading.kind === 'state' ? this.apply(scope, notification, reading, context) : this.recordDecision(scope, reading, context),
    );
  }

  /** A decision without a state; a voided purchase unknown to the service is still recorded, so it never gives access later. */
  private async recordDecision(scope: TenantScope, reading: Extract<Reading, { kind: 'decision' }>, context: RailEventContext): Promise<NotificationOutcome> {
    if (reading.voided) {
      // No read or record told the token's environment.
      await this.voided.record(scope, { purchaseToken: reading.voided.purchaseToken, env: null, ...voidedFields(reading.voided.voiding) }, this.clock.nowMs());
    }
    return this.applier.record(scope, { rail: RAIL, customerId: reading.customerId, decision: reading.decision, reason: reading.reason }, context);
  }

  /** Reads (and acknowledges) the purchase; AndroidPublisherUnavailable when the API cannot be read. */
  private async read(projectId: string, packageName: string | null, secrets: AndroidStoreSecrets, notification: AndroidNotification): Promise<Reading> {
    if (notification.packageName !== packageName) {
      return {
        kind: 'decision',
        env: 'production',
        decision: 'rejected',
        reason: `Notification for package ${notification.packageName}, not the project's ${packageName ?? '(none)'}`,
        customerId: null,
      };
    }
    const account = secrets.serviceAccount;
    switch (notification.kind) {
      case 'test':
        return { kind: 'decision', env: 'production', decision: 'no_op', reason: 'Test notification', customerId: null };
      case 'subscription': {
        const read = await this.publisher.getSubscription(account, packageName, notification.purchaseToken);
        const state = subscriptionState(read, notification.subscriptionId);
        if (state.needsAcknowledgement && state.productId && state.active) {
          await this.publisher.acknowledgeSubscription(account, packageName, state.productId, notification.purchaseToken);
        }
        return {
          kind: 'state',
          env: state.sandbox ? 'sandbox' : 'production',
          purchaseToken: notification.purchaseToken,
          state,
          revoked: notification.revoked,
          reconciled: true,
          ...(notification.revoked ? { voiding: this.notified(state.orderId ?? null) } : {}),
          purchase: { kind: 'subscription', read, notificationType: typeNumber(notification.eventType) },
        };
      }
      case 'one_time': {
        const read = await this.publisher.getProduct(account, packageName, notification.sku, notification.purchaseToken);
        const state = productState(read, notification.sku);
        if (state.needsAcknowledgement && state.active)
          await this.publisher.acknowledgeProduct(account, packageName, notification.sku, notification.purchaseToken);
        return {
          kind: 'state',
          env: state.sandbox ? 'sandbox' : 'production',
          purchaseToken: notification.purchaseToken,
          state,
          revoked: false,
          reconciled: true,
          purchase: { kind: 'product', read, productId: notification.sku, notificationType: typeNumber(notification.eventType, ONE_TIME_NOTIFICATION_TYPES) },
        };
      }
      case 'voided': {
        const voiding = this.notified(notification.orderId);
        if (notification.productType === 1) {
          const read = await this.publisher.getSubscription(account, packageName, notification.purchaseToken);
          const state = subscriptionState(read, null);
          return {
            kind: 'state',
            env: state.sandbox ? 'sandbox' : 'production',
            purchaseToken: notification.purchaseToken,
            state,
            revoked: true,
            reconciled: true,
            voiding,
            purchase: { kind: 'subscription', read, notificationType: null },
          };
        }
        // A voided one-time purchase names no product: the stored record of the token says which.
        for (const env of ['production', 'sandbox'] as const) {
          const record = await this.subscriptions.find(TenantScopes.ofVerifiedRailPayload(projectId, env), RAIL, notification.purchaseToken);
          if (record) {
            const state: AndroidPurchaseState = {
              productId: record.productId,
              active: false,
              validUntil: record.validUntil,
              rawStatus: 'VOIDED',
              sandbox: env === 'sandbox',
              needsAcknowledgement: false,
              obfuscatedAccountId: null,
              linkedPurchaseToken: null,
            };
            return { kind: 'state', env, purchaseToken: notification.purchaseToken, state, revoked: true, reconciled: false, voiding };
          }
        }
        return {
          kind: 'decision',
          env: 'production',
          decision: 'no_op',
          reason: 'Voided purchase unknown to the service',
          customerId: null,
          voided: { purchaseToken: notification.purchaseToken, voiding },
        };
      }
    }
  }

  /** A voiding learned from a notification now (RTDN carries no voided time). */
  private notified(orderId: string | null): Voiding {
    return { source: 'notification', voidedAtMs: this.clock.nowMs(), orderId, voidedReason: null };
  }

  /**
   * Applies a purchase state read from the Publisher API (for a notification, or by a read of
   * the rail): `event` gives the rail time and the type named with a revocation. The read moves
   * the subscription object (the Android lifecycle) and access follows its state; a payment of a
   * new period and a voiding's refund go into the revenue ledger. Writes one audit entry (two
   * when the purchase replaces another token: the old one ends, `replaced`). A voided purchase
   * token (recorded here when `reading.voiding` reports it, or earlier) is refunded whatever the
   * read says: no access since its voiding.
   */
  async apply(
    scope: TenantScope,
    notification: Pick<AndroidNotification, 'eventTimeMillis' | 'eventType'>,
    reading: AndroidStateReading,
    context: RailEventContext,
    read?: { holders: KnownHolders },
  ): Promise<NotificationOutcome> {
    const { state, purchaseToken } = reading;
    const holders = read?.holders ?? {};
    const voided = reading.voiding
      ? (await this.voided.record(scope, { purchaseToken, env: scope.env, ...voidedFields(reading.voiding) }, this.clock.nowMs())).voided
      : await this.knownVoided(scope, purchaseToken);
    const keys = state.productId ? await this.catalog.entitlementKeysFor(scope.projectId, RAIL, state.productId) : [];
    if (keys.length === 0) {
      const holder = await this.customers.findByAlias(scope, { type: RAIL_ALIAS_TYPES.androidPurchaseToken, value: purchaseToken }, holders);
      const reason = state.productId ? `Product ${state.productId} is not in the project's catalogue for ${RAIL}` : 'The purchase names no product';
      return this.applier.record(scope, { rail: RAIL, customerId: holder, decision: 'rejected', reason }, context);
    }
    const productId = state.productId as string;
    // Before the customer is resolved: resolving can fold a rail-only customer (see serializeSubscription).
    await this.applier.serializeSubscription(scope, RAIL, purchaseToken);
    const record = await this.applier.lockRecord(scope, RAIL, purchaseToken);
    // Whose purchase it is (RailCustomerResolver.androidPurchaseCustomer).
    const customerId = await this.customers.androidPurchaseCustomer(scope, purchaseToken, state, holders);
    // Revocation and voiding end entitlements at once, and for good, whatever the read state says.
    const revoked = reading.revoked || voided !== null;
    const active = state.active && !revoked;
    const voidedAt = voided ? Math.floor(voided.voidedAtMs / 1000) : Math.floor(this.clock.nowMs() / 1000);
    const railTimeMs = notification.eventTimeMillis;
    const linkedToken = reading.purchase?.kind === 'subscription' ? (reading.purchase.read.linkedPurchaseToken ?? null) : null;
    const linked = linkedToken && linkedToken !== purchaseToken ? await this.storedSubscription(scope, linkedToken) : null;
    const previous = this.previousOf(scope, record, keys);
    const orderPayment = await this.orderPaymentOf(scope, previous, reading, voided, notification.eventType);
    const result = this.derive(previous, reading, voided, notification.eventType, railTimeMs, productId, keys, linked, orderPayment);
    const subscription = result?.subscription ?? null;

    // Access follows the subscription's state; a read the lifecycle cannot place keeps the record's state table.
    let access: Pick<RailStateChange, 'productId' | 'state' | 'endedBy' | 'items' | 'validUntil' | 'revenueState' | 'lifecycle'> = {
      productId,
      state: active ? 'active' : 'inactive',
      endedBy: revoked ? 'revoked' : 'expired',
      validUntil: active ? state.validUntil : revoked ? voidedAt : state.validUntil,
    };
    let payment = androidPayment(state, active, railTimeMs);
    if (subscription && result) {
      const follows = recordAccessOf(subscription, [{ productId: subscription.productId, validUntil: subscription.currentPeriodEndsAt }]);
      access = { productId: subscription.productId, ...follows, lifecycle: this.lifecycleChange(result, record, context.notificationId ?? null) };
      payment = paymentOf(result.ledger, purchaseToken, subscription);
    }
    const applied = await this.applier.apply(
      scope,
      {
        rail: RAIL,
        subscriptionId: purchaseToken,
        customerId,
        ...access,
        railTimeMs,
        rawStatus: reading.revoked ? `${state.rawStatus} (${notification.eventType})` : voided ? `${state.rawStatus} (VOIDED)` : state.rawStatus,
        ignoreRailTime: true,
        price: state.price ?? null,
        payment,
      },
      context,
      {
        catalogueKeys: new Map([[productId, keys]]),
        // A read keeps what changes the record or the object (a price filled, auto-renew turned off) and drops the rest.
        onlyChanges: read !== undefined && access.lifecycle?.decision !== 'applied',
        subscriptionSerialized: true,
        lockedRecord: record,
      },
    );
    const owner = applied.subscription?.customerId ?? customerId;
    if (result && applied.decision !== 'rejected') await this.recordReturns(scope, owner, purchaseToken, result.ledger, context.notificationId ?? null);
    // The replaced token ends once the purchase replacing it gives access (not while its payment is pending).
    if (linkedToken && linked && subscription && stateGivesAccess(subscription.state) && applied.decision !== 'rejected')
      await this.replace(scope, linkedToken, purchaseToken, railTimeMs, context, read);
    return { decision: applied.decision, customerId: owner, auditEventId: applied.auditEventId };
  }

  /** The stored subscription object of a token (or the one its record knows), or null when the service holds none. */
  private async storedSubscription(scope: TenantScope, purchaseToken: string): Promise<Subscription | null> {
    const record = await this.subscriptions.find(scope, RAIL, purchaseToken);
    if (!record) return null;
    return this.previousOf(scope, record, await this.catalog.entitlementKeysFor(scope.projectId, RAIL, record.productId));
  }

  /** The stored subscription object, or (a record applied before objects were stored) the one its record knows. */
  private previousOf(scope: TenantScope, record: RailSubscriptionRecord | null, keys: readonly string[]): Subscription | null {
    if (!record) return null;
    return record.subscription ?? subscriptionOfRecord(record, keys, scope.env, Math.floor(this.clock.nowMs() / 1000));
  }

  /**
   * The lifecycle of one reading: a voiding reported now (a `VOIDED_PURCHASE` notification, a
   * list entry) or earlier (a token voided before the service knew it) refunds the subscription,
   * else the read moves it. A voiding of a token the service holds no object of starts from the
   * read (its price is the refund's amount), announcing only the refund. Null when there is
   * nothing to derive from (neither a stored object nor a read): the record's state table applies.
   */
  private derive(
    previous: Subscription | null,
    reading: AndroidStateReading,
    voided: VoidedPurchase | null,
    eventType: string,
    railTimeMs: number,
    productId: string,
    keys: string[],
    linked: Subscription | null,
    orderPayment: Money | null,
  ): LifecycleResult | null {
    const ctx = { nowMs: this.clock.nowMs(), railTimeMs, entitlementKeysOf: (product: string) => (product === productId ? keys : []) };
    const fromRead = (before: Subscription | null): LifecycleResult | null => {
      const purchase = reading.purchase;
      if (!purchase) return null;
      // The client's answers are the Publisher API's JSON whole; the lifecycle reads more of it than the state does.
      const input: AndroidLifecycleInput =
        purchase.kind === 'subscription'
          ? {
              kind: 'subscription',
              purchaseToken: reading.purchaseToken,
              notificationType: purchase.notificationType,
              read: purchase.read as androidpublisher_v3.Schema$SubscriptionPurchaseV2,
              linked,
              orderPayment,
            }
          : {
              kind: 'product',
              purchaseToken: reading.purchaseToken,
              productId: purchase.productId,
              notificationType: purchase.notificationType,
              read: purchase.read as androidpublisher_v3.Schema$ProductPurchase,
            };
      return deriveAndroidLifecycle(before, input, ctx);
    };
    try {
      const voidingNow = reading.voiding !== undefined && eventType === 'VOIDED_PURCHASE';
      const voidedEarlier = voided !== null && !reading.voiding && previous?.state !== 'refunded';
      // Otherwise the read moves it (a token already refunded stays so: the lifecycle changes nothing).
      if (!voided || !(voidingNow || voidedEarlier)) return fromRead(previous);
      const started = previous ? null : fromRead(null);
      const seed = previous ?? started?.subscription ?? null;
      if (!seed) return null;
      const entry = { orderId: voided.orderId, voidedReason: voided.voidedReason, voidedTimeMillis: String(voided.voidedAtMs) };
      const result = deriveAndroidLifecycle(seed, { kind: 'voided', purchaseToken: reading.purchaseToken, entry, orderPayment }, ctx);
      if (!started) return result;
      // A token first seen voided: its purchase is a payment, its voiding the refund; only the refund is announced.
      return { ...result, ledger: [...started.ledger.filter((fact) => fact.kind === 'payment'), ...result.ledger] };
    } catch (err) {
      if (err instanceof RailFieldError) throw ApiError.invalidParam(err.message);
      throw err;
    }
  }

  /**
   * A voiding or revocation of an order whose subscription states no price: what the ledger
   * recorded as paid for that order (the voided entry's order, else the read's latest order),
   * the refund's amount. Null when the subscription states a price, the order is unknown, or no
   * payment of it was recorded (the refund then has no amount and books nothing).
   */
  private async orderPaymentOf(
    scope: TenantScope,
    previous: Subscription | null,
    reading: AndroidStateReading,
    voided: VoidedPurchase | null,
    eventType: string,
  ): Promise<Money | null> {
    if (previous?.price && previous.price.amountMicros > 0) return null;
    // A token already refunded derives no refund again, unless a voiding is reported now (its fact counts once).
    const voidingNow = reading.voiding !== undefined && eventType === 'VOIDED_PURCHASE';
    if (previous?.state === 'refunded' && !voidingNow) return null;
    const revokedRead = reading.revoked && reading.purchase?.kind === 'subscription' ? reading.purchase.read : null;
    const orderId = voided?.orderId ?? (revokedRead ? latestOrderIdOf(revokedRead as androidpublisher_v3.Schema$SubscriptionPurchaseV2) : null);
    if (!orderId) return null;
    return this.revenue.recordedPayment(scope, RAIL, orderId);
  }

  /**
   * The lifecycle's part of the change. The applier counts it as a change (an answer `applied`,
   * events sent) only when the object or the events moved: a voiding seen again adds no more
   * than its ledger fact, already recorded.
   */
  private lifecycleChange(result: LifecycleResult, record: RailSubscriptionRecord | null, railEventId: string | null): RailLifecycleChange {
    const moved = result.events.length > 0 || (result.subscription !== null && differs(record?.subscription ?? null, result.subscription));
    return { subscription: result.subscription, events: result.events, decision: moved ? result.decision : 'no_op', railEventId };
  }

  /**
   * Refunds and chargebacks of a voiding into the revenue ledger, once per voided order (or token):
   * a notification and the list entry of the same voiding count once, whichever reason each names.
   */
  private async recordReturns(scope: TenantScope, customerId: string, purchaseToken: string, facts: readonly LedgerFact[], eventId: string | null) {
    for (const fact of facts) {
      const money = moneyReturnOf(fact, eventId ?? purchaseToken, purchaseToken);
      if (!money) continue;
      await this.revenue.returned(scope, RAIL, customerId, { ...money, factId: `voided:${fact.transactionId ?? purchaseToken}` });
    }
  }

  /**
   * The token a purchase replaces (`linkedPurchaseToken`) ends: at once (`replaced`), or at its
   * expiry when its line item deferred the replacement. It leaves access and revenue without an
   * event of its own: the new purchase announces the change (`subscription.product_changed`).
   */
  private async replace(
    scope: TenantScope,
    oldToken: string,
    newToken: string,
    railTimeMs: number,
    context: RailEventContext,
    read?: { holders: KnownHolders },
  ): Promise<void> {
    await this.applier.serializeSubscription(scope, RAIL, oldToken);
    const record = await this.applier.lockRecord(scope, RAIL, oldToken);
    if (!record) return;
    const keys = await this.catalog.entitlementKeysFor(scope.projectId, RAIL, record.productId);
    const previous = this.previousOf(scope, record, keys);
    const result = deriveAndroidLifecycle(
      previous,
      { kind: 'replaced', byPurchaseToken: newToken },
      { nowMs: this.clock.nowMs(), railTimeMs, entitlementKeysOf: (product) => (product === record.productId ? keys : []) },
    );
    if (result.decision === 'no_op' || !result.subscription) return;
    const subscription = result.subscription;
    const follows = recordAccessOf(subscription, [{ productId: record.productId, validUntil: subscription.currentPeriodEndsAt }]);
    await this.applier.apply(
      scope,
      {
        rail: RAIL,
        subscriptionId: oldToken,
        customerId: record.customerId,
        productId: record.productId,
        ...follows,
        railTimeMs,
        rawStatus: `${result.recordedType} (${newToken})`,
        ignoreRailTime: true,
        lifecycle: { subscription, events: [], decision: 'applied', railEventId: context.notificationId ?? null },
      },
      { ...context, details: { ...context.details, replacedBy: newToken } },
      { catalogueKeys: new Map([[record.productId, keys]]), onlyChanges: read !== undefined, subscriptionSerialized: true, lockedRecord: record },
    );
  }

  /**
   * Applies one entry of the voided-purchases list read at `readAtMs`, in a transaction of its
   * own: the token's stored subscription (either environment) is refunded at once, and the
   * token is recorded as voided even when the service holds no record of it. An entry seen
   * again changes nothing and writes no audit entry.
   */
  async applyVoidedEntry(projectId: string, entry: VoidedListEntry, readAtMs: number): Promise<NotificationOutcome['decision']> {
    const voiding: Voiding = { source: 'list', voidedAtMs: entry.voidedTimeMillis ?? readAtMs, orderId: entry.orderId, voidedReason: entry.voidedReason };
    return this.sql.transaction(
      async () => {
        for (const env of ['production', 'sandbox'] as const) {
          const scope = TenantScopes.ofVerifiedRailPayload(projectId, env);
          const record = await this.subscriptions.find(scope, RAIL, entry.purchaseToken);
          if (!record) continue;
          const state: AndroidPurchaseState = {
            productId: record.productId,
            active: false,
            validUntil: record.validUntil,
            rawStatus: 'VOIDED',
            sandbox: env === 'sandbox',
            needsAcknowledgement: false,
            obfuscatedAccountId: null,
            linkedPurchaseToken: null,
          };
          const context: RailEventContext = {
            eventType: 'VOIDED_PURCHASE',
            notificationId: entry.orderId,
            signatureVerified: false,
            reconciledWithProvider: true,
            rawEventReceivedAt: readAtMs,
            actor: `rail:${RAIL}`,
            requestId: null,
            details: { voidedSource: 'list', voidedReason: entry.voidedReason, refundReason: refundReasonOf(entry.voidedReason) },
          };
          const reading: AndroidStateReading = { kind: 'state', env, purchaseToken: entry.purchaseToken, state, revoked: true, reconciled: true, voiding };
          const outcome = await this.apply(scope, { eventTimeMillis: readAtMs, eventType: 'VOIDED_PURCHASE' }, reading, context, { holders: {} });
          return outcome.decision;
        }
        const { recorded } = await this.voided.record(
          { projectId },
          { purchaseToken: entry.purchaseToken, env: null, ...voidedFields(voiding) },
          this.clock.nowMs(),
        );
        return recorded ? 'applied' : 'no_op';
      },
      { retry: true },
    );
  }

  /** Whether the project's token was voided (it never gives access again). */
  async isVoided(scope: TenantScope, purchaseToken: string): Promise<boolean> {
    return (await this.voided.find(scope, purchaseToken)) !== null;
  }

  /** The token's voiding when it was voided; fills in the environment a voiding of an unknown token lacked. */
  async knownVoided(scope: TenantScope, purchaseToken: string): Promise<VoidedPurchase | null> {
    const voided = await this.voided.find(scope, purchaseToken);
    if (!voided || voided.env !== null) return voided;
    return (await this.voided.record(scope, { ...voided, env: scope.env }, this.clock.nowMs())).voided;
  }
}

/** An entry of `purchases.voidedpurchases.list`, checked. */
export interface VoidedListEntry {
  purchaseToken: string;
  orderId: string | null;
  /** Unix ms; null when the entry gave none. */
  voidedTimeMillis: number | null;
  voidedReason: number | null;
}

/** `voidedReason` 7, 8 and 9 are chargebacks; any other voiding is a refund. */
export function refundReasonOf(voidedReason: number | null): 'refund' | 'chargeback' {
  return voidedReason !== null && [7, 8, 9].includes(voidedReason) ? 'chargeback' : 'refund';
}

function voidedFields(voiding: Voiding): Omit<VoidedPurchase, 'purchaseToken' | 'env'> {
  return { voidedAtMs: voiding.voidedAtMs, orderId: voiding.orderId, voidedReason: voiding.voidedReason, voidedSource: voiding.source };
}

/** The notification type number of a known type name (the lifecycle reads numbers). */
function typeNumber(eventType: string, types: Record<number, string> = SUBSCRIPTION_NOTIFICATION_TYPES): number | null {
  const found = Object.entries(types).find(([, name]) => name === eventType);
  return found ? Number(found[0]) : null;
}

/**
 * The lifecycle's payment of a new paid period (none in a free trial) as the revenue ledger
 * counts it: its order id counts it once (without one, the token and the period's start).
 */
function paymentOf(facts: readonly LedgerFact[], purchaseToken: string, subscription: Subscription): RailPayment | null {
  const fact = facts.find((f) => f.kind === 'payment');
  if (!fact || fact.amountMicros === null || fact.currency === null || fact.amountMicros <= 0) return null;
  return {
    transactionId: fact.transactionId ?? `${purchaseToken}@${subscription.currentPeriodStartsAt ?? subscription.purchasedAt}`,
    currency: fact.currency,
    amount: { micros: fact.amountMicros },
    recurring: fact.recurring ?? true,
    paidAtMs: fact.railTimeMs,
  };
}

/** The latest order of an active subscription read is a recurring payment at its recurring price (its order id counts it once). */
function androidPayment(state: AndroidPurchaseState, active: boolean, eventTimeMillis: number): RailPayment | null {
  const line = state.price?.[0];
  if (!active || !state.orderId || !line) return null;
  return { transactionId: state.orderId, currency: line.currency, amount: line.amount, recurring: true, paidAtMs: eventTimeMillis };
}
