import { CreateAuditEntries1790000000200 } from './migrations/1790000000200-create-audit-entries.migration.js';

export { AuditModule } from './audit.module.js';
export { AuditJournal, type AuditEntryInput } from './audit-journal.service.js';
export { AuditRetentionJob, AUDIT_RETENTION_MONTHS, auditRetentionCutoff } from './audit-retention.job.js';
export { AuditEntryData, AuditEntryView } from './audit-entry.view.js';

/** Migrations of the audit context, in order. */
export const AUDIT_MIGRATIONS = [CreateAuditEntries1790000000200];
