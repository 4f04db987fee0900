import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reads at expiry (docs/rails.md, "Reading the rails"): one row per rail subscription whose
 * `valid_until` passed while it was still active, for that `valid_until` (`due_valid_until`).
 *
 * - `status`: `pending` (to read at `next_read_at_ms`), `done` (read, or superseded by a newer
 *   rail state). A later `valid_until` of the same subscription resets the row to `pending`.
 * - `attempts`: reads that found the rail unreadable; they set the back-off (5 min, 30 min,
 *   2 h, then every 12 h). A rate limit (the reader's `retryAfterMs`) is not an attempt.
 * - `leased_until_ms` / `leased_by`: the replica reading the row now (claimed with
 *   FOR UPDATE SKIP LOCKED); a replica that dies frees the row when the lease passes.
 *
 * Times are the service clock's (Unix ms), so a test-clock advance makes rows due. The row
 * goes with its subscription (ON DELETE CASCADE): rail records are never deleted otherwise.
 */
export class RailExpiryReads1790000002300 implements MigrationInterface {
  name = 'RailExpiryReads1790000002300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE rail_expiry_reads (
        project_id       text        NOT NULL,
        env              text        NOT NULL,
        rail             text        NOT NULL,
        subscription_id  text        NOT NULL,
        due_valid_until  timestamptz NOT NULL,
        status           text        NOT NULL CONSTRAINT rail_expiry_reads_status_ck CHECK (status IN ('pending', 'done')),
        attempts         integer     NOT NULL DEFAULT 0 CONSTRAINT rail_expiry_reads_attempts_ck CHECK (attempts >= 0),
        next_read_at_ms  bigint      NOT NULL CONSTRAINT rail_expiry_reads_next_ck CHECK (next_read_at_ms >= 0),
        leased_until_ms  bigint      NULL,
        leased_by        text        NULL,
        last_outcome     text        NULL CONSTRAINT rail_expiry_reads_outcome_ck
                                     CHECK (last_outcome IN ('applied', 'no_change', 'no_subscription', 'unavailable', 'rate_limited', 'superseded')),
        updated_at_ms    bigint      NOT NULL,
        CONSTRAINT rail_expiry_reads_pk PRIMARY KEY (project_id, env, rail, subscription_id),
        CONSTRAINT rail_expiry_reads_subscription_fk FOREIGN KEY (project_id, env, rail, subscription_id)
          REFERENCES rail_subscriptions (project_id, env, rail, subscription_id) ON DELETE CASCADE,
        CONSTRAINT rail_expiry_reads_lease_ck CHECK ((leased_until_ms IS NULL) = (leased_by IS NULL))
      )`);
    await q.query(`CREATE INDEX rail_expiry_reads_due_idx ON rail_expiry_reads (next_read_at_ms) WHERE status = 'pending'`);
    // The sweep's search for subscriptions whose end passed while active.
    await q.query(`CREATE INDEX rail_subscriptions_active_until_idx ON rail_subscriptions (valid_until) WHERE state = 'active' AND valid_until IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS rail_subscriptions_active_until_idx`);
    await q.query(`DROP TABLE IF EXISTS rail_expiry_reads`);
  }
}
