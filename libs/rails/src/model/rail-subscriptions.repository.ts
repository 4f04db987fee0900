import { Injectable } from '@nestjs/common';
import { type TenantScope, Sql } from '#platform';
import {
  type CustomerRailStatus,
  type PurchaseRail,
  type RailDecision,
  type RailState,
  type RailSubscriptionItem,
  type RailSubscriptionRecord,
  customerRailStatus,
  itemsOf,
  sameItems,
} from './rail-model.js';
import { SUBSCRIPTION_STATES, type Subscription } from '../lifecycle/subscription.js';
import { type SubscriptionHistoryWrite, historyParam } from './subscription-history.repository.js';

interface SubscriptionRow {
  rail: PurchaseRail;
  subscription_id: string;
  customer_id: string;
  product_id: string;
  state: RailState;
  valid_until: Date | null;
  rail_time_ms: string | number;
  raw_status: string | null;
  last_event_id: string | null;
  updated_at: Date;
  subscription: unknown;
}

const SUBSCRIPTION_COLUMNS =
  'rail, subscription_id, customer_id, product_id, state, valid_until, rail_time_ms, raw_status, last_event_id, updated_at, subscription';

/** The stored subscription object, or null when absent or not an object of a known state (written before, or by hand). */
function subscriptionOf(value: unknown): Subscription | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const object = value as Partial<Subscription>;
  return object.object === 'subscription' && (SUBSCRIPTION_STATES as readonly unknown[]).includes(object.state) ? (object as Subscription) : null;
}

const toSeconds = (date: Date): number => Math.floor(new Date(date).getTime() / 1000);
const fromSeconds = (seconds: number | null): Date | null => (seconds === null ? null : new Date(seconds * 1000));

/**
 * A subscription with several products (a card subscription with several items) keeps its
 * item list in `raw_status`, after the rail's status word: `<status> items=<JSON array of
 * {productId, validUntil}>` (no schema change; docs/decisions/card-subscriptions-with-several-items.md).
 * A single item equal to (product_id, valid_until) is not written, so single-product records
 * keep the bare status word. Only this repository reads or writes the suffix.
 */
const ITEMS_MARK = ' items=';

function encodeRawStatus(write: RailSubscriptionWrite): string | null {
  const items = itemsOf(write);
  if (sameItems(items, [{ productId: write.productId, validUntil: write.validUntil }])) return write.rawStatus;
  return `${write.rawStatus ?? ''}${ITEMS_MARK}${JSON.stringify(items)}`;
}

function isItem(value: unknown): value is RailSubscriptionItem {
  if (typeof value !== 'object' || value === null) return false;
  const item = value as Record<string, unknown>;
  return typeof item.productId === 'string' && item.productId.length > 0 && (item.validUntil === null || Number.isInteger(item.validUntil));
}

function decodeRawStatus(raw: string | null, productId: string, validUntil: number | null): { rawStatus: string | null; items: RailSubscriptionItem[] } {
  const single = { rawStatus: raw, items: [{ productId, validUntil }] };
  const at = raw?.indexOf(`${ITEMS_MARK}[`) ?? -1;
  if (raw === null || at < 0) return single;
  try {
    const items: unknown = JSON.parse(raw.slice(at + ITEMS_MARK.length));
    if (!Array.isArray(items) || items.length === 0 || !items.every(isItem)) return single;
    return { rawStatus: raw.slice(0, at) || null, items: items.map((item) => ({ productId: item.productId, validUntil: item.validUntil })) };
  } catch {
    return single;
  }
}

function toRecord(row: SubscriptionRow): RailSubscriptionRecord {
  const validUntil = row.valid_until === null ? null : toSeconds(row.valid_until);
  const { rawStatus, items } = decodeRawStatus(row.raw_status, row.product_id, validUntil);
  return {
    rail: row.rail,
    subscriptionId: row.subscription_id,
    customerId: row.customer_id,
    productId: row.product_id,
    state: row.state,
    validUntil,
    items,
    railTimeMs: Number(row.rail_time_ms),
    rawStatus,
    lastEventId: row.last_event_id,
    updatedAt: toSeconds(row.updated_at),
    subscription: subscriptionOf(row.subscription),
  };
}

