import { type DatabaseSchema, PLATFORM_MIGRATIONS } from '#platform';
import { KEYS_MIGRATIONS } from '#keys';
import { AUDIT_MIGRATIONS } from '#audit';
import { IDENTITY_MIGRATIONS } from '#identity';
import { TRUST_MIGRATIONS } from '#trust';
import { ENTITLEMENTS_MIGRATIONS } from '#entitlements';
import { TELEMETRY_MIGRATIONS } from '#telemetry';
import { RAILS_MIGRATIONS } from '#rails';
import { SOURCEMAPS_MIGRATIONS } from '#sourcemaps';
import { MIGRATION_MIGRATIONS } from '#migration';
import { WEBHOOKS_MIGRATIONS } from '#webhooks';
import { REPORTING_MIGRATIONS } from '#reporting';
import { CONSOLE_MIGRATIONS } from '#console';

/** Entities and migrations of every context, in the order the migrations must run. */
export const DATABASE_SCHEMA: DatabaseSchema = {
  entities: [],
  migrations: [
    ...KEYS_MIGRATIONS,
    ...AUDIT_MIGRATIONS,
    ...IDENTITY_MIGRATIONS,
    ...TRUST_MIGRATIONS,
    ...ENTITLEMENTS_MIGRATIONS,
    ...TELEMETRY_MIGRATIONS,
    ...RAILS_MIGRATIONS,
    ...SOURCEMAPS_MIGRATIONS,
    ...MIGRATION_MIGRATIONS,
    ...WEBHOOKS_MIGRATIONS,
    ...REPORTING_MIGRATIONS,
    ...CONSOLE_MIGRATIONS,
    ...PLATFORM_MIGRATIONS,
  ],
};
