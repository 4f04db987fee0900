import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope, randomLowerAlnum } from '#platform';
import { AuditEntriesRepository, type AuditEntryWrite, type AuditRow } from './audit-entries.repository.js';
import type { AuditEntryData } from './audit-entry.view.js';

/** What a writer appends: the stored entry, with the id and details optional. */
export interface AuditEntryInput extends Omit<AuditEntryWrite, 'eventId' | 'details'> {
  /** Caller-chosen id; generated as `${eventIdPrefix ?? 'evt_'}<24 random chars>` when absent. */
  eventId?: string;
  eventIdPrefix?: string;
  /** Never personal data: the journal outlives erasure (24 months). */
  details?: Record<string, unknown>;
}

function toWrite(entry: AuditEntryInput, eventId: string): AuditEntryWrite {
  return {
    eventId,
    rail: entry.rail,
    eventType: entry.eventType,
    customerId: entry.customerId,
    decision: entry.decision,
    reason: entry.reason,
    actor: entry.actor,
    requestId: entry.requestId,
    details: entry.details ?? {},
  };
}

/** Fields of rail entries (docs/rails.md) shown in the read view when the entry's details carry them. */
const RAIL_DETAIL_FIELDS = [
  ['signatureVerified', 'boolean'],
  ['reconciledWithProvider', 'boolean'],
  ['rawEventReceivedAt', 'number'],
  ['processedAt', 'number'],
] as const;

/**
 * The append-only journal. Writers append inside their own (ambient) transaction, so a state
 * change and its audit entry commit or roll back together.
 */
@Injectable()
export class AuditJournal {
  constructor(
    private readonly clock: Clock,
    private readonly entries: AuditEntriesRepository,
  ) {}

  async append(scope: TenantScope, entry: AuditEntryInput): Promise<{ eventId: string }> {
    const eventId = entry.eventId ?? `${entry.eventIdPrefix ?? 'evt_'}${randomLowerAlnum(24)}`;
    await this.entries.insert(scope, toWrite(entry, eventId), this.clock.now());
    return { eventId };
  }

  /** Many entries in one statement (bulk writers), in the caller's transaction; every entry carries its eventId. */
  async appendMany(scope: TenantScope, entries: readonly (AuditEntryInput & { eventId: string })[]): Promise<void> {
    if (entries.length === 0) return;
    await this.entries.insertMany(
      scope,
      entries.map((e) => toWrite(e, e.eventId)),
      this.clock.now(),
    );
  }

  /** One entry of the scope, or null (unknown id, or another project's or environment's). */
  async find(scope: TenantScope, eventId: string): Promise<AuditEntryData | null> {
    const row = await this.entries.find(scope, eventId);
    return row ? toData(row) : null;
  }

  /** The rail subscription id (`details.subscriptionId`) each of the given rail entries names, by eventId. */
  async railSubscriptionIds(scope: TenantScope, eventIds: readonly string[]): Promise<Map<string, string>> {
    const rows = await this.entries.findMany(scope, eventIds);
    const ids = new Map<string, string>();
    for (const row of rows) {
      const id = row.details?.subscriptionId;
      if (typeof id === 'string') ids.set(row.event_id, id);
    }
    return ids;
  }

  /**
   * A customer's entries newest first, each as `find` answers it; `before` is the eventId of the
   * last entry of the previous page. `hasMore` when older entries remain.
   */
  async customerTimeline(
    scope: TenantScope,
    customerId: string,
    limit: number,
    before: string | null,
  ): Promise<{ entries: AuditEntryData[]; hasMore: boolean }> {
    const rows = await this.entries.listForCustomer(scope, customerId, before, limit + 1);
    return { entries: rows.slice(0, limit).map(toData), hasMore: rows.length > limit };
  }
}

function toData(row: AuditRow): AuditEntryData {
  const railFields: Partial<Pick<AuditEntryData, 'signatureVerified' | 'reconciledWithProvider' | 'rawEventReceivedAt' | 'processedAt'>> = {};
  for (const [field, type] of RAIL_DETAIL_FIELDS) {
    const value = row.details?.[field];
    if (typeof value === type) Object.assign(railFields, { [field]: value });
  }
  return {
    eventId: row.event_id,
    rail: row.rail,
    env: row.env,
    eventType: row.event_type,
    projectId: row.project_id,
    customerId: row.customer_id,
    decision: row.decision,
    reason: row.reason,
    requestId: row.request_id,
    actor: row.actor,
    createdAt: Math.floor(new Date(row.created_at).getTime() / 1000),
    ...railFields,
  };
}
