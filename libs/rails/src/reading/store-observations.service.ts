import { Inject, Injectable } from '@nestjs/common';
import type { JWSRenewalInfoDecodedPayload, JWSTransactionDecodedPayload } from '@apple/app-store-server-library';
import { APP_LOGGER, type AppLogger, type TenantScope } from '#platform';
import type { AliasNode } from '#identity';
import type { KnownHolders } from '../customers/rail-customer-resolver.service.js';
import { type AndroidPurchaseState, productState, subscriptionState } from '../android/android-notifications.js';
import { AndroidPublisherClient, AndroidPublisherUnavailable } from '../android/android-publisher.client.js';
import { type AndroidPurchaseRead, AndroidWebhookService } from '../android/android-webhook.service.js';
import type { CardSubscriptionObject } from '../lifecycle/card-lifecycle.js';
import { CardEventFormatError, type CardSubscription, cardSubscriptionActive, parseCardSubscription } from '../card/card-events.js';
import { CardWebhookService } from '../card/card-webhook.service.js';
import { type StoreTransaction, checkTransactionBounds } from '../ios/ios-store-rules.js';
import type { IosStoreSettings } from '../ios/ios-store-settings.js';
import { IosStoreVerifier, describeVerificationFailure } from '../ios/ios-store-verifier.service.js';
import { checkRenewalBounds } from '../ios/ios-notifications.js';
import { IosWebhookService } from '../ios/ios-webhook.service.js';
import { RailFieldError } from '../model/rail-bounds.js';
import { type PurchaseRail, RAIL_ALIAS_TYPES } from '../model/rail-model.js';
import type { RailEventContext } from '../model/rail-state-applier.service.js';
import { RailSettingsRepository } from '../model/rail-settings.repository.js';
import { RailSubscriptionsRepository } from '../model/rail-subscriptions.repository.js';
import type { NotificationOutcome } from '../notifications/notification-processor.service.js';
import { RailSecrets } from '../secrets/rail-secrets.service.js';
import { AppStoreServerApiClient } from './app-store-server-api.client.js';
import { CardPaymentsApiClient } from './card-payments-api.client.js';
import { RailReadUnavailable, backsOff } from './rail-read-errors.js';
import { isLiveRead, stateOfAppStoreStatus } from './rail-read-states.js';

/** One subscription state read from a rail, ready to apply like a notification. */
export interface ObservedState {
  /** The record it writes (rail subscription id) and the alias whose customer it belongs to. */
  subscriptionId: string;
  alias: AliasNode;
  /** Grants access at the moment of the read. */
  live: boolean;
  /**
   * Applies the state (one audit entry) inside the caller's transaction, with the holders of
   * the rail id the caller read there; an older or unchanged state writes nothing (no_op).
   */
  apply: (context: RailEventContext, holders: KnownHolders) => Promise<NotificationOutcome>;
}

/** What the rail holds for an id: no subscription at all, or the states read. */
export type Observation = { kind: 'none' } | { kind: 'states'; states: ObservedState[] };

/**
 * Reads one rail id from its store's API with the project's credentials and turns the answer
 * into the state changes a notification would make (the webhook services' own apply paths).
 * RailReadUnavailable when the rail cannot be read (no credentials or settings, timeout,
 * `429`, `5xx`, network, an answer not in the store's format).
 */
@Injectable()
export class StoreObservations {
  constructor(
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    private readonly secrets: RailSecrets,
    private readonly settings: RailSettingsRepository,
    private readonly subscriptions: RailSubscriptionsRepository,
    private readonly card: CardPaymentsApiClient,
    private readonly appStore: AppStoreServerApiClient,
    private readonly publisher: AndroidPublisherClient,
    private readonly verifier: IosStoreVerifier,
    private readonly cardRail: CardWebhookService,
    private readonly iosRail: IosWebhookService,
    private readonly androidRail: AndroidWebhookService,
  ) {}

  observe(scope: TenantScope, rail: PurchaseRail, railId: string, readAtMs: number): Promise<Observation> {
    switch (rail) {
      case 'card_payments':
        return this.observeCard(scope, railId, readAtMs);
      case 'ios_store':
        return this.observeIos(scope, railId, readAtMs);
      case 'android_store':
        return this.observeAndroid(scope, railId, readAtMs);
    }
  }

