import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The hourly read of the voided-purchases list (`purchases.voidedpurchases.list`): per
 * project, the end of the last completed read (`read_until_ms`, service clock) and when the
 * next is due (`next_read_at_ms`). A replica leases the row while it reads (FOR UPDATE SKIP
 * LOCKED, wall-clock lease), so each project is read once per hour.
 */
export class AndroidVoidedReads1790000003618 implements MigrationInterface {
  name = 'AndroidVoidedReads1790000003618';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE android_voided_reads (
        project_id      text   NOT NULL REFERENCES projects (id),
        read_until_ms   bigint NULL CONSTRAINT android_voided_reads_until_ck CHECK (read_until_ms >= 0),
        next_read_at_ms bigint NOT NULL CONSTRAINT android_voided_reads_next_ck CHECK (next_read_at_ms >= 0),
        leased_until_ms bigint NULL,
        leased_by       text   NULL,
        last_outcome    text   NULL CONSTRAINT android_voided_reads_outcome_ck CHECK (last_outcome IN ('read', 'unavailable', 'rate_limited')),
        updated_at_ms   bigint NOT NULL,
        CONSTRAINT android_voided_reads_pk PRIMARY KEY (project_id),
        CONSTRAINT android_voided_reads_lease_ck CHECK ((leased_until_ms IS NULL) = (leased_by IS NULL))
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS android_voided_reads`);
  }
}
