import { EventsCustomerRecentIndex1790000002630 } from './migrations/1790000002630-events-customer-recent-index.migration.js';
import { CreateTelemetryEvents1790000000500 } from './migrations/1790000000500-create-telemetry-events.migration.js';
import { AddEventContext1790000000710 } from './migrations/1790000000710-add-event-context.migration.js';
import { CustomerScopeForeignKey1790000000925 } from './migrations/1790000000925-customer-scope-foreign-key.migration.js';
import { EventsJsonPayloads1790000000950 } from './migrations/1790000000950-events-json-payloads.migration.js';
import { EventRollups1790000002500 } from './migrations/1790000002500-event-rollups.migration.js';
import { VisitorCounters1790000003210 } from './migrations/1790000003210-visitor-counters.migration.js';
import { ErrorUserAndSignupCounters1790000003230 } from './migrations/1790000003230-error-user-and-signup-counters.migration.js';

export { TelemetryModule } from './telemetry.module.js';
export { EventRollups, type AffectedUserRow, type BreakdownDimension, type DailyViewsRow, type ErrorRollupRow } from './rollups/event-rollups.service.js';
export { CustomerConsoleModule } from './console/customer-console.module.js';
export { EventIdentityResolver, type ResolverRunSummary } from './identity/event-identity-resolver.service.js';
export { CustomerActivityFeed, type CustomerActivitySink } from './identity/customer-activity-feed.service.js';
export { EventPartitionMaintenance, type MaintenanceSummary } from './storage/event-partition-maintenance.service.js';
export { EVENT_RETENTION_DAYS } from './storage/event-partitions.js';
export { anonymiseCustomerEvents, EVENT_ERASURE_HOOK_NAME } from './erasure/event-erasure.repository.js';

/** Migrations of the telemetry context, in order. */
export const TELEMETRY_MIGRATIONS = [
  CreateTelemetryEvents1790000000500,
  AddEventContext1790000000710,
  CustomerScopeForeignKey1790000000925,
  EventsJsonPayloads1790000000950,
  EventRollups1790000002500,
  EventsCustomerRecentIndex1790000002630,
  VisitorCounters1790000003210,
  ErrorUserAndSignupCounters1790000003230,
];