  /** A card customer `cus_…` (every subscription, all statuses) or one subscription `sub_…`. */
  private async observeCard(scope: TenantScope, railId: string, readAtMs: number): Promise<Observation> {
    const apiKey = this.secrets.cardPayments(scope.projectId)?.apiKey;
    if (!apiKey) throw new RailReadUnavailable('no card_payments.apiKey is configured for the project');
    let objects: unknown[];
    if (railId.startsWith('sub_')) {
      const one = await this.card.subscription(apiKey, railId);
      objects = one ? [one] : [];
    } else {
      objects = (await this.card.customerSubscriptions(apiKey, railId)).subscriptions;
    }
    if (objects.length === 0) return { kind: 'none' };
    const states = objects.map((object) => {
      const sub = formatted(() => parseCardSubscription(object), 'card processor');
      const live = cardSubscriptionActive(sub) && (sub.currentPeriodEnd === null || sub.currentPeriodEnd * 1000 > readAtMs);
      return {
        subscriptionId: sub.id,
        alias: { type: RAIL_ALIAS_TYPES.cardCustomerId, value: sub.customer },
        live,
        apply: (context: RailEventContext, holders: KnownHolders) =>
          this.cardRail.applySubscription(
            scope,
            sub as CardSubscription,
            Math.floor(readAtMs / 1000),
            context,
            { holders },
            { object: object as CardSubscriptionObject, eventId: null, eventType: 'customer.subscription.updated', livemode: scope.env === 'production' },
          ),
      };
    });
    return { kind: 'states', states };
  }

  /** "Get All Subscription Statuses" of an original transaction id, verified like notifications. */
  private async observeIos(scope: TenantScope, originalTransactionId: string, readAtMs: number): Promise<Observation> {
    const secrets = this.secrets.iosStore(scope.projectId);
    if (!secrets) throw new RailReadUnavailable('no ios_store API key is configured for the project');
    const settings = await this.settings.find<IosStoreSettings>({ projectId: scope.projectId }, 'ios_store');
    if (!settings?.enabled || !settings.settings.bundleId) throw new RailReadUnavailable('the project has no iOS rail settings (bundle id)');
    const read = await this.appStore.allSubscriptionStatuses(secrets, settings.settings.bundleId, originalTransactionId);
    const item = read.status?.data?.flatMap((group) => group.lastTransactions ?? []).find((last) => last.originalTransactionId === originalTransactionId);
    if (!item) return { kind: 'none' };
    if (!item.signedTransactionInfo) throw new RailReadUnavailable('App Store Server API: the status carries no signedTransactionInfo');
    let transaction: StoreTransaction;
    try {
      transaction = (await this.verifier.verifyTransactionIn(scope.projectId, settings, read.env, item.signedTransactionInfo)) as StoreTransaction;
    } catch (err) {
      throw new RailReadUnavailable(`App Store Server API: signedTransactionInfo failed verification (${describeVerificationFailure(err)})`);
    }
    if (transaction.originalTransactionId !== originalTransactionId || typeof transaction.productId !== 'string' || !transaction.productId) {
      throw new RailReadUnavailable('App Store Server API: the signed transaction is not the one asked for');
    }
    formatted(() => checkTransactionBounds(transaction, 'signedTransactionInfo'), 'App Store Server API');
    let renewal: JWSRenewalInfoDecodedPayload | null = null;
    if (item.signedRenewalInfo) {
      try {
        renewal = await this.verifier.verifyRenewalInfo(scope.projectId, settings, read.env, item.signedRenewalInfo);
        const verified = renewal;
        formatted(() => checkRenewalBounds(verified), 'App Store Server API');
      } catch (err) {
        if (err instanceof RailReadUnavailable) throw err;
        this.logger.warn(
          { projectId: scope.projectId, rail: 'ios_store', reason: describeVerificationFailure(err) },
          'rail read: signedRenewalInfo failed verification; ignored',
        );
      }
    }
    const state = stateOfAppStoreStatus(item.status, transaction, renewal, readAtMs);
    return {
      kind: 'states',
      states: [
        {
          subscriptionId: originalTransactionId,
          alias: { type: RAIL_ALIAS_TYPES.iosOriginalTransactionId, value: originalTransactionId },
          live: isLiveRead({ active: state.state === 'active', validUntil: state.validUntil }, readAtMs),
          // The read moves the subscription object like a notification (no rail event id: a read).
          apply: (context, holders) =>
            this.iosRail.applyTransactionState(
              scope,
              transaction,
              state,
              readAtMs,
              context,
              { holders },
              {
                read: {
                  status: item.status ?? null,
                  transaction: transaction as JWSTransactionDecodedPayload,
                  renewalInfo: renewal,
                  recordedType: context.eventType,
                },
              },
            ),
        },
      ],
    };
  }

