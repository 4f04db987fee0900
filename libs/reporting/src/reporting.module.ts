import { Module } from '@nestjs/common';
import { KeysModule } from '#keys';
import { RailsModule } from '#rails';
import { CoverageRepository } from './coverage.repository.js';
import { ReportingReads } from './reporting-reads.service.js';
import { RevenueLedgerRepository } from './revenue/revenue-ledger.repository.js';
import { RevenueLedger } from './revenue/revenue-ledger.service.js';
import { WorkspaceController } from './workspace/workspace.controller.js';
import { WorkspaceReadsService } from './workspace/workspace-reads.service.js';

/** The read API's shared machinery (envelope, reads bucket, scopes, workspace keys) and the workspace reads. */
@Module({
  imports: [KeysModule, RailsModule],
  controllers: [WorkspaceController],
  providers: [ReportingReads, CoverageRepository, WorkspaceReadsService, RevenueLedgerRepository, RevenueLedger],
  exports: [ReportingReads, CoverageRepository, RevenueLedger],
})
export class ReportingModule {}