/**
 * A record to write; `items` defaults to the one item (productId, validUntil). `subscription`
 * is the record's subscription object after the write: absent or null stores NULL (a rail that
 * does not derive the object yet leaves none that could contradict the record's state).
 */
export type RailSubscriptionWrite = Omit<RailSubscriptionRecord, 'updatedAt' | 'items' | 'subscription'> & {
  items?: RailSubscriptionItem[];
  subscription?: Subscription | null;
  /** The change's lifecycle events, appended to the customer history by the same statement (in this order). */
  history?: readonly SubscriptionHistoryWrite[];
};

/**
 * The change's customer history rows ($14, a JSON array in announcement order), riding on the
 * record's upsert as a data-modifying CTE: the change costs no statement more.
 */
const HISTORY_CTE = `history AS (
         INSERT INTO subscription_history
                (project_id, env, id, customer_id, type, occurred_at_ms, rail, subscription_id, product_id, audit_event_id, rail_event_id, details, recorded_at)
         SELECT $1, $2, e.value->>'id', e.value->>'customerId', e.value->>'type', (e.value->>'occurredAtMs')::bigint, e.value->>'rail',
                e.value->>'subscriptionId', e.value->>'productId', e.value->>'auditEventId', e.value->>'railEventId', e.value->'details', $12
           FROM jsonb_array_elements($14::jsonb) WITH ORDINALITY AS e(value, ord)
          ORDER BY e.ord
       )`;

/** The record upsert (the caller holds its lock, or it is new); its parameters are upsertParams'. */
const UPSERT_SQL = `INSERT INTO rail_subscriptions
         (project_id, env, rail, subscription_id, customer_id, product_id, state, valid_until, rail_time_ms, raw_status, last_event_id, created_at, updated_at,
          subscription, lifecycle_state)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13::jsonb, $13::jsonb->>'state')
       ON CONFLICT ON CONSTRAINT rail_subscriptions_pk DO UPDATE
          SET customer_id = EXCLUDED.customer_id, product_id = EXCLUDED.product_id, state = EXCLUDED.state,
              valid_until = EXCLUDED.valid_until, rail_time_ms = EXCLUDED.rail_time_ms, raw_status = EXCLUDED.raw_status,
              last_event_id = COALESCE(EXCLUDED.last_event_id, rail_subscriptions.last_event_id), updated_at = EXCLUDED.updated_at,
              subscription = EXCLUDED.subscription, lifecycle_state = EXCLUDED.lifecycle_state`;

function upsertParams(scope: TenantScope, write: RailSubscriptionWrite, now: Date): unknown[] {
  return [
    scope.projectId,
    scope.env,
    write.rail,
    write.subscriptionId,
    write.customerId,
    write.productId,
    write.state,
    fromSeconds(write.validUntil),
    write.railTimeMs,
    encodeRawStatus(write),
    write.lastEventId,
    now,
    write.subscription ? JSON.stringify(write.subscription) : null,
    historyParam(write.history ?? []),
  ];
}

/** A rail purchase id (iOS transactionId …) already seen, with what it did. */
export interface RailTransactionRecord {
  rail: PurchaseRail;
  transactionId: string;
  subscriptionId: string;
  customerId: string;
  decision: RailDecision;
  auditEventId: string | null;
}

/** A notification already processed, with its first answer. */
export interface RailNotificationRecord {
  rail: PurchaseRail;
  notificationId: string;
  env: TenantScope['env'];
  eventType: string;
  decision: RailDecision;
  customerId: string | null;
  auditEventId: string | null;
  /** Unix ms. */
  receivedAt: number;
  processedAt: number;
}

/**
 * SQL of the rail records. Every method takes the tenant scope first; notification
 * de-duplication takes the project only (a rail's notification id is unique on the rail,
 * and Android learns the environment after reading the purchase). Statements join the
 * ambient transaction.
 */
@Injectable()
export class RailSubscriptionsRepository {
  constructor(private readonly sql: Sql) {}

