import { Injectable } from '@nestjs/common';
import { type Env, type PreparedSql, type TenantScope, Sql, prepared } from '#platform';
import { ALIAS_TYPES, PERSONAL_ALIAS_TYPES } from '../domain/identifier-rules.js';
import type { Traits } from '../domain/traits.js';

export type Assurance = 'verified' | 'self_asserted';

export interface AliasHit {
  type: string;
  value: string;
  customerId: string;
  forgotten: boolean;
}

export interface CustomerRow {
  id: string;
  email: string | null;
  firstName: string | null;
  traits: Traits;
  forgottenAt: Date | null;
}

export interface CustomerProfile {
  customerId: string;
  email: string | null;
  firstName: string | null;
  /** Developer user ids linked to the customer, most recent first. */
  developerUserIds: string[];
}

/** One pending merge review as the operator lists it. */
export interface MergeReviewRow {
  id: string;
  env: Env;
  developerUserId: string | null;
  anonymousId: string | null;
  canonicalCustomerId: string;
  otherCustomerId: string;
  createdAt: Date;
}

/** Alias nodes of the scope ($1 project, $2 env) for `count` (type, value) pairs; one probe of customer_aliases_pk per node. */
export function findAliasesSql(count: number): string {
  const probes = Array.from({ length: count }, (_, i) => `(a.type = $${3 + 2 * i} AND a.value = $${4 + 2 * i})`);
  return `SELECT a.type, a.value, a.customer_id, (c.forgotten_at IS NOT NULL) AS forgotten
       FROM customer_aliases a
       JOIN customers c ON c.id = a.customer_id
      WHERE a.project_id = $1 AND a.env = $2 AND (${probes.join(' OR ')})`;
}

/** Locks a customer of the scope ($1 project, $2 env, $3 id); FOR NO KEY UPDATE lets alias inserts referencing it through. */
export const LOCK_CUSTOMER_SQL = `SELECT id, email, first_name, traits, forgotten_at
     FROM customers WHERE project_id = $1 AND env = $2 AND id = $3
     FOR NO KEY UPDATE`;

/** Profile of an active customer ($1 project, $2 env, $3 id) with its developer ids ($4 the developer alias type), newest first. */
export const CUSTOMER_PROFILE_SQL = `SELECT c.id, c.email, c.first_name,
          (SELECT array_agg(a.value ORDER BY a.created_at DESC)
             FROM customer_aliases a
            WHERE a.project_id = c.project_id AND a.env = c.env AND a.customer_id = c.id AND a.type = $4) AS developer_ids
     FROM customers c
    WHERE c.project_id = $1 AND c.env = $2 AND c.id = $3 AND c.forgotten_at IS NULL`;

// The statements of identify, resolve and the entitlement reads, prepared once per connection.
const PREPARED_ALIAS_PROBES = 4;
const findAliasesStatements = Array.from({ length: PREPARED_ALIAS_PROBES }, (_, i) => prepared(findAliasesSql(i + 1)));
const findAliasesStatement = (count: number): PreparedSql | string => findAliasesStatements[count - 1] ?? findAliasesSql(count);
const LOCK_CUSTOMER = prepared(LOCK_CUSTOMER_SQL);
const CUSTOMER_PROFILE = prepared(CUSTOMER_PROFILE_SQL);
/** CUSTOMER_PROFILE_SQL for many ids at once (one statement for a ranking's page of customers). */
const CUSTOMER_PROFILES = prepared(`SELECT c.id, c.email, c.first_name,
          (SELECT array_agg(a.value ORDER BY a.created_at DESC)
             FROM customer_aliases a
            WHERE a.project_id = c.project_id AND a.env = c.env AND a.customer_id = c.id AND a.type = $4) AS developer_ids
     FROM customers c
    WHERE c.project_id = $1 AND c.env = $2 AND c.id = ANY($3::text[]) AND c.forgotten_at IS NULL`);
const FIND_CUSTOMER_BY_ALIAS = prepared(`SELECT a.customer_id
         FROM customer_aliases a
         JOIN customers c ON c.id = a.customer_id
        WHERE a.project_id = $1 AND a.env = $2 AND a.type = $3 AND a.value = $4
          AND ($5::boolean OR c.forgotten_at IS NULL)`);
const FIND_CUSTOMER_BY_ID = prepared(`SELECT id FROM customers WHERE project_id = $1 AND env = $2 AND id = $3 AND ($4::boolean OR forgotten_at IS NULL)`);

/**
 * SQL of the identity tables. Every method takes the tenant scope first, except the operator's
 * project-wide listing. Statements join the ambient transaction.
 */
@Injectable()
export class IdentityRepository {
  constructor(private readonly sql: Sql) {}

