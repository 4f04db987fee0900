import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The operator's project list pages newest first by (created_at, id). */
export class KeysProjectListIndex1790000002620 implements MigrationInterface {
  name = 'KeysProjectListIndex1790000002620';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS projects_created_idx ON projects (created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS projects_created_idx`);
  }
}
