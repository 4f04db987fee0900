import { Injectable } from '@nestjs/common';
import { type CrossTenant, type TenantScope, Sql, prepared } from '#platform';
import { type EntitlementState, MANUAL_PRODUCT_ID, type Rail, isActiveAt } from './entitlement-rules.js';
import type { PublicEntitlement } from './public-entitlement.js';

/** One stored entitlement (one customer, key and rail). Times in Unix seconds. */
export interface EntitlementRecord {
  customerId: string;
  key: string;
  rail: Rail;
  productId: string;
  subscriptionId: string;
  state: EntitlementState;
  /** Unix seconds; null = lifetime. */
  validUntil: number | null;
  version: number;
  lastEventId: string | null;
  updatedAt: number;
}

interface EntitlementRow {
  customer_id: string;
  entitlement_key: string;
  rail: Rail;
  product_id: string;
  subscription_id: string;
  state: EntitlementState;
  /** Unix seconds (floored in SQL). */
  valid_until: number | null;
  version: number;
  last_event_id: string | null;
  /** Unix seconds (floored in SQL). */
  updated_at: number;
}

/**
 * The times come as whole Unix seconds, the records' unit: parsing timestamptz text into a Date
 * and reading its seconds back was ~2 % of the API's busy time on the entitlement read
 * (docs/performance.md, "What the measurements showed"). float8: pg parses it as a number (int8 and
 * numeric arrive as strings).
 */
const unixSeconds = (column: string): string => `floor(extract(epoch FROM ${column}))::float8 AS ${column}`;
const COLUMNS = `customer_id, entitlement_key, rail, product_id, subscription_id, state, ${unixSeconds('valid_until')}, version, last_event_id, ${unixSeconds('updated_at')}`;

/** A customer's active rows at a time ($1 project, $2 env, $3 customer, $4 Unix seconds). */
const ACTIVE_OF_CUSTOMER = `SELECT ${COLUMNS} FROM entitlements
        WHERE project_id = $1 AND env = $2 AND customer_id = $3
          AND state = 'active' AND (valid_until IS NULL OR valid_until > to_timestamp($4::float8))`;

/** Every app's launch reads this: prepared once per connection (Sql). */
const FIND_ACTIVE = prepared(`${ACTIVE_OF_CUSTOMER}
        ORDER BY entitlement_key, rail`);

/**
 * The same rows with the snapshot the statement read them in (one row of nulls when there are
 * none): the change feed's reads, whose list an outbound event carries.
 */
const FIND_ACTIVE_WITH_SNAPSHOT = prepared(`SELECT pg_current_snapshot()::text AS snapshot, e.*
         FROM (SELECT 1) AS one
         LEFT JOIN LATERAL (${ACTIVE_OF_CUSTOMER}) AS e ON true
        ORDER BY e.entitlement_key, e.rail`);

/**
 * One row of (customer, key, rail) ($1 project, $2 env, $3 customer; key and rail the parameters
 * named), locked until the transaction ends; `extra` columns after the record's.
 */
const rowForUpdate = (keyParam: string, railParam: string, extra = ''): string => `SELECT ${COLUMNS}${extra} FROM entitlements
        WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND entitlement_key = ${keyParam} AND rail = ${railParam}
        FOR UPDATE`;

const LOCK_ROW = prepared(rowForUpdate('$4', '$5'));

/** A row version's identity: the transaction that wrote it and where it lies. */
const ROW_VERSION = `xmin::text || '@' || ctid::text`;

/**
 * FIND_ACTIVE_WITH_SNAPSHOT that also locks one row of the customer and answers it (as JSON;
 * null when absent), with the row's version in the statement's snapshot and as locked: a
 * tracked change's lock and its state before in one round trip. The one row of nulls when the
 * customer has no active row keeps the lock's subquery evaluated.
 */
const LOCK_WITH_ACTIVE_SNAPSHOT = prepared(`SELECT pg_current_snapshot()::text AS snapshot,
         (SELECT ${ROW_VERSION} FROM entitlements
           WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND entitlement_key = $5 AND rail = $6) AS seen_version,
         (SELECT to_jsonb(l) FROM (${rowForUpdate('$5', '$6', `, ${ROW_VERSION} AS row_version`)}) AS l) AS locked,
         e.*
         FROM (SELECT 1) AS one
         LEFT JOIN LATERAL (${ACTIVE_OF_CUSTOMER}) AS e ON true
        ORDER BY e.entitlement_key, e.rail`);

/** Active rows of one key on rails other than $5 at $6 (a refused revoke says which rail holds the key). */
const ACTIVE_OF_KEY_ON_OTHER_RAILS = prepared(`SELECT ${COLUMNS} FROM entitlements
        WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND entitlement_key = $4 AND rail <> $5
          AND state = 'active' AND (valid_until IS NULL OR valid_until > $6)
        ORDER BY rail`);

