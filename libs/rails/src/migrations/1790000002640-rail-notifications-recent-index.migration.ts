import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The console's rails page lists a rail's latest notifications of one environment, newest first. */
export class RailNotificationsRecentIndex1790000002640 implements MigrationInterface {
  name = 'RailNotificationsRecentIndex1790000002640';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX IF NOT EXISTS rail_notifications_recent_idx ON rail_notifications (project_id, env, rail, received_at DESC, notification_id DESC)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS rail_notifications_recent_idx`);
  }
}
