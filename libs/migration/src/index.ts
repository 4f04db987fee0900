import { MigratedUsers1790000000800 } from './migrations/1790000000800-migrated-users.migration.js';
import { CustomerScopeForeignKey1790000000924 } from './migrations/1790000000924-customer-scope-foreign-key.migration.js';

export { MigrationModule } from './migration.module.js';
export { MAX_MIGRATION_ROWS } from './domain/migration-rows.js';

/** Migrations of the migration context, in order. */
export const MIGRATION_MIGRATIONS = [MigratedUsers1790000000800, CustomerScopeForeignKey1790000000924];
