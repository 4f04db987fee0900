import { Injectable } from '@nestjs/common';
import { Sql, type TenantScope } from '#platform';

export interface EventErasureSubject {
  customerId: string;
  userIds: string[];
  anonymousIds: string[];
  /** Only the listed devices are forgotten; the customer's other events stay. */
  deviceOnly?: boolean;
}

export const EVENT_ERASURE_HOOK_NAME = 'telemetry.events';

const ANONYMISE = `
  SET developer_user_id = NULL, anonymous_id = NULL, service_customer_id = NULL, customer_id = NULL,
      properties = '{}'::json, tags = NULL, category_tags = NULL, context = NULL`;

/** The erasure hook's statements (registered with the identity context's ErasureHooks), in the erasure's ambient transaction. */
@Injectable()
export class EventErasureRepository {
  constructor(private readonly sql: Sql) {}

  anonymise(scope: TenantScope, subject: EventErasureSubject): Promise<number> {
    return anonymiseCustomerEvents(scope, subject, this.sql);
  }
}

/** The erasure's statements alone, in the caller's ambient transaction (a test holding locks of its own drives them directly). */
export function anonymiseCustomerEvents(scope: TenantScope, subject: EventErasureSubject, sql: Sql): Promise<number> {
  return anonymise(scope, subject, (text, params) => sql.affected(text, params));
}

/**
 * Anonymises a forgotten customer's events, each statement through `run`. Identity hints, the
 * resolved customer, properties, tags, category tags and context are removed; name, time, level
 * and fingerprint stay, so aggregate counts and error issues remain. The customer's hint
 * sets leave the resolver's queue. Every statement is driven by an index led by
 * (project_id, env): the resolved customer, and each hint of the still-unresolved events.
 * Returns how many event rows were anonymised.
 */
async function anonymise(scope: TenantScope, subject: EventErasureSubject, run: (sql: string, params: unknown[]) => Promise<number>): Promise<number> {
  const base = [scope.projectId, scope.env];
  const affected = (sql: string, params: unknown[]) => run(sql, [...base, ...params]);
  // Hint sets first, then events: the lock order of ingestion (one statement upserts the
  // batch's hint sets, then its events) and of the resolver (the set row, then its events).
  // The other order deadlocks with a retry or a resolution of the same customer's events.
  if (subject.deviceOnly) {
    const device = `project_id = $1 AND env = $2 AND anonymous_id = ANY($3::text[]) AND (customer_id IS NULL OR customer_id = $4)`;
    await affected(`DELETE FROM event_identity_hints WHERE ${device}`, [subject.anonymousIds, subject.customerId]);
    return affected(`UPDATE events ${ANONYMISE} WHERE ${device}`, [subject.anonymousIds, subject.customerId]);
  }
  await affected(`DELETE FROM event_identity_hints WHERE project_id = $1 AND env = $2 AND (customer_id = $3 OR service_customer_id = $3)`, [
    subject.customerId,
  ]);
  if (subject.userIds.length > 0) {
    await affected(`DELETE FROM event_identity_hints WHERE project_id = $1 AND env = $2 AND developer_user_id = ANY($3::text[])`, [subject.userIds]);
  }
  if (subject.anonymousIds.length > 0) {
    await affected(`DELETE FROM event_identity_hints WHERE project_id = $1 AND env = $2 AND anonymous_id = ANY($3::text[])`, [subject.anonymousIds]);
  }
  let total = await affected(`UPDATE events ${ANONYMISE} WHERE project_id = $1 AND env = $2 AND customer_id = $3`, [subject.customerId]);
  total += await affected(`UPDATE events ${ANONYMISE} WHERE project_id = $1 AND env = $2 AND customer_id IS NULL AND service_customer_id = $3`, [
    subject.customerId,
  ]);
  if (subject.userIds.length > 0) {
    total += await affected(`UPDATE events ${ANONYMISE} WHERE project_id = $1 AND env = $2 AND customer_id IS NULL AND developer_user_id = ANY($3::text[])`, [
      subject.userIds,
    ]);
  }
  if (subject.anonymousIds.length > 0) {
    total += await affected(`UPDATE events ${ANONYMISE} WHERE project_id = $1 AND env = $2 AND customer_id IS NULL AND anonymous_id = ANY($3::text[])`, [
      subject.anonymousIds,
    ]);
  }
  return total;
}
