import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The console's customer list finds customers by a case-insensitive prefix of a rail subscription id (original transaction id, `sub_…`, purchase token). */
export class RailSubscriptionIdPrefix1790000003711 implements MigrationInterface {
  name = 'RailSubscriptionIdPrefix1790000003711';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX IF NOT EXISTS rail_subscriptions_scope_id_prefix_idx ON rail_subscriptions (project_id, env, lower(subscription_id) text_pattern_ops)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS rail_subscriptions_scope_id_prefix_idx`);
  }
}
