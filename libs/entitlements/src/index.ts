import { EntitlementsSchema1790000000400 } from './migrations/1790000000400-entitlements-schema.migration.js';

export { EntitlementsModule } from './entitlements.module.js';
export { EntitlementReadService } from './reads/entitlement-read.service.js';
export { EntitlementWriter, type RailEntitlementWrite } from './grants/entitlement-writer.service.js';
export { EntitlementKeyRegistry, type KeyRegistrar, type RegisteredKey } from './catalog/entitlement-key-registry.service.js';
export { ProductCatalog, type CatalogProduct } from './catalog/product-catalog.service.js';
export { PublicEntitlement, EntitlementSource, EntitlementList, EntitlementMutation } from './domain/public-entitlement.js';
export {
  RAILS,
  PURCHASE_RAILS,
  ENTITLEMENT_STATES,
  GRANT_DURATIONS,
  MANUAL_PRODUCT_ID,
  type Rail,
  type PurchaseRail,
  type EntitlementState,
  type GrantDuration,
  validUntilFor,
  isActiveAt,
} from './domain/entitlement-rules.js';

/** Migrations of the entitlements context, in order. */
export const ENTITLEMENTS_MIGRATIONS = [EntitlementsSchema1790000000400];
