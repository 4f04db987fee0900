import { randomUUID } from 'node:crypto';
import pg from 'pg';

/**
 * Tenant integrity held by the database itself: every row that names a
 * customer does so through the composite key (project_id, env, customer_id) ->
 * customers (project_id, env, id). A row pointing at a customer of another project, or of the
 * same project in the other environment, is refused with 23503 (foreign_key_violation),
 * whatever code wrote it. Plain SQL on the test database: no service is in the way.
 */
type Env = 'sandbox' | 'production';
interface Target {
  projectId: string;
  env: Env;
  customerId: string;
}

describe('tenant integrity: composite customer foreign keys', () => {
  let db: pg.Client;
  const run = randomUUID().slice(0, 8);
  const projectA = `proj_ti_a_${run}`;
  const projectB = `proj_ti_b_${run}`;
  // One customer per (project, env): the "home" customer and its two foreign twins.
  const home: Target = { projectId: projectA, env: 'sandbox', customerId: `cdcust_ti_a_sb_${run}` };
  const otherProject: Target = { projectId: projectB, env: 'sandbox', customerId: `cdcust_ti_b_sb_${run}` };
  const otherEnv: Target = { projectId: projectA, env: 'production', customerId: `cdcust_ti_a_pr_${run}` };
  let seq = 0;
  const uniq = (prefix: string) => `${prefix}_${run}_${++seq}`;

  beforeAll(async () => {
    db = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await db.connect();
    await db.query(`INSERT INTO projects (id, name, created_at) VALUES ($1, 'Tenant A', now()), ($2, 'Tenant B', now())`, [projectA, projectB]);
    for (const c of [home, otherProject, otherEnv]) {
      await db.query(`INSERT INTO customers (id, project_id, env, created_at, updated_at) VALUES ($1, $2, $3, now(), now())`, [
        c.customerId,
        c.projectId,
        c.env,
      ]);
    }
  });
  afterAll(() => db?.end());

  /** A row of `table` in home's tenant (project A, sandbox) naming the customer of `target`. */
  type Writer = (target: Target) => Promise<unknown>;
  const writers: Record<string, { constraint: string; write: Writer }> = {
    customer_aliases: {
      constraint: 'customer_aliases_customer_fk',
      write: (c) =>
        db.query(`INSERT INTO customer_aliases (project_id, env, type, value, customer_id, created_at) VALUES ($1, $2, 'developer', $3, $4, now())`, [
          home.projectId,
          home.env,
          uniq('user'),
          c.customerId,
        ]),
    },
    'merge_reviews (canonical)': {
      constraint: 'merge_reviews_canonical_customer_fk',
      write: async (c) => {
        // The other side is always a fresh customer of the home tenant (one review per pair).
        const other = uniq('cdcust_ti_side');
        await db.query(`INSERT INTO customers (id, project_id, env, created_at, updated_at) VALUES ($1, $2, $3, now(), now())`, [
          other,
          home.projectId,
          home.env,
        ]);
        return db.query(
          `INSERT INTO merge_reviews (id, project_id, env, canonical_customer_id, other_customer_id, created_at) VALUES ($1, $2, $3, $4, $5, now())`,
          [uniq('mr'), home.projectId, home.env, c.customerId, other],
        );
      },
    },
    'merge_reviews (other)': {
      constraint: 'merge_reviews_other_customer_fk',
      write: async (c) => {
        const canonical = uniq('cdcust_ti_side');
        await db.query(`INSERT INTO customers (id, project_id, env, created_at, updated_at) VALUES ($1, $2, $3, now(), now())`, [
          canonical,
          home.projectId,
          home.env,
        ]);
        return db.query(
          `INSERT INTO merge_reviews (id, project_id, env, canonical_customer_id, other_customer_id, created_at) VALUES ($1, $2, $3, $4, $5, now())`,
          [uniq('mr'), home.projectId, home.env, canonical, c.customerId],
        );
      },
    },
    erasures: {
      constraint: 'erasures_customer_fk',
      write: (c) =>
        db.query(`INSERT INTO erasures (project_id, env, customer_id, queued_at) VALUES ($1, $2, $3, now())`, [home.projectId, home.env, c.customerId]),
    },
    device_bindings: {
      constraint: 'device_bindings_customer_fk',
      write: (c) =>
        db.query(
          `INSERT INTO device_bindings (project_id, env, anonymous_id, customer_id, user_id, verified_at, created_at, updated_at)
           VALUES ($1, $2, $3, $4, 'user_1', now(), now(), now())`,
          [home.projectId, home.env, uniq('anon'), c.customerId],
        ),
    },
    entitlements: {
      constraint: 'entitlements_customer_fk',
      write: (c) =>
        db.query(
          `INSERT INTO entitlements (project_id, env, customer_id, entitlement_key, rail, product_id, subscription_id, state, created_at, updated_at)
           VALUES ($1, $2, $3, $4, 'manual', 'manual', 'manual', 'active', now(), now())`,
          [home.projectId, home.env, c.customerId, uniq('pro')],
        ),
    },
    rail_subscriptions: {
      constraint: 'rail_subscriptions_customer_fk',
      write: (c) =>
        db.query(
          `INSERT INTO rail_subscriptions (project_id, env, rail, subscription_id, customer_id, product_id, state, rail_time_ms, created_at, updated_at)
           VALUES ($1, $2, 'card_payments', $3, $4, 'prod_pro', 'active', 1, now(), now())`,
          [home.projectId, home.env, uniq('sub'), c.customerId],
        ),
    },
    rail_transactions: {
      constraint: 'rail_transactions_customer_fk',
      write: (c) =>
        db.query(
          `INSERT INTO rail_transactions (project_id, env, rail, transaction_id, subscription_id, customer_id, decision, created_at)
           VALUES ($1, $2, 'ios_store', $3, 'sub_1', $4, 'applied', now())`,
          [home.projectId, home.env, uniq('tx'), c.customerId],
        ),
    },
    rail_notifications: {
      constraint: 'rail_notifications_customer_fk',
      write: (c) =>
        db.query(
          `INSERT INTO rail_notifications (project_id, rail, notification_id, env, event_type, decision, customer_id, received_at, processed_at)
           VALUES ($1, 'android_store', $2, $3, 'SUBSCRIPTION_RENEWED', 'applied', $4, now(), now())`,
          [home.projectId, uniq('ntf'), home.env, c.customerId],
        ),
    },
    subscription_history: {
      constraint: 'subscription_history_customer_fk',
      write: (c) =>
        db.query(
          `INSERT INTO subscription_history (project_id, env, id, customer_id, type, occurred_at_ms, rail, subscription_id, product_id, audit_event_id, details, recorded_at)
           VALUES ($1, $2, $3, $4, 'subscription.started', 1, 'card_payments', 'sub_1', 'prod_pro', 'rail_evt_1', '{}', now())`,
          [home.projectId, home.env, `hist_${String(++seq).padStart(24, '0')}`, c.customerId],
        ),
    },
    migrated_users: {
      constraint: 'migrated_users_customer_fk',
      write: (c) =>
        db.query(`INSERT INTO migrated_users (project_id, env, developer_user_id, customer_id, created_at, updated_at) VALUES ($1, $2, $3, $4, now(), now())`, [
          home.projectId,
          home.env,
          uniq('legacy'),
          c.customerId,
        ]),
    },
    event_identity_hints: {
      constraint: 'event_identity_hints_customer_fk',
      write: (c) =>
        db.query(
          `INSERT INTO event_identity_hints (project_id, env, anonymous_id, pending, customer_id, first_seen_ms, last_seen_ms) VALUES ($1, $2, $3, false, $4, 1, 1)`,
          [home.projectId, home.env, uniq('anon'), c.customerId],
        ),
    },
  };

  async function refusal(write: Promise<unknown>): Promise<{ code?: string; constraint?: string }> {
    try {
      await write;
    } catch (err) {
      const e = err as { code?: string; constraint?: string };
      return { code: e.code, constraint: e.constraint };
    }
    throw new Error('the database accepted a row pointing into another tenant');
  }

  describe.each(Object.entries(writers))('%s', (_table, { constraint, write }) => {
    it('accepts a row naming a customer of its own tenant', async () => {
      await expect(write(home)).resolves.toBeDefined();
    });

    it('refuses a row naming a customer of another project (23503)', async () => {
      expect(await refusal(write(otherProject))).toEqual({ code: '23503', constraint });
    });

    it('refuses a row naming a customer of the same project in the other environment (23503)', async () => {
      expect(await refusal(write(otherEnv))).toEqual({ code: '23503', constraint });
    });
  });

  it('refuses an update that moves a row onto another tenant’s customer', async () => {
    const key = uniq('moved');
    await db.query(
      `INSERT INTO entitlements (project_id, env, customer_id, entitlement_key, rail, product_id, subscription_id, state, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'manual', 'manual', 'manual', 'active', now(), now())`,
      [home.projectId, home.env, home.customerId, key],
    );
    for (const foreign of [otherProject, otherEnv]) {
      const moved = db.query(`UPDATE entitlements SET customer_id = $4 WHERE project_id = $1 AND env = $2 AND entitlement_key = $3`, [
        home.projectId,
        home.env,
        key,
        foreign.customerId,
      ]);
      expect(await refusal(moved)).toEqual({ code: '23503', constraint: 'entitlements_customer_fk' });
    }
  });

  it('every customer reference in the schema is a composite (project_id, env, …) key, except the documented ones', async () => {
    // Columns naming one of our customers (service_customer_id is a client-sent hint, not ours).
    const columns = await db.query<{ table_name: string; column_name: string }>(
      `SELECT c.table_name, c.column_name
         FROM information_schema.columns c
         JOIN pg_class t ON t.relname = c.table_name AND t.relnamespace = 'public'::regnamespace
        WHERE c.table_schema = 'public' AND c.column_name LIKE '%customer_id' AND c.column_name <> 'service_customer_id'
          AND NOT t.relispartition
        ORDER BY 1, 2`,
    );
    const keys = await db.query<{ table_name: string; columns: string[] }>(
      `SELECT con.conrelid::regclass::text AS table_name,
              array_agg(a.attname::text ORDER BY k.ord) AS columns
         FROM pg_constraint con
         CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
         JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
        WHERE con.contype = 'f' AND con.confrelid = 'customers'::regclass AND con.convalidated
        GROUP BY con.oid, con.conrelid`,
    );
    const covered = new Set(
      keys.rows.filter((k) => k.columns.length === 3 && k.columns[0] === 'project_id' && k.columns[1] === 'env').map((k) => `${k.table_name}.${k.columns[2]}`),
    );
    // No single-column key to customers (id) is left: the composite key implies it.
    expect(keys.rows.filter((k) => k.columns.length !== 3)).toEqual([]);
    // docs/decisions/no-foreign-key-on-events-or-audit-entries-customer-id.md: the partitioned events table and the audit journal carry no key;
    // nor do the webhook outbox and its sequences, which outlive the customer (`customer.erased` is
    // recorded once the customer row is gone).
    const exceptions = new Set(['events.customer_id', 'audit_entries.customer_id', 'webhook_events.customer_id', 'webhook_customer_sequences.customer_id']);
    const uncovered = columns.rows.map((r) => `${r.table_name}.${r.column_name}`).filter((c) => !covered.has(c) && !exceptions.has(c));
    expect(uncovered).toEqual([]);
    expect([...exceptions].filter((c) => covered.has(c))).toEqual([]);
  });
});
