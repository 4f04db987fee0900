import { Injectable } from '@nestjs/common';
import { type TenantScope, Sql } from '#platform';

export interface CustomerSummaryRow {
  id: string;
  email: string | null;
  firstName: string | null;
  traits: Record<string, string | number | boolean | null>;
  forgottenAt: Date | null;
  createdAt: Date;
}

export interface AliasRow {
  customerId: string;
  type: string;
  value: string;
  assurance: string;
  verifiedAt: Date | null;
  createdAt: Date;
}

export interface CustomerMergeRow {
  id: string;
  canonicalCustomerId: string;
  otherCustomerId: string;
  developerUserId: string | null;
  anonymousId: string | null;
  status: string;
  createdAt: Date;
}

const SUMMARY = `id, email, first_name AS "firstName", traits, forgotten_at AS "forgottenAt", created_at AS "createdAt"`;

/** The operator console's customer lookups: each one an index probe with a limit, inside the scope. */
@Injectable()
export class CustomerReadsRepository {
  constructor(private readonly sql: Sql) {}

  /** Customers by id (customers_scope_id_uq). */
  async customersById(scope: TenantScope, ids: readonly string[]): Promise<CustomerSummaryRow[]> {
    if (ids.length === 0) return [];
    return this.sql.rows<CustomerSummaryRow>(`SELECT ${SUMMARY} FROM customers WHERE project_id = $1 AND env = $2 AND id = ANY($3::text[])`, [
      scope.projectId,
      scope.env,
      ids,
    ]);
  }

  /** Customers whose email trait is exactly `email` (customers_scope_email_idx). */
  async customersByEmail(scope: TenantScope, email: string, limit: number): Promise<CustomerSummaryRow[]> {
    return this.sql.rows<CustomerSummaryRow>(
      `SELECT ${SUMMARY} FROM customers WHERE project_id = $1 AND env = $2 AND email = $3 ORDER BY created_at DESC, id LIMIT $4`,
      [scope.projectId, scope.env, email, limit],
    );
  }

  /** Alias nodes of the given types whose value is exactly `value` (one customer_aliases_pk probe per type). */
  async aliasesByValue(scope: TenantScope, types: readonly string[], value: string, limit: number): Promise<{ type: string; customerId: string }[]> {
    return this.sql.rows(
      `SELECT type, customer_id AS "customerId" FROM customer_aliases
        WHERE project_id = $1 AND env = $2 AND type = ANY($3::text[]) AND value = $4 LIMIT $5`,
      [scope.projectId, scope.env, types, value, limit],
    );
  }

  /** Alias nodes of the given customers (customer_aliases_customer_idx), of the given types or all, oldest first, at most `limit`. */
  async aliasesOf(scope: TenantScope, customerIds: readonly string[], types: readonly string[] | null, limit: number): Promise<AliasRow[]> {
    if (customerIds.length === 0) return [];
    return this.sql.rows<AliasRow>(
      `SELECT customer_id AS "customerId", type, value, assurance, verified_at AS "verifiedAt", created_at AS "createdAt"
         FROM customer_aliases WHERE project_id = $1 AND env = $2 AND customer_id = ANY($3::text[])
          AND ($4::text[] IS NULL OR type = ANY($4::text[]))
        ORDER BY created_at, type, value LIMIT $5`,
      [scope.projectId, scope.env, customerIds, types, limit],
    );
  }

  /** Merge reviews naming the customer on either side, newest first (the two merge_reviews customer indexes). */
  async mergesOf(scope: TenantScope, customerId: string, limit: number): Promise<CustomerMergeRow[]> {
    return this.sql.rows<CustomerMergeRow>(
      `SELECT id, canonical_customer_id AS "canonicalCustomerId", other_customer_id AS "otherCustomerId",
              developer_user_id AS "developerUserId", anonymous_id AS "anonymousId", status, created_at AS "createdAt"
         FROM merge_reviews WHERE project_id = $1 AND env = $2 AND (canonical_customer_id = $3 OR other_customer_id = $3)
        ORDER BY created_at DESC, id LIMIT $4`,
      [scope.projectId, scope.env, customerId, limit],
    );
  }

  /** The customer's erasure status, null when never asked. */
  async erasureStatus(scope: TenantScope, customerId: string): Promise<{ status: 'queued' | 'deleted'; queuedAt: Date; deletedAt: Date | null } | null> {
    return this.sql.one(
      `SELECT status, queued_at AS "queuedAt", deleted_at AS "deletedAt" FROM erasures WHERE project_id = $1 AND env = $2 AND customer_id = $3`,
      [scope.projectId, scope.env, customerId],
    );
  }
}
