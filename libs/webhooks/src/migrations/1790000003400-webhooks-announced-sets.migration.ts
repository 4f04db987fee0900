import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What receivers last heard of each customer: the set of active entitlements the customer's
 * last numbered update announced (one entry per key), the number it was announced with, and
 * when; and, for the statement that last took the counter, the set announced before it where
 * that differs from the set its change read ('' where the same, NULL where not vouched for; a
 * new counter holds what its change read). Under the counter's lock a change compares what it
 * read as "before" with what receivers last heard, and announces its `changes` against the latter.
 *
 * The kept set is trusted only when it was announced with the counter's last number (a replica
 * of the previous release numbers updates without keeping a set) and while an endpoint of the
 * scope has been enabled since (no change went untracked in between): `enabled_at` is when each
 * endpoint last became enabled, set by a trigger on every path that enables one. Every endpoint
 * enabled now became enabled after the last time the scope had none, so the earliest of them
 * bounds that time; replacing an endpoint by another moves it later too (sets kept before are
 * then not vouched for until the customer's next update: the change's own read is used).
 */
export class WebhooksAnnouncedSets1790000003400 implements MigrationInterface {
  name = 'WebhooksAnnouncedSets1790000003400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_customer_sequences ADD COLUMN announced text, ADD COLUMN announced_sequence bigint,
                     ADD COLUMN announced_at timestamptz, ADD COLUMN previous_announced text`);
    await q.query(`ALTER TABLE webhook_endpoints ADD COLUMN enabled_at timestamptz`);
    await q.query(`UPDATE webhook_endpoints SET enabled_at = now() WHERE status = 'enabled'`);
    await q.query(`
      CREATE FUNCTION webhook_endpoint_enabled_at() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.status = 'enabled' AND (TG_OP = 'INSERT' OR OLD.status <> 'enabled') THEN
          -- The moment of the write, not the transaction's start: the margin counts from close to the commit.
          NEW.enabled_at := clock_timestamp();
        END IF;
        RETURN NEW;
      END $$`);
    await q.query(`CREATE TRIGGER webhook_endpoint_enabled_at BEFORE INSERT OR UPDATE OF status ON webhook_endpoints
                     FOR EACH ROW EXECUTE FUNCTION webhook_endpoint_enabled_at()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS webhook_endpoint_enabled_at ON webhook_endpoints`);
    await q.query(`DROP FUNCTION IF EXISTS webhook_endpoint_enabled_at()`);
    await q.query(`ALTER TABLE webhook_endpoints DROP COLUMN IF EXISTS enabled_at`);
    await q.query(`ALTER TABLE webhook_customer_sequences DROP COLUMN IF EXISTS previous_announced, DROP COLUMN IF EXISTS announced_at,
                     DROP COLUMN IF EXISTS announced_sequence, DROP COLUMN IF EXISTS announced`);
  }
}
