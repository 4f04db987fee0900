import { Injectable } from '@nestjs/common';
import { ADVISORY_LOCKS, type CrossTenant, type TenantScope, Sql, prepared } from '#platform';

/** One entry to store; the journal has chosen its id. */
export interface AuditEntryWrite {
  eventId: string;
  rail: string;
  eventType: string;
  customerId: string | null;
  decision: string;
  reason: string;
  actor: string;
  requestId: string | null;
  details: Record<string, unknown>;
}

export interface AuditRow {
  event_id: string;
  rail: string;
  env: string;
  event_type: string;
  project_id: string;
  customer_id: string | null;
  decision: string;
  reason: string;
  request_id: string | null;
  actor: string;
  details: Record<string, unknown> | null;
  created_at: Date;
}

/** One entry (every manual grant and revoke, every rail change writes one): prepared once per connection. */
const INSERT_ENTRY = prepared(`INSERT INTO audit_entries
         (project_id, env, event_id, rail, event_type, customer_id, decision, reason, actor, request_id, details, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12)`);

/** The append-only `audit_entries` table. Writes run in the caller's (ambient) transaction. */
@Injectable()
export class AuditEntriesRepository {
  constructor(private readonly sql: Sql) {}

  async insert(scope: TenantScope, entry: AuditEntryWrite, at: Date): Promise<void> {
    await this.sql.run(INSERT_ENTRY, [
      scope.projectId,
      scope.env,
      entry.eventId,
      entry.rail,
      entry.eventType,
      entry.customerId,
      entry.decision,
      entry.reason,
      entry.actor,
      entry.requestId,
      JSON.stringify(entry.details),
      at,
    ]);
  }

  /** Many entries in one statement, in the order given. */
  async insertMany(scope: TenantScope, entries: readonly AuditEntryWrite[], at: Date): Promise<void> {
    await this.sql.run(
      `INSERT INTO audit_entries
         (project_id, env, event_id, rail, event_type, customer_id, decision, reason, actor, request_id, details, created_at)
       SELECT $1, $2, e.event_id, e.rail, e.event_type, e.customer_id, e.decision, e.reason, e.actor, e.request_id, e.details, $12
         FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::jsonb[])
              WITH ORDINALITY AS e(event_id, rail, event_type, customer_id, decision, reason, actor, request_id, details, ord)
        ORDER BY e.ord`,
      [
        scope.projectId,
        scope.env,
        entries.map((e) => e.eventId),
        entries.map((e) => e.rail),
        entries.map((e) => e.eventType),
        entries.map((e) => e.customerId),
        entries.map((e) => e.decision),
        entries.map((e) => e.reason),
        entries.map((e) => e.actor),
        entries.map((e) => e.requestId),
        entries.map((e) => JSON.stringify(e.details)),
        at,
      ],
    );
  }

  /** One entry of the scope, or null. */
  find(scope: TenantScope, eventId: string): Promise<AuditRow | null> {
    return this.sql.one<AuditRow>(
      `SELECT event_id, rail, env, event_type, project_id, customer_id, decision, reason, request_id, actor, details, created_at
         FROM audit_entries
        WHERE project_id = $1 AND env = $2 AND event_id = $3`,
      [scope.projectId, scope.env, eventId],
    );
  }

  /** Entries of the scope by id (audit_entries_event_uq), in no particular order. */
  findMany(scope: TenantScope, eventIds: readonly string[]): Promise<AuditRow[]> {
    if (eventIds.length === 0) return Promise.resolve([]);
    return this.sql.rows<AuditRow>(
      `SELECT event_id, rail, env, event_type, project_id, customer_id, decision, reason, request_id, actor, details, created_at
         FROM audit_entries WHERE project_id = $1 AND env = $2 AND event_id = ANY($3::text[])`,
      [scope.projectId, scope.env, eventIds],
    );
  }

  /**
   * A customer's entries newest first (audit_entries_customer_idx read backwards), at most
   * `limit`, older than the entry `before` when given (same created_at: smaller id).
   */
  listForCustomer(scope: TenantScope, customerId: string, before: string | null, limit: number): Promise<AuditRow[]> {
    return this.sql.rows<AuditRow>(
      `SELECT event_id, rail, env, event_type, project_id, customer_id, decision, reason, request_id, actor, details, created_at
         FROM audit_entries a
        WHERE project_id = $1 AND env = $2 AND customer_id = $3
          AND ($4::text IS NULL OR (created_at, id) < (SELECT b.created_at, b.id FROM audit_entries b
                                                        WHERE b.project_id = $1 AND b.env = $2 AND b.event_id = $4))
        ORDER BY created_at DESC, id DESC LIMIT $5`,
      [scope.projectId, scope.env, customerId, before, limit],
    );
  }

  /**
   * Deletes, in its own transaction holding the transaction-level retention lock, at most
   * `limit` entries created before `cutoff` (of one project when `projectId` is given), oldest
   * first. Returns how many, or null when another replica holds the lock.
   */
  async purgeBatch(_retention: CrossTenant, cutoff: Date, limit: number, projectId: string | null): Promise<number | null> {
    return this.sql.transaction(async () => {
      const lock = await this.sql.one<{ locked: boolean }>(`SELECT pg_try_advisory_xact_lock($1) AS locked`, [ADVISORY_LOCKS.auditRetention]);
      if (!lock?.locked) return null;
      // The journal's trigger refuses deletes unless this is set (retention only).
      await this.sql.run(`SET LOCAL audit.retention_purge = 'on'`);
      return this.sql.affected(
        `DELETE FROM audit_entries
          WHERE id IN (SELECT id FROM audit_entries
                        WHERE created_at < $1 AND ($3::text IS NULL OR project_id = $3)
                        ORDER BY created_at LIMIT $2)`,
        [cutoff, limit, projectId],
      );
    });
  }
}
