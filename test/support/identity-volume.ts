import type { TestApp } from './test-app.js';
import { createProjectWithApp } from './fixtures.js';

/**
 * A separate project with realistic volume (10,000 customers per environment, each with a
 * developer and an anonymous alias and a device binding) and fresh statistics, so that
 * EXPLAIN shows the plan production would get. Returns the project id.
 */
export async function loadIdentityVolume(t: TestApp): Promise<string> {
  const pid = (await createProjectWithApp(t)).projectId;
  await t.dataSource.query(
    `INSERT INTO customers (id, project_id, env, created_at, updated_at)
     SELECT 'cdcust_' || $1 || e || g, $1, e, now(), now() FROM generate_series(1, 10000) g, unnest(ARRAY['sandbox', 'production']) e`,
    [pid],
  );
  // Fresh statistics before the rows that reference these customers: with none, the planner may
  // check each foreign key through the (project, env, …) prefix indexes instead of the key.
  await t.dataSource.query('ANALYZE customers');
  await t.dataSource.query(
    `INSERT INTO customer_aliases (project_id, env, type, value, customer_id, created_at)
     SELECT $1, e, ty, ty || g, 'cdcust_' || $1 || e || g, now()
       FROM generate_series(1, 10000) g, unnest(ARRAY['sandbox', 'production']) e, unnest(ARRAY['developer', 'anonymous']) ty`,
    [pid],
  );
  await t.dataSource.query(
    `INSERT INTO device_bindings (project_id, env, anonymous_id, customer_id, user_id, verified_at, created_at, updated_at)
     SELECT $1, e, 'anonymous' || g, 'cdcust_' || $1 || e || g, 'developer' || g, now(), now(), now()
       FROM generate_series(1, 10000) g, unnest(ARRAY['sandbox', 'production']) e`,
    [pid],
  );
  await t.dataSource.query('ANALYZE customers, customer_aliases, device_bindings');
  return pid;
}

/** The text of `EXPLAIN <sql>`. */
export async function explain(t: TestApp, sql: string, params: unknown[]): Promise<string> {
  const rows: { 'QUERY PLAN': string }[] = await t.dataSource.query(`EXPLAIN ${sql}`, params);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}
