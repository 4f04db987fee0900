import { Injectable } from '@nestjs/common';
import { type TenantScope, Sql } from '#platform';
import type { Traits } from '../domain/traits.js';

/** An alias node with its customer and whether that customer is forgotten. */
export interface BulkAliasHit {
  type: string;
  value: string;
  customerId: string;
  forgotten: boolean;
}

/** A customer row locked for a bulk change. */
export interface BulkCustomerRow {
  customerId: string;
  email: string | null;
  traits: Traits;
  forgotten: boolean;
}

/**
 * Set-based SQL of the identity tables for bulk callers (migration): one statement per step
 * whatever the number of rows (`unnest` arrays), in the caller's (ambient) transaction. Every
 * method takes the tenant scope first.
 */
@Injectable()
export class BulkIdentityRepository {
  constructor(private readonly sql: Sql) {}

  /** Alias nodes among `nodes` that exist, with their customer. */
  async findAliases(scope: TenantScope, nodes: readonly { type: string; value: string }[]): Promise<BulkAliasHit[]> {
    if (nodes.length === 0) return [];
    const rows: { type: string; value: string; customer_id: string; forgotten: boolean }[] = await this.sql.rows(
      `SELECT a.type, a.value, a.customer_id, (c.forgotten_at IS NOT NULL) AS forgotten
         FROM unnest($3::text[], $4::text[]) AS n(type, value)
         JOIN customer_aliases a ON a.project_id = $1 AND a.env = $2 AND a.type = n.type AND a.value = n.value
         JOIN customers c ON c.id = a.customer_id`,
      [scope.projectId, scope.env, nodes.map((n) => n.type), nodes.map((n) => n.value)],
    );
    return rows.map((r) => ({ type: r.type, value: r.value, customerId: r.customer_id, forgotten: r.forgotten }));
  }

  /** Every alias node of the given customers whose type is one of `types`. */
  async aliasesOfCustomers(
    scope: TenantScope,
    customerIds: readonly string[],
    types: readonly string[],
  ): Promise<{ customerId: string; type: string; value: string }[]> {
    if (customerIds.length === 0) return [];
    const rows: { customer_id: string; type: string; value: string }[] = await this.sql.rows(
      `SELECT customer_id, type, value FROM customer_aliases
        WHERE project_id = $1 AND env = $2 AND customer_id = ANY($3::text[]) AND type = ANY($4::text[])`,
      [scope.projectId, scope.env, customerIds, types],
    );
    return rows.map((r) => ({ customerId: r.customer_id, type: r.type, value: r.value }));
  }

  /** Locks the customers in id order (FOR NO KEY UPDATE: alias inserts referencing them still pass). */
  async lockCustomers(scope: TenantScope, customerIds: readonly string[]): Promise<BulkCustomerRow[]> {
    if (customerIds.length === 0) return [];
    const rows: { id: string; email: string | null; traits: Traits | null; forgotten_at: Date | null }[] = await this.sql.rows(
      `SELECT id, email, traits, forgotten_at FROM customers
        WHERE project_id = $1 AND env = $2 AND id = ANY($3::text[])
        ORDER BY id
        FOR NO KEY UPDATE`,
      [scope.projectId, scope.env, [...customerIds].sort()],
    );
    return rows.map((r) => ({ customerId: r.id, email: r.email, traits: r.traits ?? {}, forgotten: r.forgotten_at !== null }));
  }

  /** Frees nodes held by forgotten customers so that they can be linked afresh (as identify does). */
  async releaseForgottenAliases(scope: TenantScope, hits: readonly BulkAliasHit[]): Promise<void> {
    const forgotten = hits.filter((h) => h.forgotten);
    if (forgotten.length === 0) return;
    await this.sql.rows(
      `DELETE FROM customer_aliases a USING unnest($3::text[], $4::text[], $5::text[]) AS n(type, value, customer_id), customers c
        WHERE a.project_id = $1 AND a.env = $2 AND a.type = n.type AND a.value = n.value AND a.customer_id = n.customer_id
          AND c.id = a.customer_id AND c.forgotten_at IS NOT NULL`,
      [scope.projectId, scope.env, forgotten.map((h) => h.type), forgotten.map((h) => h.value), forgotten.map((h) => h.customerId)],
    );
  }

  async insertCustomers(scope: TenantScope, customers: readonly { customerId: string; email: string | null; traits: Traits }[], at: Date): Promise<void> {
    if (customers.length === 0) return;
    await this.sql.rows(
      `INSERT INTO customers (id, project_id, env, email, traits, created_at, updated_at)
       SELECT n.id, $1, $2, n.email, n.traits, $6, $6
         FROM unnest($3::text[], $4::text[], $5::jsonb[]) AS n(id, email, traits)`,
      [scope.projectId, scope.env, customers.map((c) => c.customerId), customers.map((c) => c.email), customers.map((c) => JSON.stringify(c.traits)), at],
    );
  }

  /**
   * Plain insert in (type, value) order: a node linked concurrently by someone else surfaces
   * as 23505 and the caller's transaction starts over (`sql.transaction(work, { retry: true })`).
   */
  async insertAliases(scope: TenantScope, links: readonly { type: string; value: string; customerId: string }[], at: Date): Promise<void> {
    if (links.length === 0) return;
    const sorted = [...links].sort((a, b) => (a.type === b.type ? (a.value < b.value ? -1 : a.value > b.value ? 1 : 0) : a.type < b.type ? -1 : 1));
    await this.sql.rows(
      `INSERT INTO customer_aliases (project_id, env, type, value, customer_id, assurance, verified_at, created_at)
       SELECT $1, $2, n.type, n.value, n.customer_id, 'self_asserted', NULL, $6
         FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS n(type, value, customer_id, ord)
        ORDER BY n.ord`,
      [scope.projectId, scope.env, sorted.map((l) => l.type), sorted.map((l) => l.value), sorted.map((l) => l.customerId), at],
    );
  }

  /** Overwrites email and traits of customers the caller holds locked. */
  async updateProfiles(scope: TenantScope, profiles: readonly { customerId: string; email: string | null; traits: Traits }[], at: Date): Promise<void> {
    if (profiles.length === 0) return;
    await this.sql.rows(
      `UPDATE customers c SET email = n.email, traits = n.traits, updated_at = $6
         FROM unnest($3::text[], $4::text[], $5::jsonb[]) AS n(id, email, traits)
        WHERE c.project_id = $1 AND c.env = $2 AND c.id = n.id`,
      [scope.projectId, scope.env, profiles.map((p) => p.customerId), profiles.map((p) => p.email), profiles.map((p) => JSON.stringify(p.traits)), at],
    );
  }
}
