import { Module, type OnModuleInit } from '@nestjs/common';
import { RoutePolicyHooks } from '#platform';
import { AuditModule } from '#audit';
import { KeysModule } from '#keys';
import { EntitlementsModule } from '#entitlements';
import { IdentityModule } from '#identity';
import { AndroidPublisherClient } from './android/android-publisher.client.js';
import { AndroidWebhookService } from './android/android-webhook.service.js';
import { CardWebhookService } from './card/card-webhook.service.js';
import { IosWebhookService } from './ios/ios-webhook.service.js';
import { NotificationProcessor } from './notifications/notification-processor.service.js';
import { RailsModule } from './rails.module.js';
import { RailsAdminController } from './settings/rails-admin.controller.js';
import { StoreRailSettings } from './settings/store-rail-settings.service.js';
import { StoreWebhooksController } from './webhooks/store-webhooks.controller.js';
import { WebhookGate } from './webhooks/webhook-gate.service.js';
import { AppStoreServerApiClient } from './reading/app-store-server-api.client.js';
import { CardPaymentsApiClient } from './reading/card-payments-api.client.js';
import { RailReadBounds } from './reading/rail-read-bounds.service.js';
import { RailReader } from './reading/rail-reader.service.js';
import { OperatorCustomerRefreshController, ServerCustomerRefreshController } from './reading/customer-refresh.controller.js';
import { CustomerRefresh } from './reading/customer-refresh.service.js';
import { StoreObservations } from './reading/store-observations.service.js';
import { ExpiryReadsJob } from './reconcile/expiry-reads.job.js';
import { ExpiryReadsRepository } from './reconcile/expiry-reads.repository.js';

/**
 * Store notifications of the card-payment, iOS and Android rails, the rails' operator
 * settings, and the reads of the rails' APIs (RailReader: reconciliation, refresh, migration gate)
 * with the sweep of reads at expiry.
 */
@Module({
  imports: [RailsModule, KeysModule, EntitlementsModule, IdentityModule, AuditModule],
  controllers: [StoreWebhooksController, RailsAdminController, ServerCustomerRefreshController, OperatorCustomerRefreshController],
  providers: [
    WebhookGate,
    NotificationProcessor,
    StoreRailSettings,
    CardWebhookService,
    AndroidPublisherClient,
    AndroidWebhookService,
    IosWebhookService,
    CardPaymentsApiClient,
    AppStoreServerApiClient,
    RailReadBounds,
    StoreObservations,
    RailReader,
    CustomerRefresh,
    ExpiryReadsRepository,
    ExpiryReadsJob,
  ],
  exports: [RailReader],
})
export class StoreNotificationsModule implements OnModuleInit {
  constructor(
    private readonly hooks: RoutePolicyHooks,
    private readonly gate: WebhookGate,
  ) {}

  onModuleInit(): void {
    for (const rail of ['ios_store', 'card_payments', 'android_store'] as const) {
      this.hooks.registerStoreWebhookGate(rail, (req) => this.gate.open(req, rail));
    }
  }
}
