import { Injectable } from '@nestjs/common';
import { type TenantScope, Sql } from '#platform';
import type { EntitlementState, Rail } from '../domain/entitlement-rules.js';

export interface EntitlementHistoryRow {
  key: string;
  rail: Rail;
  productId: string;
  subscriptionId: string;
  state: EntitlementState;
  /** Unix seconds (floored); null = lifetime. */
  validUntil: number | null;
  createdAt: number;
  updatedAt: number;
}

/** Every row of one customer, whatever its state: one probe of entitlements_customer_key_rail_uq, bounded. */
@Injectable()
export class EntitlementHistoryRepository {
  constructor(private readonly sql: Sql) {}

  async ofCustomer(scope: TenantScope, customerId: string, limit: number): Promise<EntitlementHistoryRow[]> {
    return this.sql.rows<EntitlementHistoryRow>(
      `SELECT entitlement_key AS key, rail, product_id AS "productId", subscription_id AS "subscriptionId", state,
              floor(extract(epoch FROM valid_until))::float8 AS "validUntil",
              floor(extract(epoch FROM created_at))::float8 AS "createdAt",
              floor(extract(epoch FROM updated_at))::float8 AS "updatedAt"
         FROM entitlements WHERE project_id = $1 AND env = $2 AND customer_id = $3
        ORDER BY entitlement_key, rail LIMIT $4`,
      [scope.projectId, scope.env, customerId, limit],
    );
  }
}
