import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What an error costs in revenue, kept per fingerprint: how many of its affected users pay,
 * and its first affected users with revenue at risk first (the answer of
 * `/v1/errors/affected` at its largest limit). Working it out joins up to 5,000 user ids to
 * identity and the revenue ledger, too slow for every read; it is kept instead, at most 60 s
 * old (service clock): a read of an older one or of none works it out and stores it, and the
 * job `reporting.refresh_error_revenue` works out again, before they age, the ones read in the
 * last 10 minutes. `read_at_ms` moves at most once a minute per fingerprint. An erasure
 * removes the scope's rows in its transaction.
 */
export class ErrorRevenueSnapshots1790000003240 implements MigrationInterface {
  name = 'ErrorRevenueSnapshots1790000003240';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE error_revenue_snapshots (
        project_id     text    NOT NULL,
        env            text    NOT NULL CONSTRAINT error_revenue_snapshots_env_ck CHECK (env IN ('sandbox', 'production')),
        fingerprint    text    NOT NULL,
        paying_users   integer NOT NULL CONSTRAINT error_revenue_snapshots_paying_ck CHECK (paying_users >= 0),
        affected       jsonb   NOT NULL CONSTRAINT error_revenue_snapshots_affected_ck CHECK (jsonb_typeof(affected) = 'array'),
        computed_at_ms bigint  NOT NULL,
        read_at_ms     bigint  NOT NULL,
        CONSTRAINT error_revenue_snapshots_pk PRIMARY KEY (project_id, env, fingerprint)
      )`);
    // The refresh job's scan: recently read rows, oldest computation first.
    await q.query(`CREATE INDEX error_revenue_snapshots_read_idx ON error_revenue_snapshots (read_at_ms, computed_at_ms)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS error_revenue_snapshots`);
  }
}
