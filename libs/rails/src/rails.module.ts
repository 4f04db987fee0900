import { Module, type OnModuleInit } from '@nestjs/common';
import { Clock } from '#platform';
import { KeysModule } from '#keys';
import { AuditModule } from '#audit';
import { IdentityModule, MergeHooks } from '#identity';
import { EntitlementChangeFeed, EntitlementWriter, EntitlementsModule } from '#entitlements';
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
  ],
  // The repositories serve the store notifications module of this context; other contexts use the services.
  exports: [RailSubscriptionsRepository, RailStateApplier, RailRevenueFeed, CustomerRailStatuses, RailSettingsRepository, IosStoreVerifier, RailSecrets],
})
export class RailsModule implements OnModuleInit {
  constructor(
    private readonly mergeHooks: MergeHooks,
    private readonly subscriptions: RailSubscriptionsRepository,
    private readonly writer: EntitlementWriter,
    private readonly revenue: RailRevenueFeed,
    private readonly changes: EntitlementChangeFeed,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    // An approved merge review moves the other customer's subscription records, revenue and
    // rail-derived entitlements; both customers' entitlement changes go to the change feed, as
    // when a rail-only customer is folded into a named one.
    this.mergeHooks.register('rails', async (scope, merge, manager) => {
      const tracker = await this.changes.track(manager, scope, [merge.fromCustomerId, merge.intoCustomerId]);
      await this.subscriptions.reassignCustomer(scope, merge.fromCustomerId, merge.intoCustomerId, this.clock.now(), manager);
      await this.revenue.reassigned(manager, scope, merge.fromCustomerId, merge.intoCustomerId);
      await this.writer.moveRailEntitlements(manager, scope, merge.fromCustomerId, merge.intoCustomerId);
      await tracker.publish(manager, (_key, change) => (change === 'deactivated' ? 'revoke' : 'purchase'));
    });
  }
}
