import { Injectable } from '@nestjs/common';
import { Sql, prepared } from '#platform';
import type { PurchaseRail } from '../domain/entitlement-rules.js';

export type KeyRegistrar = 'grant' | 'migration' | 'catalog';

export interface CatalogProductRow {
  rail: PurchaseRail;
  productId: string;
  entitlementKeys: string[];
}

export interface RegisteredKeyRow {
  key: string;
  registeredBy: KeyRegistrar;
  createdAt: Date;
}

/** Registers the keys not registered yet (every manual grant names its key): prepared once per connection. */
const REGISTER_KEYS = prepared(`INSERT INTO entitlement_keys (project_id, key, registered_by, created_at)
       SELECT $1, k, $3, $4 FROM unnest($2::text[]) WITH ORDINALITY AS u(k, ord) ORDER BY u.ord
       ON CONFLICT (project_id, key) DO NOTHING
       RETURNING key`);

/**
 * The project's product catalogue (`catalog_products`) and entitlement-key registry
 * (`entitlement_keys`). Project settings that hold for both environments: methods take the
 * project id. Statements join the ambient transaction.
 */
@Injectable()
export class CatalogRepository {
  constructor(private readonly sql: Sql) {}

  /** Replaces the whole catalogue, products stored in the order given. */
  async replaceProducts(projectId: string, products: readonly CatalogProductRow[], at: Date): Promise<void> {
    await this.sql.run(`DELETE FROM catalog_products WHERE project_id = $1`, [projectId]);
    if (products.length === 0) return;
    await this.sql.run(
      `INSERT INTO catalog_products (project_id, rail, product_id, entitlement_keys, position, updated_at)
       SELECT $1, p.rail, p.product_id, ARRAY(SELECT jsonb_array_elements_text(p.keys)), p.position, $3
         FROM jsonb_to_recordset($2::jsonb) AS p(rail text, product_id text, keys jsonb, position integer)`,
      [projectId, JSON.stringify(products.map((p, position) => ({ rail: p.rail, product_id: p.productId, keys: p.entitlementKeys, position }))), at],
    );
  }

  async listProducts(projectId: string): Promise<CatalogProductRow[]> {
    const rows = await this.sql.rows<{ rail: PurchaseRail; product_id: string; entitlement_keys: string[] }>(
      `SELECT rail, product_id, entitlement_keys FROM catalog_products WHERE project_id = $1 ORDER BY position`,
      [projectId],
    );
    return rows.map((row) => ({ rail: row.rail, productId: row.product_id, entitlementKeys: row.entitlement_keys }));
  }

  /** The keys a product grants (empty when it is not in the catalogue). */
  async keysFor(projectId: string, rail: PurchaseRail, productId: string): Promise<string[]> {
    const row = await this.sql.one<{ entitlement_keys: string[] }>(
      `SELECT entitlement_keys FROM catalog_products WHERE project_id = $1 AND rail = $2 AND product_id = $3`,
      [projectId, rail, productId],
    );
    return row?.entitlement_keys ?? [];
  }

  /** Registers keys not registered yet (sorted by the caller: one lock order); returns those this call registered. */
  async registerKeys(projectId: string, sortedKeys: readonly string[], registeredBy: KeyRegistrar, at: Date): Promise<string[]> {
    const rows = await this.sql.rows<{ key: string }>(REGISTER_KEYS, [projectId, sortedKeys, registeredBy, at]);
    return rows.map((row) => row.key);
  }

  async listKeys(projectId: string): Promise<RegisteredKeyRow[]> {
    const rows = await this.sql.rows<{ key: string; registered_by: KeyRegistrar; created_at: Date }>(
      `SELECT key, registered_by, created_at FROM entitlement_keys WHERE project_id = $1 ORDER BY created_at, key`,
      [projectId],
    );
    return rows.map((row) => ({ key: row.key, registeredBy: row.registered_by, createdAt: row.created_at }));
  }
}
