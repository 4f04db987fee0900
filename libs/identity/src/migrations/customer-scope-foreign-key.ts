import type { QueryRunner } from 'typeorm';

/**
 * Tenant integrity by the database: `table.column` points at its customer through the composite
 * key (project_id, env, column) -> customers (project_id, env, id), backed by the unique index
 * customers_scope_id_uq, so a row can never name another tenant's customer (other project or
 * other environment). Added NOT VALID (a short lock, new writes checked at once), then
 * validated against the existing rows: a tenant-crossing row already stored fails the
 * migration, naming the key. Used by every context's migration that adds such a key.
 */
export async function addCustomerScopeForeignKey(q: QueryRunner, table: string, constraint: string, column = 'customer_id'): Promise<void> {
  await q.query(`
    ALTER TABLE ${table} ADD CONSTRAINT ${constraint}
      FOREIGN KEY (project_id, env, ${column}) REFERENCES customers (project_id, env, id) NOT VALID`);
  await q.query(`ALTER TABLE ${table} VALIDATE CONSTRAINT ${constraint}`);
}
