import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { Clock, type TenantScope } from '../../platform/src/index.js';
import type { AuditEntryData } from './audit-entry.view.js';

export interface AuditEntryInput {
  /** Caller-chosen id; generated as `${eventIdPrefix ?? 'evt_'}<24 random chars>` when absent. */
  eventId?: string;
  eventIdPrefix?: string;
  rail: string;
  eventType: string;
  customerId: string | null;
  decision: string;
  reason: string;
  actor: string;
  requestId: string | null;
  /** Never personal data: the journal outlives erasure (24 months). */
  details?: Record<string, unknown>;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** 24 characters from [a-z0-9], uniformly (rejection sampling). */
export function randomAuditSuffix(length = 24): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 252 && out.length < length) out += ALPHABET[byte % 36];
    }
  }
  return out;
}

interface AuditRow {
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
  created_at: Date;
}

/**
 * The append-only journal. Writers append inside their own transaction (the manager they
 * pass), so a state change and its audit entry commit or roll back together.
 */
@Injectable()
export class AuditJournal {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

  async append(manager: EntityManager, scope: TenantScope, entry: AuditEntryInput): Promise<{ eventId: string }> {
    const eventId = entry.eventId ?? `${entry.eventIdPrefix ?? 'evt_'}${randomAuditSuffix()}`;
    await manager.query(
      `INSERT INTO audit_entries
         (project_id, env, event_id, rail, event_type, customer_id, decision, reason, actor, request_id, details, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12)`,
      [
        scope.projectId,
        scope.env,
        eventId,
        entry.rail,
        entry.eventType,
        entry.customerId,
        entry.decision,
        entry.reason,
        entry.actor,
        entry.requestId,
        JSON.stringify(entry.details ?? {}),
        this.clock.now(),
      ],
    );
    return { eventId };
  }

  /** One entry of the scope, or null (unknown id, or another project's or environment's). */
  async find(scope: TenantScope, eventId: string): Promise<AuditEntryData | null> {
    const rows: AuditRow[] = await this.dataSource.query(
      `SELECT event_id, rail, env, event_type, project_id, customer_id, decision, reason, request_id, actor, created_at
         FROM audit_entries
        WHERE project_id = $1 AND env = $2 AND event_id = $3`,
      [scope.projectId, scope.env, eventId],
    );
    const row = rows[0];
    if (!row) return null;
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
    };
  }
}
