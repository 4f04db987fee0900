import type { TenantScope } from '#platform';
import type { DataSource } from 'typeorm';

/**
 * Revenue ledger states written directly, for tests of what reads do with them; the rails'
 * notifications that write the ledger have their own tests.
 */

/** The customer pays `monthlyMinor` a month in `currency` (its running total, replaced if set before). */
export async function seedCustomerRevenue(db: DataSource, scope: TenantScope, customerId: string, monthlyMinor: number, currency = 'USD'): Promise<void> {
  await db.query(
    `INSERT INTO revenue_customer_totals (project_id, env, customer_id, currency, monthly_minor) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (project_id, env, customer_id, currency) DO UPDATE SET monthly_minor = EXCLUDED.monthly_minor`,
    [scope.projectId, scope.env, customerId, currency, monthlyMinor],
  );
}
