import { timingSafeEqual, createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ApiError, Clock, type Env, Sql, type TenantScope, TenantScopes } from '#platform';
import { ProductCatalog } from '#entitlements';
import { type KnownHolders, RailCustomerResolver } from '../customers/rail-customer-resolver.service.js';
import { RailFieldError } from '../model/rail-bounds.js';
import { RAIL_ALIAS_TYPES } from '../model/rail-model.js';
import type { RailPayment } from '../model/rail-revenue-feed.service.js';
import { type RailEventContext, RailStateApplier } from '../model/rail-state-applier.service.js';
import { RailSubscriptionsRepository } from '../model/rail-subscriptions.repository.js';
import { NotificationProcessor, type NotificationOutcome } from '../notifications/notification-processor.service.js';
import type { RailNotificationView } from '../notifications/rail-notification.view.js';
import type { AndroidStoreSecrets } from '../secrets/rail-secrets.js';
import { RailSecrets } from '../secrets/rail-secrets.service.js';
import { WebhookGate } from '../webhooks/webhook-gate.service.js';
import {
  AndroidFormatError,
  type AndroidNotification,
  checkEnvelopeBounds,
  type AndroidPurchaseState,
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

/** What was read for one notification: the state to apply, or a decision without a state. */
type Reading =
  | { kind: 'state'; env: Env; purchaseToken: string; state: AndroidPurchaseState; revoked: boolean; reconciled: boolean; voiding?: Voiding }
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
   * the rail): `event` gives the rail time and the type named with a revocation. Writes one
   * audit entry. A voided purchase token (recorded here when `reading.voiding` reports it, or
   * earlier) is refunded whatever the read says: inactive since its voiding, no payment.
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
    // Whose purchase it is (RailCustomerResolver.androidPurchaseCustomer).
    const customerId = await this.customers.androidPurchaseCustomer(scope, purchaseToken, state, holders);
    // Revocation and voiding end entitlements at once, and for good, whatever the read state says.
    const revoked = reading.revoked || voided !== null;
    const active = state.active && !revoked;
    const voidedAt = voided ? Math.floor(voided.voidedAtMs / 1000) : Math.floor(this.clock.nowMs() / 1000);
    const result = await this.applier.apply(
      scope,
      {
        rail: RAIL,
        subscriptionId: purchaseToken,
        customerId,
        productId: state.productId as string,
        state: active ? 'active' : 'inactive',
        endedBy: revoked ? 'revoked' : 'expired',
        validUntil: active ? state.validUntil : revoked ? voidedAt : state.validUntil,
        railTimeMs: notification.eventTimeMillis,
        rawStatus: reading.revoked ? `${state.rawStatus} (${notification.eventType})` : voided ? `${state.rawStatus} (VOIDED)` : state.rawStatus,
        ignoreRailTime: true,
        price: state.price ?? null,
        payment: androidPayment(state, active, notification.eventTimeMillis),
      },
      context,
      { catalogueKeys: new Map([[state.productId as string, keys]]), onlyChanges: read !== undefined },
    );
    return { decision: result.decision, customerId: result.subscription?.customerId ?? customerId, auditEventId: result.auditEventId };
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

/** The latest order of an active subscription read is a recurring payment at its recurring price (its order id counts it once). */
function androidPayment(state: AndroidPurchaseState, active: boolean, eventTimeMillis: number): RailPayment | null {
  const line = state.price?.[0];
  if (!active || !state.orderId || !line) return null;
  return { transactionId: state.orderId, currency: line.currency, amount: line.amount, recurring: true, paidAtMs: eventTimeMillis };
}
