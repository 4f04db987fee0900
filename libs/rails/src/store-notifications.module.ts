import { Module, type OnModuleInit } from '@nestjs/common';
import { RoutePolicyHooks } from '#platform';
import { AuditModule } from '#audit';
import { KeysModule } from '#keys';
import { EntitlementsModule } from '#entitlements';
import { IdentityModule } from '#identity';
import { RailsModule } from './rails.module.js';
import { RailsAdminController } from './settings/rails-admin.controller.js';
import { StoreWebhooksController } from './webhooks/store-webhooks.controller.js';
import { WebhookGate } from './webhooks/webhook-gate.service.js';
import { OperatorCustomerRefreshController, ServerCustomerRefreshController } from './reading/customer-refresh.controller.js';
import { CustomerRefresh } from './reading/customer-refresh.service.js';
import { ExpiryReadsJob } from './reconcile/expiry-reads.job.js';
import { ExpiryReadsRepository } from './reconcile/expiry-reads.repository.js';

/**
 * The HTTP edge of the store rails (store webhooks and their route-policy gate, the operator's
 * card and Android settings, customer refresh) and the sweep of reads at expiry. The services
 * behind them, with the rail records they write, are RailsModule's.
 */
@Module({
  imports: [RailsModule, KeysModule, EntitlementsModule, IdentityModule, AuditModule],
  controllers: [StoreWebhooksController, RailsAdminController, ServerCustomerRefreshController, OperatorCustomerRefreshController],
  providers: [CustomerRefresh, ExpiryReadsRepository, ExpiryReadsJob],
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
