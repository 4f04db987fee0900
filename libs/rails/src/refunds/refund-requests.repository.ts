import { Injectable } from '@nestjs/common';
import { type CrossTenant, type Env, Sql, type TenantScope } from '#platform';
import type { RefundRequestAnswer, RefundRequestState } from './consumption.js';

/** One refund request as stored (times in Unix seconds). */
export interface RefundRequestRecord {
  id: string;
  rail: 'ios_store';
  subscriptionId: string;
  transactionId: string | null;
  customerId: string;
  receivedAt: number;
  deadline: number;
  state: RefundRequestState;
  answer: RefundRequestAnswer | null;
}

/** A request due for its automatic answer, found across projects (it carries its scope). */
export interface DueRefundRequest extends RefundRequestRecord {
  projectId: string;
  env: Env;
  attempts: number;
}

interface Row {
  project_id: string;
  env: Env;
  id: string;
  subscription_id: string;
  transaction_id: string | null;
  customer_id: string;
  received_at_s: string;
  deadline_s: string;
  state: RefundRequestState;
  answer: RefundRequestAnswer | null;
  attempts: number;
}

const columns = (t: string) => `${t}.project_id, ${t}.env, ${t}.id, ${t}.subscription_id, ${t}.transaction_id, ${t}.customer_id,
  extract(epoch FROM ${t}.received_at)::bigint AS received_at_s, extract(epoch FROM ${t}.deadline)::bigint AS deadline_s, ${t}.state, ${t}.answer,
  ${t}.attempts`;
const COLUMNS = columns('refund_requests');

const toRecord = (row: Row): RefundRequestRecord => ({
  id: row.id,
  rail: 'ios_store',
  subscriptionId: row.subscription_id,
  transactionId: row.transaction_id,
  customerId: row.customer_id,
  receivedAt: Number(row.received_at_s),
  deadline: Number(row.deadline_s),
  state: row.state,
  answer: row.answer,
});

