import { Injectable } from '@nestjs/common';
import { ApiError, Clock, Sql } from '#platform';
import { ProjectDirectory } from '#keys';
import type { PurchaseRail } from '../domain/entitlement-rules.js';
import { CatalogRepository } from './catalog.repository.js';
import { EntitlementKeyRegistry } from './entitlement-key-registry.service.js';

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
    private readonly clock: Clock,
    private readonly projects: ProjectDirectory,
    private readonly registry: EntitlementKeyRegistry,
    private readonly catalog: CatalogRepository,
    private readonly sql: Sql,
  ) {}

  async replace(projectId: string, products: readonly CatalogProduct[]): Promise<CatalogProduct[]> {
    const seen = new Set<string>();
    const normalised = products.map((product, index) => {
      const id = `${product.rail}\u0000${product.productId}`;
      if (seen.has(id)) throw ApiError.invalidParam(`products[${index}]: duplicate productId ${product.productId} on rail ${product.rail}`);
      seen.add(id);
      return { rail: product.rail, productId: product.productId, entitlementKeys: [...new Set(product.entitlementKeys)] };
    });
    await this.sql.transaction(async () => {
      // Holds the project's row: writers of one project's catalogue run one at a time.
      await this.projects.assertExists(projectId, { lock: true });
      await this.catalog.replaceProducts(projectId, normalised, this.clock.now());
      await this.registry.register(
        projectId,
        normalised.flatMap((p) => p.entitlementKeys),
        'catalog',
      );
    });
    return normalised;
  }

  async list(projectId: string): Promise<CatalogProduct[]> {
    await this.projects.assertExists(projectId);
    return this.catalog.listProducts(projectId);
  }

  /**
   * For the purchase rails: the keys a product grants (empty when it is not in the catalogue).
   * Read in the rail's (ambient) transaction, so it never waits for a second pool connection.
   */
  entitlementKeysFor(projectId: string, rail: PurchaseRail, productId: string): Promise<string[]> {
    return this.catalog.keysFor(projectId, rail, productId);
  }
}
