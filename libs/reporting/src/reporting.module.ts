import { Module } from '@nestjs/common';
import { KeysModule } from '#keys';
import { RailsModule } from '#rails';
import { BucketReportsRepository } from './buckets/bucket-reports.repository.js';
import { BucketsController } from './buckets/buckets.controller.js';
import { BucketsService } from './buckets/buckets.service.js';
import { ReadCosts } from './buckets/read-costs.service.js';
import { CoverageRepository } from './coverage.repository.js';
import { ReportingReads } from './reporting-reads.service.js';
import { RevenueLedgerRepository } from './revenue/revenue-ledger.repository.js';
import { RevenueLedger } from './revenue/revenue-ledger.service.js';
import { WorkspaceController } from './workspace/workspace.controller.js';
import { WorkspaceReadsService } from './workspace/workspace-reads.service.js';

/** The read API's shared machinery (envelope, reads bucket, scopes, workspace keys) and the workspace reads. */
@Module({
  imports: [KeysModule, RailsModule],
  controllers: [WorkspaceController, BucketsController],
  providers: [
    ReportingReads,
    CoverageRepository,
    WorkspaceReadsService,
    BucketReportsRepository,
    BucketsService,
    ReadCosts,
    RevenueLedgerRepository,
    RevenueLedger,
  ],
  exports: [ReportingReads, CoverageRepository, ReadCosts, RevenueLedger],
})
export class ReportingModule {}