  /** Alias nodes for the given (type, value) pairs, with whether their customer is forgotten. One probe of customer_aliases_pk per node. */
  async findAliases(scope: TenantScope, nodes: { type: string; value: string }[]): Promise<AliasHit[]> {
    if (nodes.length === 0) return [];
    const params: string[] = [scope.projectId, scope.env, ...nodes.flatMap((node) => [node.type, node.value])];
    const rows: { type: string; value: string; customer_id: string; forgotten: boolean }[] = await this.sql.rows(findAliasesStatement(nodes.length), params);
    return rows.map((r) => ({ type: r.type, value: r.value, customerId: r.customer_id, forgotten: r.forgotten }));
  }

  /** Customer of one alias node, or null. */
  async findCustomerIdByAlias(scope: TenantScope, type: string, value: string, options: { includeForgotten?: boolean } = {}): Promise<string | null> {
    const rows: { customer_id: string }[] = await this.sql.rows(FIND_CUSTOMER_BY_ALIAS, [
      scope.projectId,
      scope.env,
      type,
      value,
      options.includeForgotten ?? false,
    ]);
    return rows[0]?.customer_id ?? null;
  }

  async findCustomerById(scope: TenantScope, customerId: string, options: { includeForgotten?: boolean } = {}): Promise<string | null> {
    const rows: { id: string }[] = await this.sql.rows(FIND_CUSTOMER_BY_ID, [scope.projectId, scope.env, customerId, options.includeForgotten ?? false]);
    return rows[0]?.id ?? null;
  }

  async insertCustomer(scope: TenantScope, customerId: string, at: Date): Promise<void> {
    await this.sql.rows(`INSERT INTO customers (id, project_id, env, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)`, [
      customerId,
      scope.projectId,
      scope.env,
      at,
    ]);
  }

  /** Locks the customer row (FOR NO KEY UPDATE: compatible with alias inserts referencing it). */
  async lockCustomer(scope: TenantScope, customerId: string): Promise<CustomerRow | null> {
    const rows: { id: string; email: string | null; first_name: string | null; traits: Traits; forgotten_at: Date | null }[] = await this.sql.rows(
      LOCK_CUSTOMER,
      [scope.projectId, scope.env, customerId],
    );
    const row = rows[0];
    if (!row) return null;
    return { id: row.id, email: row.email, firstName: row.first_name, traits: row.traits ?? {}, forgottenAt: row.forgotten_at };
  }

  async updateProfile(
    scope: TenantScope,
    customerId: string,
    profile: { email: string | null; firstName: string | null; traits: Traits },
    at: Date,
  ): Promise<void> {
    await this.sql.rows(
      `UPDATE customers SET email = $4, first_name = $5, traits = $6::jsonb, updated_at = $7
        WHERE project_id = $1 AND env = $2 AND id = $3`,
      [scope.projectId, scope.env, customerId, profile.email, profile.firstName, JSON.stringify(profile.traits), at],
    );
  }

