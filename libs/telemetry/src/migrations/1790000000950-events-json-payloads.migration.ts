import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event payload columns (properties, tags, category_tags, context) become
 * `json` instead of `jsonb`. Nothing queries inside them in PostgreSQL (they are written
 * once per delivery and read back whole), so the binary conversion and re-serialisation of
 * jsonb were pure cost on the hottest statement: about 1 ms of PostgreSQL time per
 * 100-event batch (docs/performance.md). `json` still validates the text on input. Keys
 * now come back in the order the client sent them (the validator serialised them once).
 * One rewrite of the partitions when it runs; the erasure hook's `'{}'::jsonb` assigns
 * through the built-in assignment cast.
 */
export class EventsJsonPayloads1790000000950 implements MigrationInterface {
  name = 'EventsJsonPayloads1790000000950';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events ALTER COLUMN properties DROP DEFAULT`);
    await q.query(
      `ALTER TABLE events
         ALTER COLUMN properties TYPE json USING properties::json,
         ALTER COLUMN tags TYPE json USING tags::json,
         ALTER COLUMN category_tags TYPE json USING category_tags::json,
         ALTER COLUMN context TYPE json USING context::json`,
    );
    await q.query(`ALTER TABLE events ALTER COLUMN properties SET DEFAULT '{}'::json`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events ALTER COLUMN properties DROP DEFAULT`);
    await q.query(
      `ALTER TABLE events
         ALTER COLUMN properties TYPE jsonb USING properties::jsonb,
         ALTER COLUMN tags TYPE jsonb USING tags::jsonb,
         ALTER COLUMN category_tags TYPE jsonb USING category_tags::jsonb,
         ALTER COLUMN context TYPE jsonb USING context::jsonb`,
    );
    await q.query(`ALTER TABLE events ALTER COLUMN properties SET DEFAULT '{}'::jsonb`);
  }
}
