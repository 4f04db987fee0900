import { Module } from '@nestjs/common';
import { KeysModule } from '#keys';
import { IdentityModule } from '#identity';
import { EntitlementsModule } from '#entitlements';
import { RailsModule } from '#rails';
import { AuditModule } from '#audit';
import { CustomerConsoleController, CustomerExportController } from './customer-console.controller.js';
import { CustomerListRepository } from './customer-list.repository.js';
import { CustomerConsoleReads } from './customer-console-reads.service.js';
import { CustomerEventsRepository } from './customer-events.repository.js';

/**
 * The console's customer pages. A composition over identity, entitlements, rails, audit and
 * the events this context owns; its own module so that TelemetryModule keeps its imports.
 */
@Module({
  imports: [KeysModule, IdentityModule, EntitlementsModule, RailsModule, AuditModule],
  controllers: [CustomerConsoleController, CustomerExportController],
  providers: [CustomerConsoleReads, CustomerEventsRepository, CustomerListRepository],
})
export class CustomerConsoleModule {}
