import { Module, type OnModuleInit } from '@nestjs/common';
import { KeysModule } from '#keys';
import { AuditModule } from '#audit';
import { IdentityModule, MergeHooks } from '#identity';
import { EntitlementsModule } from '#entitlements';
import { RailCustomerResolver } from './customers/rail-customer-resolver.service.js';
import { IosStoreVerifier } from './ios/ios-store-verifier.service.js';
import { RailSecretsStatus } from './operator/rail-secrets-status.js';
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

/** Store rails: purchase sync, store notifications, subscription records, rail settings. */
@Module({
  imports: [KeysModule, AuditModule, IdentityModule, EntitlementsModule],
  controllers: [PurchaseSyncController, RailsOperatorController],
  providers: [
    RailSettingsRepository,
    RailSubscriptionsRepository,
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
    PurchaseSyncService,
    RailCustomerResolver,
  ],
  // The repositories serve the store notifications module of this context; other contexts use the services.
  exports: [
    RailSubscriptionsRepository,
    RailCustomerResolver,
    RailStateApplier,
    RailRevenueFeed,
    CustomerRailStatuses,
    RailSettingsRepository,
    IosStoreVerifier,
    RailSecrets,
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