  /** Plain insert: a concurrent link of the same node surfaces as 23505 and the caller retries. */
  async insertAlias(scope: TenantScope, node: { type: string; value: string }, customerId: string, assurance: Assurance, at: Date): Promise<void> {
    await this.sql.rows(
      `INSERT INTO customer_aliases (project_id, env, type, value, customer_id, assurance, verified_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [scope.projectId, scope.env, node.type, node.value, customerId, assurance, assurance === 'verified' ? at : null, at],
    );
  }

  /** Links a node unless it is already linked (to anyone); returns whether this call linked it. */
  async insertAliasIfAbsent(scope: TenantScope, node: { type: string; value: string }, customerId: string, assurance: Assurance, at: Date): Promise<boolean> {
    const rows = await this.sql.rows(
      `INSERT INTO customer_aliases (project_id, env, type, value, customer_id, assurance, verified_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (project_id, env, type, value) DO NOTHING
       RETURNING 1 AS linked`,
      [scope.projectId, scope.env, node.type, node.value, customerId, assurance, assurance === 'verified' ? at : null, at],
    );
    return rows.length > 0;
  }

  /** Upgrades links of the customer to verified (never downgrades). */
  async markVerified(scope: TenantScope, customerId: string, nodes: { type: string; value: string }[], at: Date): Promise<void> {
    if (nodes.length === 0) return;
    await this.sql.rows(
      `UPDATE customer_aliases SET assurance = 'verified', verified_at = $6
        WHERE project_id = $1 AND env = $2 AND customer_id = $3
          AND (type, value) IN (SELECT * FROM unnest($4::text[], $5::text[]))
          AND assurance <> 'verified'`,
      [scope.projectId, scope.env, customerId, nodes.map((n) => n.type), nodes.map((n) => n.value), at],
    );
  }

  /** Frees nodes still held by a forgotten customer (its erasure snapshotted them). */
  async releaseForgottenAliases(scope: TenantScope, hits: AliasHit[]): Promise<void> {
    for (const hit of hits.filter((h) => h.forgotten)) {
      await this.sql.rows(
        `DELETE FROM customer_aliases a USING customers c
          WHERE a.project_id = $1 AND a.env = $2 AND a.type = $3 AND a.value = $4 AND a.customer_id = $5
            AND c.id = a.customer_id AND c.forgotten_at IS NOT NULL`,
        [scope.projectId, scope.env, hit.type, hit.value, hit.customerId],
      );
    }
  }

  /** Queues a conflict for review once per pair of customers. */
  async queueMergeReview(
    scope: TenantScope,
    review: { id: string; developerUserId: string | null; anonymousId: string | null; canonicalCustomerId: string; otherCustomerId: string },
    at: Date,
  ): Promise<void> {
    await this.sql.rows(
      `INSERT INTO merge_reviews (id, project_id, env, developer_user_id, anonymous_id, canonical_customer_id, other_customer_id, status, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8)
       ON CONFLICT DO NOTHING`,
      [review.id, scope.projectId, scope.env, review.developerUserId, review.anonymousId, review.canonicalCustomerId, review.otherCustomerId, at],
    );
  }

  /** Email, first name and developer ids of an active customer; null when unknown or forgotten. */
  async profile(scope: TenantScope, customerId: string): Promise<CustomerProfile | null> {
    const rows: { id: string; email: string | null; first_name: string | null; developer_ids: string[] | null }[] = await this.sql.rows(CUSTOMER_PROFILE, [
      scope.projectId,
      scope.env,
      customerId,
      ALIAS_TYPES.developer,
    ]);
    const row = rows[0];
    if (!row) return null;
    return { customerId: row.id, email: row.email, firstName: row.first_name, developerUserIds: row.developer_ids ?? [] };
  }

  /** The profiles of active customers among `customerIds`, by customer id (unknown and forgotten ones absent). */
  async profiles(scope: TenantScope, customerIds: readonly string[]): Promise<Map<string, CustomerProfile>> {
    if (customerIds.length === 0) return new Map();
    const rows: { id: string; email: string | null; first_name: string | null; developer_ids: string[] | null }[] = await this.sql.rows(CUSTOMER_PROFILES, [
      scope.projectId,
      scope.env,
      [...customerIds],
      ALIAS_TYPES.developer,
    ]);
    return new Map(rows.map((row) => [row.id, { customerId: row.id, email: row.email, firstName: row.first_name, developerUserIds: row.developer_ids ?? [] }]));
  }

  /** Personal identifiers (developer and anonymous ids) of a customer. */
  async personalAliases(scope: TenantScope, customerId: string): Promise<{ userIds: string[]; anonymousIds: string[] }> {
    const rows: { type: string; value: string }[] = await this.sql.rows(
      `SELECT type, value FROM customer_aliases
        WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND type = ANY($4::text[])`,
      [scope.projectId, scope.env, customerId, PERSONAL_ALIAS_TYPES],
    );
    return {
      userIds: rows.filter((r) => r.type === ALIAS_TYPES.developer).map((r) => r.value),
      anonymousIds: rows.filter((r) => r.type === ALIAS_TYPES.anonymous).map((r) => r.value),
    };
  }

  /** Moves every non-personal (rail) alias node of one customer to another. */
  async moveRailAliases(scope: TenantScope, fromCustomerId: string, toCustomerId: string): Promise<number> {
    return this.sql.affected(
      `UPDATE customer_aliases SET customer_id = $4
        WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND NOT (type = ANY($5::text[]))`,
      [scope.projectId, scope.env, fromCustomerId, toCustomerId, PERSONAL_ALIAS_TYPES],
    );
  }

  /** Detaches one alias node from its customer (the device of an anonymous-only forget). */
  async deleteAlias(scope: TenantScope, node: { type: string; value: string }, customerId: string): Promise<boolean> {
    const deleted = await this.sql.affected(
      `DELETE FROM customer_aliases WHERE project_id = $1 AND env = $2 AND type = $3 AND value = $4 AND customer_id = $5`,
      [scope.projectId, scope.env, node.type, node.value, customerId],
    );
    return deleted > 0;
  }

  /** Marks the customer forgotten (reads treat it as unknown from now on). */
  async markForgotten(scope: TenantScope, customerId: string, at: Date): Promise<void> {
    await this.sql.rows(`UPDATE customers SET forgotten_at = $4, updated_at = $4 WHERE project_id = $1 AND env = $2 AND id = $3`, [
      scope.projectId,
      scope.env,
      customerId,
      at,
    ]);
  }

  /** Pending merge reviews of a project (one environment, or both), newest first: an operator listing. */
  async listPendingMergeReviews(projectId: string, env: Env | undefined, limit: number): Promise<MergeReviewRow[]> {
    return this.sql.rows<MergeReviewRow>(
      `SELECT id, env, developer_user_id AS "developerUserId", anonymous_id AS "anonymousId",
              canonical_customer_id AS "canonicalCustomerId", other_customer_id AS "otherCustomerId", created_at AS "createdAt"
         FROM merge_reviews
        WHERE project_id = $1 AND ($2::text IS NULL OR env = $2) AND status = 'pending'
        ORDER BY created_at DESC, id
        LIMIT $3`,
      [projectId, env ?? null, limit],
    );
  }
}
