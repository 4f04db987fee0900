import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ApiError, Clock } from '../../../platform/src/index.js';
import type { PurchaseRail } from '../domain/entitlement-rules.js';
import { EntitlementKeyRegistry } from './entitlement-key-registry.service.js';
import { ProjectLookup } from './project-lookup.service.js';

export interface CatalogProduct {
  rail: PurchaseRail;
  productId: string;
  entitlementKeys: string[];
}

/**
 * The project's product catalogue: which entitlement keys a purchase of a product on a rail
 * grants. Replaced as a whole; the keys it names are registered as `catalog`.
 */
@Injectable()
export class ProductCatalog {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly projects: ProjectLookup,
    private readonly registry: EntitlementKeyRegistry,
  ) {}

  async replace(projectId: string, products: readonly CatalogProduct[]): Promise<CatalogProduct[]> {
    const seen = new Set<string>();
    const normalised = products.map((product, index) => {
      const id = `${product.rail}\u0000${product.productId}`;
      if (seen.has(id)) throw ApiError.invalidParam(`products[${index}]: duplicate productId ${product.productId} on rail ${product.rail}`);
      seen.add(id);
      return { rail: product.rail, productId: product.productId, entitlementKeys: [...new Set(product.entitlementKeys)] };
    });
    await this.dataSource.transaction(async (manager) => {
      await this.projects.assertExists(projectId, manager, true);
      await manager.query(`DELETE FROM catalog_products WHERE project_id = $1`, [projectId]);
      if (normalised.length > 0) {
        await manager.query(
          `INSERT INTO catalog_products (project_id, rail, product_id, entitlement_keys, position, updated_at)
           SELECT $1, p.rail, p.product_id, ARRAY(SELECT jsonb_array_elements_text(p.keys)), p.position, $3
             FROM jsonb_to_recordset($2::jsonb) AS p(rail text, product_id text, keys jsonb, position integer)`,
          [
            projectId,
            JSON.stringify(normalised.map((p, position) => ({ rail: p.rail, product_id: p.productId, keys: p.entitlementKeys, position }))),
            this.clock.now(),
          ],
        );
      }
      await this.registry.register(projectId, normalised.flatMap((p) => p.entitlementKeys), 'catalog', manager);
    });
    return normalised;
  }

  async list(projectId: string): Promise<CatalogProduct[]> {
    await this.projects.assertExists(projectId);
    const rows: { rail: PurchaseRail; product_id: string; entitlement_keys: string[] }[] = await this.dataSource.query(
      `SELECT rail, product_id, entitlement_keys FROM catalog_products WHERE project_id = $1 ORDER BY position`,
      [projectId],
    );
    return rows.map((row) => ({ rail: row.rail, productId: row.product_id, entitlementKeys: row.entitlement_keys }));
  }

  /** For the purchase rails: the keys a product grants (empty when it is not in the catalogue). */
  async entitlementKeysFor(projectId: string, rail: PurchaseRail, productId: string): Promise<string[]> {
    const rows: { entitlement_keys: string[] }[] = await this.dataSource.query(
      `SELECT entitlement_keys FROM catalog_products WHERE project_id = $1 AND rail = $2 AND product_id = $3`,
      [projectId, rail, productId],
    );
    return rows[0]?.entitlement_keys ?? [];
  }
}
