import { Module } from '@nestjs/common';
import { KeysModule } from '#keys';
import { AuditController } from './audit.controller.js';
import { AuditEntriesRepository } from './audit-entries.repository.js';
import { AuditJournal } from './audit-journal.service.js';
import { AuditRetentionJob } from './audit-retention.job.js';

/** The append-only audit journal, its read endpoint and its 24-month retention purge. */
@Module({
  imports: [KeysModule],
  controllers: [AuditController],
  providers: [AuditEntriesRepository, AuditJournal, AuditRetentionJob],
  exports: [AuditJournal, AuditRetentionJob],
})
export class AuditModule {}
