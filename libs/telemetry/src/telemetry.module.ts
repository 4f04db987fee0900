import { Module, type OnModuleInit } from '@nestjs/common';
import { KeysModule } from '../../keys/src/index.js';
import { CustomerDirectory, ErasureHooks, IdentityModule } from '../../identity/src/index.js';
import { EVENT_ERASURE_HOOK_NAME, anonymiseCustomerEvents } from './erasure/event-erasure.hook.js';
import { EVENT_CUSTOMER_LOOKUP } from './identity/customer-lookup.js';
import { EventIdentityResolver } from './identity/event-identity-resolver.service.js';
import { EventsController } from './ingest/events.controller.js';
import { ErrorIssuesController } from './issues/error-issues.controller.js';
import { ErrorIssuesRepository } from './issues/error-issues.repository.js';
import { IngestEventsService } from './ingest/ingest-events.service.js';
import { EventPartitionMaintenance } from './storage/event-partition-maintenance.service.js';
import { EventsRepository } from './storage/events.repository.js';
import { ErrorAllowanceService } from './throttle/error-allowance.service.js';

/** Telemetry ingestion (POST /v1/events), error issues, identity resolution of events, partitions. */
@Module({
  imports: [KeysModule, IdentityModule],
  controllers: [EventsController, ErrorIssuesController],
  providers: [
    IngestEventsService,
    EventsRepository,
    ErrorIssuesRepository,
    ErrorAllowanceService,
    EventIdentityResolver,
    EventPartitionMaintenance,
    { provide: EVENT_CUSTOMER_LOOKUP, useExisting: CustomerDirectory },
  ],
  exports: [EventIdentityResolver, EventPartitionMaintenance],
})
export class TelemetryModule implements OnModuleInit {
  constructor(private readonly erasureHooks: ErasureHooks) {}

  onModuleInit(): void {
    this.erasureHooks.register(EVENT_ERASURE_HOOK_NAME, async (scope, subject, manager) => {
      await anonymiseCustomerEvents(scope, subject, manager);
    });
  }
}
