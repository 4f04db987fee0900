import { Module, type OnModuleInit } from '@nestjs/common';
import { KeysModule } from '#keys';
import { AuditModule } from '#audit';
import { IdentityModule, MergeHooks } from '#identity';
import { EntitlementsModule } from '#entitlements';
import { RailCustomerResolver } from './customers/rail-customer-resolver.service.js';
import { AndroidPublisherClient } from './android/android-publisher.client.js';
import { AndroidWebhookService } from './android/android-webhook.service.js';
import { AndroidVoidedPurchasesRepository } from './android/android-voided-purchases.repository.js';
import { AndroidVoidedReadsJob } from './android/android-voided-reads.job.js';
import { AndroidVoidedReadsRepository } from './android/android-voided-reads.repository.js';
import { CardWebhookService } from './card/card-webhook.service.js';
import { IosWebhookService } from './ios/ios-webhook.service.js';
import { NotificationProcessor } from './notifications/notification-processor.service.js';
import { StoreRailSettings } from './settings/store-rail-settings.service.js';
import { WebhookGate } from './webhooks/webhook-gate.service.js';
import { AppStoreServerApiClient } from './reading/app-store-server-api.client.js';
import { CardPaymentsApiClient } from './reading/card-payments-api.client.js';
import { RailReadBounds } from './reading/rail-read-bounds.service.js';
import { RailReader } from './reading/rail-reader.service.js';
import { StoreObservations } from './reading/store-observations.service.js';
import { IosStoreVerifier } from './ios/ios-store-verifier.service.js';
import { RailSecretsStatus } from './operator/rail-secrets-status.js';
import { RailConnectionChecksRepository } from './operator/rail-connection-checks.repository.js';
import { RailConnectionTest } from './operator/rail-connection-test.service.js';
import { RailSecrets } from './secrets/rail-secrets.service.js';
import { RailsOperatorController } from './operator/rails-operator.controller.js';
import { RailsOperatorService } from './operator/rails-operator.service.js';
import { RailsConsole } from './operator/rails-console.service.js';
import { RailNotificationsReadRepository } from './operator/rail-notifications-read.repository.js';
import { PurchaseSyncController } from './purchases/purchase-sync.controller.js';
import { PurchaseSyncService } from './purchases/purchase-sync.service.js';
import { CustomerRailStatuses } from './model/customer-rail-statuses.service.js';
import { RailSettingsRepository } from './model/rail-settings.repository.js';
import { RailRevenueFeed } from './model/rail-revenue-feed.service.js';
import { RailStateApplier } from './model/rail-state-applier.service.js';
import { RailSubscriptionsRepository } from './model/rail-subscriptions.repository.js';
import { SubscriptionReads } from './subscriptions/subscription-reads.service.js';
import { SubscriptionHistory } from './subscriptions/subscription-history.service.js';
import { SubscriptionHistoryRepository } from './model/subscription-history.repository.js';
import { SubscriptionCounts } from './subscriptions/subscription-counts.service.js';
import { RefundRequestsRepository } from './refunds/refund-requests.repository.js';
import { RefundRequests } from './refunds/refund-requests.service.js';
import { RefundRequestsJob } from './refunds/refund-requests.job.js';
import { OperatorRefundRequestsController, ServerRefundRequestsController } from './refunds/refund-requests.controller.js';
import { OperatorSubscriptionsController, ServerSubscriptionsController, SubscriptionsController } from './subscriptions/subscriptions.controller.js';

/**
 * Store rails: the shared rail model and its records, purchase sync, the processing of store
 * notifications (card, iOS, Android), the reads of the rails' APIs (RailReader) and the hourly
 * read of voided Play purchases (AndroidVoidedReadsJob), Apple refund requests and their
 * answers (RefundRequestsJob), rail settings and secrets.
 * StoreNotificationsModule serves the notifications, settings and reads over HTTP.
 */
@Module({
  imports: [KeysModule, AuditModule, IdentityModule, EntitlementsModule],
  controllers: [
    PurchaseSyncController,
    RailsOperatorController,
    SubscriptionsController,
    ServerSubscriptionsController,
    OperatorSubscriptionsController,
    ServerRefundRequestsController,
    OperatorRefundRequestsController,
  ],
  providers: [
    RailSettingsRepository,
    RailSubscriptionsRepository,
    SubscriptionReads,
    SubscriptionHistory,
    SubscriptionHistoryRepository,
    SubscriptionCounts,
    RailStateApplier,
    RailRevenueFeed,
    CustomerRailStatuses,
    IosStoreVerifier,
    RailSecrets,
    // The rails listing's secretsConfigured comes from the secrets file.
    { provide: RailSecretsStatus, useExisting: RailSecrets },
    RailsOperatorService,
    RailsConsole,
    RailNotificationsReadRepository,
    RailConnectionChecksRepository,
    RailConnectionTest,
    PurchaseSyncService,
    RailCustomerResolver,
    WebhookGate,
    NotificationProcessor,
    StoreRailSettings,
    CardWebhookService,
    AndroidPublisherClient,
    AndroidVoidedPurchasesRepository,
    AndroidWebhookService,
    IosWebhookService,
    CardPaymentsApiClient,
    AppStoreServerApiClient,
    RailReadBounds,
    StoreObservations,
    RailReader,
    AndroidVoidedReadsRepository,
    AndroidVoidedReadsJob,
    RefundRequestsRepository,
    RefundRequests,
    RefundRequestsJob,
  ],
  exports: [
    SubscriptionCounts,
    RailStateApplier,
    RailRevenueFeed,
    CustomerRailStatuses,
    IosStoreVerifier,
    RailSecrets,
    RailReader,
    // For StoreNotificationsModule's controllers and webhook gate.
    WebhookGate,
    CardWebhookService,
    IosWebhookService,
    AndroidWebhookService,
    StoreRailSettings,
  ],
})
export class RailsModule implements OnModuleInit {
  constructor(
    private readonly mergeHooks: MergeHooks,
    private readonly customers: RailCustomerResolver,
  ) {}

  onModuleInit(): void {
    this.mergeHooks.register('rails', (scope, merge) => this.customers.reassignRecords(scope, merge.fromCustomerId, merge.intoCustomerId));
  }
}