/** SQL of the refund requests: every method takes the tenant scope first (the due sweep is a documented cross-tenant scan). */
@Injectable()
export class RefundRequestsRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Records a request once: a request already recorded (a re-sent notification) stays as it
   * is. Returns whether this call recorded it.
   */
  async record(
    scope: TenantScope,
    request: { id: string; subscriptionId: string; transactionId: string | null; customerId: string; receivedAt: number; deadline: number },
    nowMs: number,
  ): Promise<boolean> {
    const affected = await this.sql.affected(
      `INSERT INTO refund_requests (project_id, env, id, rail, subscription_id, transaction_id, customer_id, received_at, deadline, state,
                                    next_attempt_at_ms, created_at, updated_at)
       VALUES ($1, $2, $3, 'ios_store', $4, $5, $6, to_timestamp($7::bigint), to_timestamp($8::bigint), 'pending', $9::bigint,
               to_timestamp($9::bigint / 1000.0), to_timestamp($9::bigint / 1000.0))
       ON CONFLICT ON CONSTRAINT refund_requests_pk DO NOTHING`,
      [scope.projectId, scope.env, request.id, request.subscriptionId, request.transactionId, request.customerId, request.receivedAt, request.deadline, nowMs],
    );
    return affected > 0;
  }

  async find(scope: TenantScope, id: string): Promise<RefundRequestRecord | null> {
    const row = await this.sql.one<Row>(`SELECT ${COLUMNS} FROM refund_requests WHERE project_id = $1 AND env = $2 AND id = $3`, [
      scope.projectId,
      scope.env,
      id,
    ]);
    return row ? toRecord(row) : null;
  }

  /** The request, locked until the transaction ends (an answer and the automatic sender wait for each other). */
  async lock(scope: TenantScope, id: string): Promise<RefundRequestRecord | null> {
    const row = await this.sql.one<Row>(`SELECT ${COLUMNS} FROM refund_requests WHERE project_id = $1 AND env = $2 AND id = $3 FOR UPDATE`, [
      scope.projectId,
      scope.env,
      id,
    ]);
    return row ? toRecord(row) : null;
  }

  /** Newest first; `state` filters. At most `limit`. */
  async list(scope: TenantScope, options: { state: RefundRequestState | null; limit: number }): Promise<RefundRequestRecord[]> {
    const rows = await this.sql.rows<Row>(
      `SELECT ${COLUMNS} FROM refund_requests
        WHERE project_id = $1 AND env = $2 AND ($3::text IS NULL OR state = $3)
        ORDER BY received_at DESC, id DESC
        LIMIT $4`,
      [scope.projectId, scope.env, options.state, options.limit],
    );
    return rows.map(toRecord);
  }

  /** Marks a pending request sent with its answer. False when it was no longer pending. */
  async markSent(scope: TenantScope, id: string, answer: RefundRequestAnswer, nowMs: number): Promise<boolean> {
    const affected = await this.sql.affected(
      `UPDATE refund_requests SET state = 'sent', answer = $4::jsonb, sent_at = to_timestamp($5::bigint / 1000.0),
              updated_at = to_timestamp($5::bigint / 1000.0), last_error = NULL
        WHERE project_id = $1 AND env = $2 AND id = $3 AND state = 'pending'`,
      [scope.projectId, scope.env, id, JSON.stringify(answer), nowMs],
    );
    return affected > 0;
  }

  /** Records a failed automatic answer and when to try again. */
  async deferAttempt(scope: TenantScope, id: string, attempt: { nextAttemptAtMs: number; error: string; nowMs: number }): Promise<void> {
    await this.sql.affected(
      `UPDATE refund_requests SET attempts = attempts + 1, next_attempt_at_ms = $4::bigint, last_error = left($5, 500),
              updated_at = to_timestamp($6::bigint / 1000.0)
        WHERE project_id = $1 AND env = $2 AND id = $3 AND state = 'pending'`,
      [scope.projectId, scope.env, id, attempt.nextAttemptAtMs, attempt.error, attempt.nowMs],
    );
  }

  /** A merge or fold: the first customer's requests become the other's. */
  async reassignCustomer(scope: TenantScope, fromCustomerId: string, toCustomerId: string, nowMs: number): Promise<number> {
    return this.sql.affected(
      `UPDATE refund_requests SET customer_id = $4, updated_at = to_timestamp($5::bigint / 1000.0)
        WHERE project_id = $1 AND env = $2 AND customer_id = $3`,
      [scope.projectId, scope.env, fromCustomerId, toCustomerId, nowMs],
    );
  }

  /** Pending requests whose deadline passed at `nowMs` become `expired`; answers how many. */
  async expireDue(_sweep: CrossTenant, nowMs: number): Promise<number> {
    return this.sql.affected(
      `UPDATE refund_requests SET state = 'expired', updated_at = to_timestamp($1::bigint / 1000.0)
        WHERE state = 'pending' AND deadline <= to_timestamp($1::bigint / 1000.0)`,
      [nowMs],
    );
  }

  /**
   * The oldest pending request due for its automatic answer at `nowMs` (before its deadline,
   * its next attempt due, its project's iOS rail enabled and answering `auto` with the
   * customer's consent), locked until the transaction ends; SKIP LOCKED, so two replicas
   * never answer one request at once. Null when none is due.
   */
  async claimDue(_sweep: CrossTenant, nowMs: number): Promise<DueRefundRequest | null> {
    const row = await this.sql.one<Row>(
      `SELECT ${columns('r')}
         FROM refund_requests r
         JOIN rail_settings s ON s.project_id = r.project_id AND s.rail = 'ios_store' AND s.enabled
        WHERE r.state = 'pending' AND r.deadline > to_timestamp($1::bigint / 1000.0) AND r.next_attempt_at_ms <= $1::bigint
          AND s.settings #>> '{consumption,mode}' = 'auto' AND s.settings #> '{consumption,customerConsented}' = 'true'::jsonb
        ORDER BY r.next_attempt_at_ms, r.received_at
        LIMIT 1
        FOR UPDATE OF r SKIP LOCKED`,
      [nowMs],
    );
    return row ? { ...toRecord(row), projectId: row.project_id, env: row.env, attempts: row.attempts } : null;
  }
}
