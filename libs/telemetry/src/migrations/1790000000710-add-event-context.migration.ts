import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event's client `context` (string values only, bounded by the validator), kept for
 * error reads: its `appVersion` is the release of an error event without
 * `properties.release`. Nullable without a default: a catalogue-only change on the
 * partitioned parent and every partition, no rewrite.
 */
export class AddEventContext1790000000710 implements MigrationInterface {
  name = 'AddEventContext1790000000710';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events ADD COLUMN context jsonb NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events DROP COLUMN IF EXISTS context`);
  }
}