  /**
   * Serialises writers of one subscription until the transaction ends (a transaction-level
   * advisory lock), so the first record of a subscription is also applied one at a time.
   */
  async serialize(scope: TenantScope, rail: PurchaseRail, subscriptionId: string): Promise<void> {
    await this.sql.rows(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [this.lockKey(scope, rail, subscriptionId)]);
  }

  /** The key of serialize's lock. */
  private lockKey(scope: TenantScope, rail: PurchaseRail, subscriptionId: string): string {
    return `rail_subscriptions|${scope.projectId}|${scope.env}|${rail}|${subscriptionId}`;
  }

  /**
   * Serialises writers of the customers' rail-derived rows on `rail` until the transaction ends,
   * customers in sorted order (every writer takes them in one order: no lock cycles).
   */
  async serializeCustomers(scope: TenantScope, rail: PurchaseRail, customerIds: readonly string[]): Promise<void> {
    for (const customerId of [...new Set(customerIds)].sort()) await this.serialize(scope, rail, `customer:${customerId}`);
  }

  /**
   * lock, and the writers' locks of the customers' rail-derived rows (serializeCustomers) of
   * `customerIds` and of the record's customer, in one statement. `serializeFirst`: the
   * subscription's lock (serialize) is taken by the same statement, before the record is read.
   * The record is locked after the subscription's lock, the customers after the record, in the
   * order every writer takes them. Answers the record and the customers locked.
   *
   * A statement's snapshot predates its waits: a record a writer of the subscription updated
   * while this statement waited for the subscription's lock is read as that writer left it (the
   * row lock reads the newest version), but a record it created is not seen. So when the
   * subscription's lock is taken here and no record is found, it is read again by a statement
   * of its own (the customers then are those of `customerIds` only).
   */
  async lockWithCustomers(
    scope: TenantScope,
    rail: PurchaseRail,
    subscriptionId: string,
    customerIds: readonly string[],
    serializeFirst: boolean,
  ): Promise<{ record: RailSubscriptionRecord | null; customersLocked: string[] }> {
    const rows: (SubscriptionRow & { locked: string[] })[] = await this.sql.rows(
      `WITH serialized AS MATERIALIZED (SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0))) AS n FROM unnest($5::text[]) AS k),
       rec AS MATERIALIZED (
         SELECT ${SUBSCRIPTION_COLUMNS} FROM rail_subscriptions
          WHERE project_id = $1 AND env = $2 AND rail = $3 AND subscription_id = $4 AND (SELECT n FROM serialized) IS NOT NULL
         FOR UPDATE),
       customers AS MATERIALIZED (
         SELECT array_agg(c ORDER BY c COLLATE "C") AS locked, count(pg_advisory_xact_lock(hashtextextended($7 || c, 0))) AS n
           FROM (SELECT c FROM (SELECT unnest($6::text[]) AS c UNION SELECT customer_id FROM rec) AS u ORDER BY c COLLATE "C") AS sorted)
       SELECT rec.*, (SELECT locked FROM customers) AS locked FROM (SELECT 1) AS one LEFT JOIN rec ON true`,
      [
        scope.projectId,
        scope.env,
        rail,
        subscriptionId,
        serializeFirst ? [this.lockKey(scope, rail, subscriptionId)] : [],
        [...new Set(customerIds)],
        this.lockKey(scope, rail, 'customer:'),
      ],
    );
    const row = rows[0];
    const customersLocked = row?.locked ?? [];
    if (row && row.subscription_id !== null) return { record: toRecord(row), customersLocked };
    return { record: serializeFirst ? await this.lock(scope, rail, subscriptionId) : null, customersLocked };
  }

