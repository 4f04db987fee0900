import { EntitlementsSchema1790000000400 } from './migrations/1790000000400-entitlements-schema.migration.js';
import { CustomerScopeForeignKey1790000000922 } from './migrations/1790000000922-customer-scope-foreign-key.migration.js';

export { EntitlementsModule } from './entitlements.module.js';
export { EntitlementReadService } from './reads/entitlement-read.service.js';
export { EntitlementQueries, type CustomerHints, assertCustomerIdFormat, unknownCustomer } from './reads/entitlement-queries.service.js';
export { EntitlementsQueryDto } from './dto/entitlements-query.dto.js';
export { EntitlementHistory, type EntitlementHistoryEntry, type EntitlementOrigin } from './reads/entitlement-history.service.js';
export { EntitlementWriter } from './grants/entitlement-writer.service.js';
export {
  type EntitlementChange,
  type EntitlementChangeResult,
  type EntitlementChangeCause,
  type EntitlementSideEvent,
  type KeyChange,
  type ManualGrant,
  type ManualRevoke,
  type MigrationGrant,
  type MigrationGrantOutcome,
  type RailStateWrite,
  type RailEntitlementRow,
  type RailFold,
  type Expiry,
  type PassedEntitlement,
  type MutationActor,
  type EntitlementChangeSink,
  type CustomerEntitlementChange,
} from './grants/entitlement-change.js';
export { EntitlementKeyRegistry, type KeyRegistrar, type RegisteredKey } from './catalog/entitlement-key-registry.service.js';
export { ProductCatalog, type CatalogProduct } from './catalog/product-catalog.service.js';
export { PublicEntitlement, EntitlementSource, EntitlementList, EntitlementMutation } from './domain/public-entitlement.js';
export {
  RAILS,
  PURCHASE_RAILS,
  ENTITLEMENT_STATES,
  GRANT_DURATIONS,
  MANUAL_PRODUCT_ID,
  CATALOG_KEY_PATTERN,
  CATALOG_KEY_MAX,
  type Rail,
  type PurchaseRail,
  type EntitlementState,
  type GrantDuration,
  validUntilFor,
  isActiveAt,
} from './domain/entitlement-rules.js';

/** Migrations of the entitlements context, in order. */
export const ENTITLEMENTS_MIGRATIONS = [EntitlementsSchema1790000000400, CustomerScopeForeignKey1790000000922];
