import { Module, type OnModuleInit } from '@nestjs/common';
import { KeysModule } from '#keys';
import { CustomerDirectory, ErasureHooks, IdentityModule, LinkHooks, MergeHooks } from '#identity';
import { EVENT_MERGE_HOOK_NAME, EventMergeRepository } from './identity/event-merge.repository.js';
import { SourceMapSymbolicator, SourceMapsModule } from '#sourcemaps';
import { EVENT_ERASURE_HOOK_NAME, EventErasureRepository } from './erasure/event-erasure.repository.js';
import { ROLLUP_ERASURE_HOOK_NAME, RollupErasureRepository } from './erasure/rollup-erasure.js';
import { EVENT_CUSTOMER_LOOKUP } from './identity/customer-lookup.js';
import { CustomerActivityFeed } from './identity/customer-activity-feed.service.js';
import { EventIdentityHintsRepository } from './identity/event-identity-hints.repository.js';
import { EventIdentityResolver } from './identity/event-identity-resolver.service.js';
import { EventBuffer } from './buffer/event-buffer.service.js';
import { EventsController } from './ingest/events.controller.js';
import { ErrorIssueDetailService } from './issues/error-issue-detail.service.js';
import { ErrorIssuesController } from './issues/error-issues.controller.js';
import { ErrorIssuesAdminController } from './console/error-issues-admin.controller.js';
import { IssueUsersRepository } from './console/issue-users.repository.js';
import { ErrorIssuesConsoleRepository } from './console/error-issues-console.repository.js';
import { ERROR_FRAME_SYMBOLICATOR } from './issues/frame-symbolicator.js';
import { ErrorIssuesRepository } from './issues/error-issues.repository.js';
import { IngestEventsService } from './ingest/ingest-events.service.js';
import { EventPartitionMaintenanceRepository } from './storage/event-partition-maintenance.repository.js';
import { EventPartitionMaintenance } from './storage/event-partition-maintenance.service.js';
import { EventsRepository } from './storage/events.repository.js';
import { ErrorAllowanceService } from './throttle/error-allowance.service.js';
import { EventRollupsRepository } from './rollups/event-rollups.repository.js';
import { EventRollups } from './rollups/event-rollups.service.js';

const ACQUISITION_SIGNUP_HOOK_NAME = 'acquisition-signup';

/** Telemetry ingestion (POST /v1/events), error issues (symbolicated on read), identity resolution of events, partitions. */
@Module({
  imports: [KeysModule, IdentityModule, SourceMapsModule],
  controllers: [EventsController, ErrorIssuesController, ErrorIssuesAdminController],
  providers: [
    IngestEventsService,
    EventsRepository,
    EventBuffer,
    ErrorIssuesRepository,
    ErrorIssueDetailService,
    IssueUsersRepository,
    ErrorIssuesConsoleRepository,
    ErrorAllowanceService,
    EventIdentityResolver,
    EventIdentityHintsRepository,
    CustomerActivityFeed,
    EventPartitionMaintenance,
    EventPartitionMaintenanceRepository,
    EventRollupsRepository,
    EventRollups,
    EventErasureRepository,
    RollupErasureRepository,
    EventMergeRepository,
    { provide: EVENT_CUSTOMER_LOOKUP, useExisting: CustomerDirectory },
    { provide: ERROR_FRAME_SYMBOLICATOR, useExisting: SourceMapSymbolicator },
  ],
  exports: [EventIdentityResolver, EventPartitionMaintenance, EventRollups, CustomerActivityFeed],
})
export class TelemetryModule implements OnModuleInit {
  constructor(
    private readonly erasureHooks: ErasureHooks,
    private readonly linkHooks: LinkHooks,
    private readonly rollups: EventRollups,
    private readonly mergeHooks: MergeHooks,
    private readonly eventErasure: EventErasureRepository,
    private readonly rollupErasure: RollupErasureRepository,
    private readonly eventMerge: EventMergeRepository,
  ) {}

  onModuleInit(): void {
    this.erasureHooks.register(EVENT_ERASURE_HOOK_NAME, async (scope, subject) => {
      await this.eventErasure.anonymise(scope, subject);
    });
    this.erasureHooks.register(ROLLUP_ERASURE_HOOK_NAME, (scope, subject) => this.rollupErasure.forget(scope, subject));
    // An anonymous id becoming a customer counts one signup under its first touch.
    this.linkHooks.register(ACQUISITION_SIGNUP_HOOK_NAME, (scope, link) => this.rollups.countSignup(scope, link.customerId, link.anonymousId, link.linkedAtMs));
    this.mergeHooks.register(EVENT_MERGE_HOOK_NAME, async (scope, merge) => {
      await this.eventMerge.reattribute(scope, merge);
    });
  }
}