  /** A purchase token: `subscriptionsv2.get`, else (a stored one-time purchase) `products.get`. */
  private async observeAndroid(scope: TenantScope, purchaseToken: string, readAtMs: number): Promise<Observation> {
    const account = this.secrets.androidStore(scope.projectId)?.serviceAccount;
    if (!account) throw new RailReadUnavailable('no android_store.serviceAccount is configured for the project');
    const settings = await this.settings.find<{ packageName?: string }>({ projectId: scope.projectId }, 'android_store');
    const packageName = settings?.enabled ? settings.settings.packageName : undefined;
    if (!packageName) throw new RailReadUnavailable('the project has no Android rail settings (package name)');
    const stored = await this.subscriptions.find(scope, 'android_store', purchaseToken);
    // The answer itself too: the subscription lifecycle derives the object from it.
    let purchase: AndroidPurchaseRead | null = null;
    let state: AndroidPurchaseState | null = await publisherRead(async () => {
      const answer = await this.publisher.getSubscription(account, packageName, purchaseToken);
      const read = subscriptionState(answer, stored?.productId ?? null);
      purchase = { kind: 'subscription', read: answer, notificationType: null };
      return read;
    });
    if (!state && stored) {
      state = await publisherRead(async () => {
        const answer = await this.publisher.getProduct(account, packageName, stored.productId, purchaseToken);
        const read = productState(answer, stored.productId);
        purchase = { kind: 'product', read: answer, productId: stored.productId, notificationType: null };
        return read;
      });
    }
    if (!state || !purchase) return { kind: 'none' };
    const answered: AndroidPurchaseRead = purchase;
    // A voided token is refunded whatever subscriptionsv2 says: ended, and nothing to acknowledge.
    const voided = await this.androidRail.isVoided(scope, purchaseToken);
    const read = voided ? { ...state, active: false } : state;
    if (read.active && read.needsAcknowledgement && read.productId) await this.acknowledge(account, packageName, purchaseToken, read, stored !== null);
    return {
      kind: 'states',
      states: [
        {
          subscriptionId: purchaseToken,
          alias: { type: RAIL_ALIAS_TYPES.androidPurchaseToken, value: purchaseToken },
          live: isLiveRead(read, readAtMs),
          apply: (context, holders) =>
            this.androidRail.apply(
              scope,
              { eventTimeMillis: readAtMs, eventType: context.eventType },
              { kind: 'state', env: scope.env, purchaseToken, state: read, revoked: false, reconciled: true, purchase: answered },
              context,
              { holders },
            ),
        },
      ],
    };
  }

  /** As the notification path: the store refunds purchases not acknowledged within three days. A failure is logged, not fatal. */
  private async acknowledge(
    account: Parameters<AndroidPublisherClient['getSubscription']>[0],
    packageName: string,
    purchaseToken: string,
    state: AndroidPurchaseState,
    oneTimeKnown: boolean,
  ): Promise<void> {
    try {
      if (state.validUntil === null && oneTimeKnown) await this.publisher.acknowledgeProduct(account, packageName, state.productId as string, purchaseToken);
      else await this.publisher.acknowledgeSubscription(account, packageName, state.productId as string, purchaseToken);
    } catch (err) {
      this.logger.warn({ rail: 'android_store', reason: err instanceof Error ? err.message : 'unknown' }, 'rail read: acknowledging the purchase failed');
    }
  }
}

/** A Publisher API read: null on `404` (no such purchase), RailReadUnavailable on any other failure. */
async function publisherRead<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof AndroidPublisherUnavailable) {
      if (err.status === 404) return null;
      throw new RailReadUnavailable(`Android Publisher API: ${err.message}`, backsOff(err.status), err.retryAfterMs);
    }
    if (err instanceof RailFieldError) throw new RailReadUnavailable(`Android Publisher API: an answer out of bounds (${err.message})`);
    throw err;
  }
}

/** Runs a parse of a store's answer; an answer not in the store's format is RailReadUnavailable. */
function formatted<T>(parse: () => T, store: string): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof CardEventFormatError || err instanceof RailFieldError)
      throw new RailReadUnavailable(`${store}: an answer not in its format (${err.message})`);
    throw err;
  }
}
