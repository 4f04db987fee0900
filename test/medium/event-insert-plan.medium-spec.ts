import {
  FIRST_DELIVERY_EVENTS_SQL,
  FIRST_DELIVERY_EVENTS_WITH_ISSUES_SQL,
  INSERT_EVENTS_SQL,
  INSERT_EVENTS_WITH_ISSUES_SQL,
  INSERT_PARAM_TYPES,
} from '../../libs/telemetry/src/storage/event-insert.sql.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';

/**
 * EXPLAIN tests plan the statement the repository runs, imported from where it is defined,
 * never a pasted copy: a change to the SQL is planned here as it will run. The batch insert's
 * ON CONFLICT clauses must resolve to the intended unique keys (a wrong arbiter would turn a
 * retry into a duplicate or an error).
 */
describe('medium: EXPLAIN of the event batch insert (INSERT_EVENTS_SQL)', () => {
  let m: MediumContext;
  const TYPES = `(${INSERT_PARAM_TYPES.join(', ')})`;
  const ARGS = `('proj_plan', 'sandbox', 'app_plan', 0, NULL, NULL, '[]'::json, ${INSERT_PARAM_TYPES.slice(7)
    .map((type) => `'{}'::${type}`)
    .join(', ')})`;

  beforeAll(async () => {
    // The platform alone, without Redis: nothing here uses it, and a connection closed while it connects logs after the run.
    m = await createMediumContext({ modules: [], env: { REDIS_URL: undefined } });
  });
  afterAll(() => m?.close());

  /** The generic plan of `sql` with its parameters, on one connection (PREPARE is per session). */
  async function plan(name: string, sql: string): Promise<string> {
    const runner = m.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.query(`PREPARE ${name} ${TYPES} AS ${sql}`);
      const rows: Array<{ 'QUERY PLAN': string }> = await runner.query(`EXPLAIN (COSTS OFF) EXECUTE ${name} ${ARGS}`);
      await runner.query(`DEALLOCATE ${name}`);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      await runner.release();
    }
  }

  it('events conflict on their (project, env, event id, client day) key; hint sets on event_identity_hints_uq', async () => {
    const text = await plan('medium_insert_events', INSERT_EVENTS_SQL);
    expect(text).toMatch(/Insert on events/);
    expect(text).toMatch(/Insert on events e\n\s*Conflict Resolution: UPDATE\n\s*Conflict Arbiter Indexes: events_pk\n/);
    expect(text).toMatch(/Insert on event_identity_hints[\s\S]*Conflict Arbiter Indexes: event_identity_hints_uq/);
  });

  it('the variant with error issues also upserts issues on their primary key', async () => {
    const text = await plan('medium_insert_events_issues', INSERT_EVENTS_WITH_ISSUES_SQL);
    expect(text).toMatch(/Insert on error_issues[\s\S]*Conflict Arbiter Indexes: error_issues_pk/);
  });

  it('the first-delivery variants insert events without a conflict clause (a stored event fails them) and still upsert hint sets and issues', async () => {
    const text = await plan('medium_first_delivery', FIRST_DELIVERY_EVENTS_SQL);
    expect(text).toMatch(/Insert on events e\n/);
    expect(text).not.toMatch(/Insert on events e\n\s*Conflict Resolution/);
    expect(text).toMatch(/Insert on event_identity_hints[\s\S]*Conflict Arbiter Indexes: event_identity_hints_uq/);
    const withIssues = await plan('medium_first_delivery_issues', FIRST_DELIVERY_EVENTS_WITH_ISSUES_SQL);
    expect(withIssues).not.toMatch(/Insert on events e\n\s*Conflict Resolution/);
    expect(withIssues).toMatch(/Insert on error_issues[\s\S]*Conflict Arbiter Indexes: error_issues_pk/);
  });
});
