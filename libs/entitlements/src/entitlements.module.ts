import { EntitlementHistory } from './reads/entitlement-history.service.js';
import { EntitlementHistoryRepository } from './reads/entitlement-history.repository.js';
import { CatalogRepository } from './catalog/catalog.repository.js';
import { Module } from '@nestjs/common';
import { KeysModule } from '#keys';
import { AuditModule } from '#audit';
import { IdentityModule } from '#identity';
import { EntitlementKeyRegistry } from './catalog/entitlement-key-registry.service.js';
import { ProductCatalog } from './catalog/product-catalog.service.js';
import { EntitlementRepository } from './domain/entitlement.repository.js';
import { EntitlementWriter } from './grants/entitlement-writer.service.js';
import { EntitlementChangeFeed } from './grants/entitlement-change-feed.service.js';
import { ManualEntitlementService } from './grants/manual-entitlements.service.js';
import { ServerCustomersController } from './grants/server-customers.controller.js';
import { OperatorEntitlementsController } from './operator/operator-entitlements.controller.js';
import { EntitlementQueries } from './reads/entitlement-queries.service.js';
import { EntitlementReadService } from './reads/entitlement-read.service.js';
import { EntitlementsController } from './reads/entitlements.controller.js';

/** Entitlement state of every rail, reads, manual grant and revoke, key registry and product catalogue. */
@Module({
  imports: [KeysModule, AuditModule, IdentityModule],
  controllers: [EntitlementsController, ServerCustomersController, OperatorEntitlementsController],
  providers: [
    EntitlementHistory,
    EntitlementHistoryRepository,
    EntitlementRepository,
    EntitlementReadService,
    EntitlementQueries,
    EntitlementWriter,
    EntitlementChangeFeed,
    ManualEntitlementService,
    EntitlementKeyRegistry,
    ProductCatalog,
    CatalogRepository,
  ],
  exports: [EntitlementQueries, EntitlementReadService, EntitlementHistory, EntitlementWriter, EntitlementKeyRegistry, ProductCatalog],
})
export class EntitlementsModule {}