/** The first row of (customer, key, rail), or nothing where it exists (writeParams; a manual grant's). */
const INSERT_IF_ABSENT = prepared(`INSERT INTO entitlements
         (project_id, env, customer_id, entitlement_key, rail, product_id, subscription_id, state, valid_until, version, last_event_id, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10, $11, $11)
       ON CONFLICT ON CONSTRAINT entitlements_customer_key_rail_uq DO NOTHING
       RETURNING ${COLUMNS}`);

/** A locked row overwritten (writeParams; a manual grant's or revoke's). */
const UPDATE_LOCKED = prepared(`UPDATE entitlements
          SET product_id = $6, subscription_id = $7, state = $8, valid_until = $9, last_event_id = $10,
              version = version + 1, updated_at = $11
        WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND entitlement_key = $4 AND rail = $5
        RETURNING ${COLUMNS}`);

const SORTED_BY_DATABASE = prepared(`SELECT array_agg(t ORDER BY t) AS sorted FROM unnest($1::text[]) AS t`);

function toRecord(row: EntitlementRow): EntitlementRecord {
  return {
    customerId: row.customer_id,
    key: row.entitlement_key,
    rail: row.rail,
    productId: row.product_id,
    subscriptionId: row.subscription_id,
    state: row.state,
    validUntil: row.valid_until,
    version: Number(row.version),
    lastEventId: row.last_event_id,
    updatedAt: row.updated_at,
  };
}

/** The public shape of one stored entitlement, `isActive` evaluated at `nowMs`. */
export function toPublicEntitlement(record: EntitlementRecord, nowMs: number): PublicEntitlement {
  return {
    object: 'entitlement',
    key: record.key,
    isActive: isActiveAt(record.state, record.validUntil, nowMs),
    validUntil: record.validUntil,
    source: { rail: record.rail, productId: record.productId, subscriptionId: record.subscriptionId },
    updatedAt: record.updatedAt,
  };
}

const fromSeconds = (seconds: number | null): Date | null => (seconds === null ? null : new Date(seconds * 1000));

/** What a write sets; the version and update time are the repository's. */
export type EntitlementWrite = Omit<EntitlementRecord, 'version' | 'updatedAt'>;

/** $1…$11 of the entitlement writes: tenant, row identity, what the rail says, the time. */
function writeParams(scope: TenantScope, write: EntitlementWrite, now: Date): unknown[] {
  return [
    scope.projectId,
    scope.env,
    write.customerId,
    write.key,
    write.rail,
    write.productId,
    write.subscriptionId,
    write.state,
    fromSeconds(write.validUntil),
    write.lastEventId,
    now,
  ];
}

/** Every method takes the tenant scope first; writes run in the caller's (ambient) transaction. */
@Injectable()
export class EntitlementRepository {
  constructor(private readonly sql: Sql) {}

  /** Active rows of one customer at `now` (every rail; not collapsed). */
  async findActive(scope: TenantScope, customerId: string, now: Date): Promise<EntitlementRecord[]> {
    const rows: EntitlementRow[] = await this.sql.rows(FIND_ACTIVE, [scope.projectId, scope.env, customerId, now.getTime() / 1000]);
    return rows.map(toRecord);
  }

  /**
   * `findActive`, and the database snapshot (`pg_snapshot` text) the rows were read in: a
   * change another transaction committed outside that snapshot is not in them.
   */
  async findActiveWithSnapshot(scope: TenantScope, customerId: string, now: Date): Promise<{ records: EntitlementRecord[]; snapshot: string }> {
    const rows: (Partial<EntitlementRow> & { snapshot: string })[] = await this.sql.rows(FIND_ACTIVE_WITH_SNAPSHOT, [
      scope.projectId,
      scope.env,
      customerId,
      now.getTime() / 1000,
    ]);
    return {
      records: rows.filter((row) => row.entitlement_key != null).map((row) => toRecord(row as EntitlementRow)),
      snapshot: rows[0].snapshot,
    };
  }

  /** `texts` sorted as the database sorts text (its default collation, the one of entitlement keys and rails); no tenant data. */
  async sortedByDatabase(texts: readonly string[]): Promise<string[]> {
    const row = await this.sql.one<{ sorted: string[] | null }>(SORTED_BY_DATABASE, [[...texts]]);
    return row?.sorted ?? [];
  }

  /** Active rows of one key on rails other than `exceptRail`. */
  async findActiveOfKey(scope: TenantScope, customerId: string, key: string, exceptRail: Rail, now: Date): Promise<EntitlementRecord[]> {
    const rows: EntitlementRow[] = await this.sql.rows(ACTIVE_OF_KEY_ON_OTHER_RAILS, [scope.projectId, scope.env, customerId, key, exceptRail, now]);
    return rows.map(toRecord);
  }

