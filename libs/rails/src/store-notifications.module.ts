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
import { RailCustomerLinks } from './notifications/rail-customer-links.service.js';
import { RailsModule } from './rails.module.js';
import { RailsAdminController } from './settings/rails-admin.controller.js';
import { StoreRailSettings } from './settings/store-rail-settings.service.js';
import { StoreWebhooksController } from './webhooks/store-webhooks.controller.js';
import { WebhookGate } from './webhooks/webhook-gate.service.js';

/** Store notifications of the card-payment, iOS and Android rails, rail secrets and the rails' operator settings. */
@Module({
  imports: [RailsModule, KeysModule, EntitlementsModule, IdentityModule, AuditModule],
  controllers: [StoreWebhooksController, RailsAdminController],
  providers: [
    WebhookGate,
    NotificationProcessor,
    RailCustomerLinks,
    StoreRailSettings,
    CardWebhookService,
    AndroidPublisherClient,
    AndroidWebhookService,
    IosWebhookService,
  ],
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
