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

/** The project's revenue totals are gone (as after a rebuild with no purchases). */
export async function clearCustomerRevenue(db: DataSource, projectId: string): Promise<void> {
  await db.query(`DELETE FROM revenue_customer_totals WHERE project_id = $1`, [projectId]);
}

/** Many customers' monthly totals in one statement (volume for the list and its sorts). */
export async function seedCustomerRevenues(
  db: DataSource,
  scope: TenantScope,
  rows: readonly { customerId: string; monthlyMinor: number; currency?: string }[],
): Promise<void> {
  await db.query(
    `INSERT INTO revenue_customer_totals (project_id, env, customer_id, currency, monthly_minor)
     SELECT $1, $2, r.customer_id, r.currency, r.monthly_minor FROM unnest($3::text[], $4::text[], $5::bigint[]) AS r(customer_id, currency, monthly_minor)`,
    [scope.projectId, scope.env, rows.map((r) => r.customerId), rows.map((r) => r.currency ?? 'USD'), rows.map((r) => r.monthlyMinor)],
  );
}

/** Days the customer was active (YYYY-MM-DD), with its last active day kept beside them as the activity writer does. */
export async function seedActiveDays(db: DataSource, scope: TenantScope, customerId: string, days: readonly string[]): Promise<void> {
  await db.query(`INSERT INTO reporting_active_days (project_id, env, day, customer_id) SELECT $1, $2, d::date, $3 FROM unnest($4::text[]) AS d`, [
    scope.projectId,
    scope.env,
    customerId,
    days,
  ]);
  await seedLastActiveDays(db, scope, [{ customerId, day: [...days].sort().at(-1)! }]);
}

/** Only the customers' last active days (YYYY-MM-DD), in one statement (volume for the last-seen sort). */
export async function seedLastActiveDays(db: DataSource, scope: TenantScope, rows: readonly { customerId: string; day: string }[]): Promise<void> {
  await db.query(
    `INSERT INTO reporting_active_last_days (project_id, env, customer_id, day)
     SELECT $1, $2, r.customer_id, r.day::date FROM unnest($3::text[], $4::text[]) AS r(customer_id, day)`,
    [scope.projectId, scope.env, rows.map((r) => r.customerId), rows.map((r) => r.day)],
  );
}

/** Customers written directly, in one statement, with their email and creation time (volume no identify call could make quickly). */
export async function seedCustomers(
  db: DataSource,
  scope: TenantScope,
  rows: readonly { id: string; email?: string | null; createdAt: Date }[],
): Promise<void> {
  await db.query(
    `INSERT INTO customers (id, project_id, env, email, traits, created_at, updated_at)
     SELECT r.id, $1, $2, r.email, '{}', r.created_at, now() FROM unnest($3::text[], $4::text[], $5::timestamptz[]) AS r(id, email, created_at)`,
    [scope.projectId, scope.env, rows.map((r) => r.id), rows.map((r) => r.email ?? null), rows.map((r) => r.createdAt.toISOString())],
  );
}