  /** Reads one row and locks it until the transaction ends (SELECT … FOR UPDATE). */
  async lock(scope: TenantScope, customerId: string, key: string, rail: Rail): Promise<EntitlementRecord | null> {
    const rows: EntitlementRow[] = await this.sql.rows(LOCK_ROW, [scope.projectId, scope.env, customerId, key, rail]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * `lock` and `findActiveWithSnapshot` (active at `now`) in one statement. The snapshot is the
   * statement's, taken before the lock: where another transaction changed or deleted the row and
   * committed after it (the lock then waits for it, or finds it done), `locked` is the row as it
   * left it (null when deleted) while the active rows and the snapshot are from before; `movedOn`
   * says so (the row's version differs). A row inserted after the snapshot is in neither (null,
   * not moved on), as `lock` would not see it.
   */
  async lockWithActiveSnapshot(
    scope: TenantScope,
    customerId: string,
    key: string,
    rail: Rail,
    now: Date,
  ): Promise<{ locked: EntitlementRecord | null; records: EntitlementRecord[]; snapshot: string; movedOn: boolean }> {
    const rows: (Partial<EntitlementRow> & { snapshot: string; seen_version: string | null; locked: (EntitlementRow & { row_version: string }) | null })[] =
      await this.sql.rows(LOCK_WITH_ACTIVE_SNAPSHOT, [scope.projectId, scope.env, customerId, now.getTime() / 1000, key, rail]);
    const { snapshot, seen_version: seen, locked } = rows[0];
    return {
      locked: locked ? toRecord(locked) : null,
      records: rows.filter((row) => row.entitlement_key != null).map((row) => toRecord(row as EntitlementRow)),
      snapshot,
      movedOn: (locked?.row_version ?? null) !== seen,
    };
  }

  /**
   * Inserts a first row, or returns null when the row already exists. A concurrent insert of
   * the same row makes this wait for that transaction; after it commits this returns null and
   * the caller locks the committed row instead.
   */
  async insertIfAbsent(scope: TenantScope, write: EntitlementWrite, now: Date): Promise<EntitlementRecord | null> {
    const rows: EntitlementRow[] = await this.sql.rows(INSERT_IF_ABSENT, writeParams(scope, write, now));
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /**
   * First manual rows of many (customer, key) pairs in one statement, active and lifetime;
   * `subscription_id` and `last_event_id` are each grant's audit event id (the manual-grant
   * convention). A pair that already has a manual row (any state) is left as it is; a
   * concurrent insert of the same pair waits for that transaction. Returns the pairs inserted.
   */
  async insertManualLifetimeIfAbsent(
    scope: TenantScope,
    grants: readonly { customerId: string; key: string; eventId: string }[],
    now: Date,
  ): Promise<{ customerId: string; key: string; eventId: string }[]> {
    if (grants.length === 0) return [];
    const sorted = [...grants].sort((a, b) =>
      a.customerId === b.customerId ? (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) : a.customerId < b.customerId ? -1 : 1,
    );
    const rows: { customer_id: string; entitlement_key: string; subscription_id: string }[] = await this.sql.rows(
      `INSERT INTO entitlements
         (project_id, env, customer_id, entitlement_key, rail, product_id, subscription_id, state, valid_until, version, last_event_id, created_at, updated_at)
       SELECT $1, $2, g.customer_id, g.key, 'manual', $6, g.event_id, 'active', NULL, 1, g.event_id, $7, $7
         FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS g(customer_id, key, event_id, ord)
        ORDER BY g.ord
       ON CONFLICT ON CONSTRAINT entitlements_customer_key_rail_uq DO NOTHING
       RETURNING customer_id, entitlement_key, subscription_id`,
      [scope.projectId, scope.env, sorted.map((g) => g.customerId), sorted.map((g) => g.key), sorted.map((g) => g.eventId), MANUAL_PRODUCT_ID, now],
    );
    return rows.map((row) => ({ customerId: row.customer_id, key: row.entitlement_key, eventId: row.subscription_id }));
  }

  /** Overwrites a row the caller holds locked; bumps its version. */
  async update(scope: TenantScope, write: EntitlementWrite, now: Date): Promise<EntitlementRecord> {
    const result = await this.sql.rows<EntitlementRow>(UPDATE_LOCKED, writeParams(scope, write, now));
    const row = result[0];
    if (!row) throw new Error('entitlement row vanished while locked');
    return toRecord(row);
  }

  /** Insert or overwrite in one statement (rail writers, who hold no prior lock). */
  async upsert(scope: TenantScope, write: EntitlementWrite, now: Date): Promise<EntitlementRecord> {
    const rows: EntitlementRow[] = await this.sql.rows(
      `INSERT INTO entitlements
         (project_id, env, customer_id, entitlement_key, rail, product_id, subscription_id, state, valid_until, version, last_event_id, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10, $11, $11)
       ON CONFLICT ON CONSTRAINT entitlements_customer_key_rail_uq DO UPDATE
          SET product_id = EXCLUDED.product_id, subscription_id = EXCLUDED.subscription_id, state = EXCLUDED.state,
              valid_until = EXCLUDED.valid_until, last_event_id = COALESCE(EXCLUDED.last_event_id, entitlements.last_event_id),
              version = entitlements.version + 1, updated_at = EXCLUDED.updated_at
       RETURNING ${COLUMNS}`,
      writeParams(scope, write, now),
    );
    return toRecord(rows[0]);
  }

  /**
   * Many rows' insert or overwrite in one statement, each as `upsert` writes it (rail writers,
   * who hold no prior lock). The rows name distinct (customer, key, rail); answered in their order.
   */
  async upsertMany(scope: TenantScope, writes: readonly EntitlementWrite[], now: Date): Promise<EntitlementRecord[]> {
    if (writes.length === 0) return [];
    if (writes.length === 1) return [await this.upsert(scope, writes[0], now)];
    const rows: EntitlementRow[] = await this.sql.rows(
      `INSERT INTO entitlements
         (project_id, env, customer_id, entitlement_key, rail, product_id, subscription_id, state, valid_until, version, last_event_id, created_at, updated_at)
       SELECT $1, $2, w.customer_id, w.key, w.rail, w.product_id, w.subscription_id, w.state, w.valid_until, 1, w.last_event_id, $3, $3
         FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::text[]) WITH ORDINALITY
              AS w(customer_id, key, rail, product_id, subscription_id, state, valid_until, last_event_id, ord)
        ORDER BY w.ord
       ON CONFLICT ON CONSTRAINT entitlements_customer_key_rail_uq DO UPDATE
          SET product_id = EXCLUDED.product_id, subscription_id = EXCLUDED.subscription_id, state = EXCLUDED.state,
              valid_until = EXCLUDED.valid_until, last_event_id = COALESCE(EXCLUDED.last_event_id, entitlements.last_event_id),
              version = entitlements.version + 1, updated_at = EXCLUDED.updated_at
       RETURNING ${COLUMNS}`,
      [
        scope.projectId,
        scope.env,
        now,
        writes.map((w) => w.customerId),
        writes.map((w) => w.key),
        writes.map((w) => w.rail),
        writes.map((w) => w.productId),
        writes.map((w) => w.subscriptionId),
        writes.map((w) => w.state),
        writes.map((w) => fromSeconds(w.validUntil)),
        writes.map((w) => w.lastEventId),
      ],
    );
    const written = new Map(rows.map((row) => [`${row.customer_id}|${row.entitlement_key}|${row.rail}`, toRecord(row)]));
    return writes.map((w) => {
      const record = written.get(`${w.customerId}|${w.key}|${w.rail}`);
      if (!record) throw new Error('an entitlement row written is missing from the answer');
      return record;
    });
  }

  /**
   * Cross-tenant (the expiry scan): rows still marked active whose validUntil fell in
   * (fromMs, toMs] and that were last written before it, oldest end first.
   */
  async passedBetween(
    _queue: CrossTenant,
    fromMs: number,
    toMs: number,
    limit: number,
  ): Promise<{ projectId: string; env: 'sandbox' | 'production'; customerId: string; key: string; rail: Rail; validUntil: number }[]> {
    return this.sql.rows(
      `SELECT project_id AS "projectId", env, customer_id AS "customerId", entitlement_key AS key, rail,
              floor(extract(epoch FROM valid_until))::float8 AS "validUntil"
         FROM entitlements
        WHERE state = 'active' AND valid_until > to_timestamp($1::float8 / 1000) AND valid_until <= to_timestamp($2::float8 / 1000)
          AND updated_at < valid_until
        ORDER BY valid_until
        LIMIT $3`,
      [fromMs, toMs, limit],
    );
  }

  /**
   * Moves the rail-derived rows of one customer to another (a rail-only customer folded into
   * a named one). A row whose (key, rail) the target already holds stays where it is.
   */
  async moveRailRows(scope: TenantScope, fromCustomerId: string, toCustomerId: string, now: Date): Promise<number> {
    return this.sql.affected(
      `UPDATE entitlements e SET customer_id = $4, version = e.version + 1, updated_at = $5
        WHERE e.project_id = $1 AND e.env = $2 AND e.customer_id = $3 AND e.rail <> 'manual'
          AND NOT EXISTS (
            SELECT 1 FROM entitlements t
             WHERE t.project_id = $1 AND t.env = $2 AND t.customer_id = $4 AND t.entitlement_key = e.entitlement_key AND t.rail = e.rail)`,
      [scope.projectId, scope.env, fromCustomerId, toCustomerId, now],
    );
  }
}
