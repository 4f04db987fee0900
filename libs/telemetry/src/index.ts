import { CreateTelemetryEvents1790000000500 } from './migrations/1790000000500-create-telemetry-events.migration.js';

export { TelemetryModule } from './telemetry.module.js';
export { EventIdentityResolver, type ResolverRunSummary } from './identity/event-identity-resolver.service.js';
export { EventPartitionMaintenance, type MaintenanceSummary } from './storage/event-partition-maintenance.service.js';
export { EVENT_RETENTION_DAYS } from './storage/event-partitions.js';
export { anonymiseCustomerEvents, EVENT_ERASURE_HOOK_NAME } from './erasure/event-erasure.hook.js';

/** Migrations of the telemetry context, in order. */
export const TELEMETRY_MIGRATIONS = [CreateTelemetryEvents1790000000500];