  /** Reads one subscription record and locks it until the transaction ends. */
  async lock(scope: TenantScope, rail: PurchaseRail, subscriptionId: string): Promise<RailSubscriptionRecord | null> {
    const rows: SubscriptionRow[] = await this.sql.rows(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM rail_subscriptions
        WHERE project_id = $1 AND env = $2 AND rail = $3 AND subscription_id = $4
        FOR UPDATE`,
      [scope.projectId, scope.env, rail, subscriptionId],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async find(scope: TenantScope, rail: PurchaseRail, subscriptionId: string): Promise<RailSubscriptionRecord | null> {
    const rows: SubscriptionRow[] = await this.sql.rows(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM rail_subscriptions
        WHERE project_id = $1 AND env = $2 AND rail = $3 AND subscription_id = $4`,
      [scope.projectId, scope.env, rail, subscriptionId],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Subscription records of one customer (every rail, or one), newest change first. */
  async listForCustomer(scope: TenantScope, customerId: string, rail?: PurchaseRail): Promise<RailSubscriptionRecord[]> {
    const rows: SubscriptionRow[] = await this.sql.rows(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM rail_subscriptions
        WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND ($4::text IS NULL OR rail = $4)
        ORDER BY updated_at DESC, subscription_id`,
      [scope.projectId, scope.env, customerId, rail ?? null],
    );
    return rows.map(toRecord);
  }

  /**
   * Migration's gate: whether a customer has a live subscription on a rail at `nowMs`
   * (`live`), only lapsed ones (`lapsed`), or none (`none`).
   */
  async customerStatus(scope: TenantScope, customerId: string, rail: PurchaseRail, nowMs: number): Promise<CustomerRailStatus> {
    return customerRailStatus(await this.listForCustomer(scope, customerId, rail), nowMs);
  }

  /**
   * Migration's gate for many customers at once (one statement): per customer, `live` when
   * any rail holds a live subscription at `nowMs`, `lapsed` when it only holds ended ones,
   * `none` when no rail record names the customer.
   */
  async statusOfCustomers(scope: TenantScope, customerIds: readonly string[], nowMs: number): Promise<Map<string, CustomerRailStatus>> {
    const status = new Map<string, CustomerRailStatus>();
    if (customerIds.length === 0) return status;
    const rows: { customer_id: string; state: RailState; valid_until: Date | null }[] = await this.sql.rows(
      `SELECT customer_id, state, valid_until FROM rail_subscriptions
        WHERE project_id = $1 AND env = $2 AND customer_id = ANY($3::text[])`,
      [scope.projectId, scope.env, [...new Set(customerIds)]],
    );
    const byCustomer = new Map<string, { state: RailState; validUntil: number | null }[]>();
    for (const row of rows) {
      const list = byCustomer.get(row.customer_id) ?? [];
      list.push({ state: row.state, validUntil: row.valid_until === null ? null : toSeconds(row.valid_until) });
      byCustomer.set(row.customer_id, list);
    }
    for (const customerId of customerIds) status.set(customerId, customerRailStatus(byCustomer.get(customerId) ?? [], nowMs));
    return status;
  }

  /** Insert or overwrite one record (the caller holds its lock, or it is new). */
  async upsert(scope: TenantScope, write: RailSubscriptionWrite, now: Date): Promise<RailSubscriptionRecord> {
    const rows: SubscriptionRow[] = await this.sql.rows(`WITH ${HISTORY_CTE} ${UPSERT_SQL} RETURNING ${SUBSCRIPTION_COLUMNS}`, upsertParams(scope, write, now));
    return toRecord(rows[0]);
  }

  /**
   * `upsert`, and in the same statement the records of the written customer on the record's
   * rail as listForCustomer(scope, customerId, rail) reads them after it (the record as written
   * among them). The caller serialises the customer's writers before (serializeCustomers), so
   * the statement's snapshot holds what they committed.
   */
  async upsertListingCustomer(
    scope: TenantScope,
    write: RailSubscriptionWrite,
    now: Date,
  ): Promise<{ record: RailSubscriptionRecord; customerRecords: RailSubscriptionRecord[] }> {
    const rows: (SubscriptionRow & { is_written: boolean })[] = await this.sql.rows(
      `WITH ${HISTORY_CTE}, written AS (${UPSERT_SQL} RETURNING ${SUBSCRIPTION_COLUMNS})
       SELECT true AS is_written, ${SUBSCRIPTION_COLUMNS} FROM written
       UNION ALL
       SELECT false AS is_written, ${SUBSCRIPTION_COLUMNS} FROM rail_subscriptions
        WHERE project_id = $1 AND env = $2 AND customer_id = $5 AND rail = $3 AND subscription_id <> $4
       ORDER BY updated_at DESC, subscription_id`,
      upsertParams(scope, write, now),
    );
    const written = rows.find((row) => row.is_written);
    if (!written) throw new Error(`subscription ${write.subscriptionId} was not written`);
    return { record: toRecord(written), customerRecords: rows.map(toRecord) };
  }

  /**
   * Subscription records of one customer for the subscription reads: live ones first (an
   * active record not past its end at `nowMs`), then the latest change first; at most `limit`.
   */
  async listForReads(scope: TenantScope, customerId: string, nowMs: number, limit: number): Promise<RailSubscriptionRecord[]> {
    const rows: SubscriptionRow[] = await this.sql.rows(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM rail_subscriptions
        WHERE project_id = $1 AND env = $2 AND customer_id = $3
        ORDER BY (state = 'active' AND (valid_until IS NULL OR valid_until > $4)) DESC, updated_at DESC, rail, subscription_id
        LIMIT $5`,
      [scope.projectId, scope.env, customerId, new Date(nowMs), limit],
    );
    return rows.map(toRecord);
  }

  /** Subscriptions in a free trial that still gives access at `nowMs` (their stored object says so), per rail (absent: none). */
  async countActiveTrials(scope: TenantScope, nowMs: number): Promise<Map<PurchaseRail, number>> {
    const rows: { rail: PurchaseRail; n: string | number }[] = await this.sql.rows(
      `SELECT rail, count(*) AS n FROM rail_subscriptions
        WHERE project_id = $1 AND env = $2 AND lifecycle_state = 'trialing'
          AND (subscription->>'accessEndsAt' IS NULL OR (subscription->>'accessEndsAt')::bigint > $3)
        GROUP BY rail`,
      [scope.projectId, scope.env, Math.floor(nowMs / 1000)],
    );
    return new Map(rows.map((r) => [r.rail, Number(r.n)]));
  }

  /** Moves every subscription record of `fromCustomerId` to `toCustomerId` (a rail-only customer folded into another). */
  /** Moves every subscription record of one customer to another; answers the records moved (as they are after the move). */
  async reassignCustomer(scope: TenantScope, fromCustomerId: string, toCustomerId: string, now: Date): Promise<RailSubscriptionRecord[]> {
    const rows: SubscriptionRow[] = await this.sql.rows(
      `UPDATE rail_subscriptions SET customer_id = $4, updated_at = $5
        WHERE project_id = $1 AND env = $2 AND customer_id = $3
        RETURNING ${SUBSCRIPTION_COLUMNS}`,
      [scope.projectId, scope.env, fromCustomerId, toCustomerId, now],
    );
    return rows.map(toRecord);
  }

  /**
   * Records a rail purchase id; returns null when this call recorded it, else the record
   * already there. A concurrent insert of the same id makes this wait for that transaction.
   */
  async claimTransaction(scope: TenantScope, record: RailTransactionRecord, now: Date): Promise<RailTransactionRecord | null> {
    const inserted: unknown[] = await this.sql.rows(
      `INSERT INTO rail_transactions (project_id, env, rail, transaction_id, subscription_id, customer_id, decision, audit_event_id, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT ON CONSTRAINT rail_transactions_pk DO NOTHING
       RETURNING 1 AS claimed`,
      [scope.projectId, scope.env, record.rail, record.transactionId, record.subscriptionId, record.customerId, record.decision, record.auditEventId, now],
    );
    if (inserted.length > 0) return null;
    return this.findTransaction(scope, record.rail, record.transactionId);
  }

  async findTransaction(scope: TenantScope, rail: PurchaseRail, transactionId: string): Promise<RailTransactionRecord | null> {
    const rows: {
      rail: PurchaseRail;
      transaction_id: string;
      subscription_id: string;
      customer_id: string;
      decision: RailDecision;
      audit_event_id: string | null;
    }[] = await this.sql.rows(
      `SELECT rail, transaction_id, subscription_id, customer_id, decision, audit_event_id FROM rail_transactions
        WHERE project_id = $1 AND env = $2 AND rail = $3 AND transaction_id = $4`,
      [scope.projectId, scope.env, rail, transactionId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      rail: row.rail,
      transactionId: row.transaction_id,
      subscriptionId: row.subscription_id,
      customerId: row.customer_id,
      decision: row.decision,
      auditEventId: row.audit_event_id,
    };
  }

  /** Updates the decision and audit entry of a transaction this transaction claimed. */
  async settleTransaction(
    scope: TenantScope,
    rail: PurchaseRail,
    transactionId: string,
    outcome: { decision: RailDecision; auditEventId: string | null; customerId: string },
  ): Promise<void> {
    await this.sql.rows(
      `UPDATE rail_transactions SET decision = $5, audit_event_id = $6, customer_id = $7
        WHERE project_id = $1 AND env = $2 AND rail = $3 AND transaction_id = $4`,
      [scope.projectId, scope.env, rail, transactionId, outcome.decision, outcome.auditEventId, outcome.customerId],
    );
  }

  /** A notification already processed (any environment), or null. */
  async findNotification(project: { projectId: string }, rail: PurchaseRail, notificationId: string): Promise<RailNotificationRecord | null> {
    const rows: {
      rail: PurchaseRail;
      notification_id: string;
      env: TenantScope['env'];
      event_type: string;
      decision: RailDecision;
      customer_id: string | null;
      audit_event_id: string | null;
      received_at: Date;
      processed_at: Date;
    }[] = await this.sql.rows(
      `SELECT rail, notification_id, env, event_type, decision, customer_id, audit_event_id, received_at, processed_at
         FROM rail_notifications WHERE project_id = $1 AND rail = $2 AND notification_id = $3`,
      [project.projectId, rail, notificationId],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      rail: row.rail,
      notificationId: row.notification_id,
      env: row.env,
      eventType: row.event_type,
      decision: row.decision,
      customerId: row.customer_id,
      auditEventId: row.audit_event_id,
      receivedAt: new Date(row.received_at).getTime(),
      processedAt: new Date(row.processed_at).getTime(),
    };
  }

  /**
   * Records a processed notification; returns null when this call recorded it, else the
   * first record (a concurrent duplicate waits for the first transaction, then reads it).
   * `transactions`: rail purchase ids the notification links to its subscription, recorded by
   * the same statement as claimTransaction records them (an id recorded already stays as it is).
   */
  async claimNotification(
    scope: TenantScope,
    record: Omit<RailNotificationRecord, 'env'>,
    transactions: readonly Omit<RailTransactionRecord, 'rail'>[] = [],
    now: Date = new Date(record.processedAt),
  ): Promise<RailNotificationRecord | null> {
    const linked =
      transactions.length === 0
        ? ''
        : `linked AS (
         INSERT INTO rail_transactions (project_id, env, rail, transaction_id, subscription_id, customer_id, decision, audit_event_id, created_at)
         SELECT $1, $4, $2, t, s, c, d, a, $11 FROM unnest($12::text[], $13::text[], $14::text[], $15::text[], $16::text[]) AS x(t, s, c, d, a)
         ON CONFLICT ON CONSTRAINT rail_transactions_pk DO NOTHING), `;
    const inserted: unknown[] = await this.sql.rows(
      `WITH ${linked}claimed AS (
         INSERT INTO rail_notifications
           (project_id, rail, notification_id, env, event_type, decision, customer_id, audit_event_id, received_at, processed_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT ON CONSTRAINT rail_notifications_pk DO NOTHING
         RETURNING 1 AS claimed)
       SELECT claimed FROM claimed`,
      [
        scope.projectId,
        record.rail,
        record.notificationId,
        scope.env,
        record.eventType,
        record.decision,
        record.customerId,
        record.auditEventId,
        new Date(record.receivedAt),
        new Date(record.processedAt),
        ...(transactions.length === 0
          ? []
          : [
              now,
              transactions.map((t) => t.transactionId),
              transactions.map((t) => t.subscriptionId),
              transactions.map((t) => t.customerId),
              transactions.map((t) => t.decision),
              transactions.map((t) => t.auditEventId),
            ]),
      ],
    );
    if (inserted.length > 0) return null;
    return this.findNotification(scope, record.rail, record.notificationId);
  }
}
