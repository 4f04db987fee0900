import { type DatabaseSchema, PLATFORM_MIGRATIONS } from '../../../libs/platform/src/index.js';
import { KEYS_MIGRATIONS } from '../../../libs/keys/src/index.js';
import { AUDIT_MIGRATIONS } from '../../../libs/audit/src/index.js';
import { IDENTITY_MIGRATIONS } from '../../../libs/identity/src/index.js';
import { TRUST_MIGRATIONS } from '../../../libs/trust/src/index.js';
import { ENTITLEMENTS_MIGRATIONS } from '../../../libs/entitlements/src/index.js';
import { TELEMETRY_MIGRATIONS } from '../../../libs/telemetry/src/index.js';
import { RAILS_MIGRATIONS } from '../../../libs/rails/src/index.js';
import { SOURCEMAPS_MIGRATIONS } from '../../../libs/sourcemaps/src/index.js';
import { MIGRATION_MIGRATIONS } from '../../../libs/migration/src/index.js';
import { WEBHOOKS_MIGRATIONS } from '../../../libs/webhooks/src/index.js';

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
    ...PLATFORM_MIGRATIONS,
  ],
};
