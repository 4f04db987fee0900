import { Module } from '@nestjs/common';
import { KeysModule } from '#keys';
import { CoverageRepository } from './coverage.repository.js';
import { ReportingReads } from './reporting-reads.service.js';
import { WorkspaceController } from './workspace/workspace.controller.js';
import { WorkspaceReadsService } from './workspace/workspace-reads.service.js';

/** The read API's shared machinery (envelope, reads bucket, scopes, workspace keys) and the workspace reads. */
@Module({
  imports: [KeysModule],
  controllers: [WorkspaceController],
  providers: [ReportingReads, CoverageRepository, WorkspaceReadsService],
  exports: [ReportingReads, CoverageRepository],
})
export class ReportingModule {}
