import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Rail records by lifecycle state within a scope: the console's customer list finds the
 * customers with a subscription in a state, and the revenue read counts active trials per rail.
 */
export class RailSubscriptionsLifecycleState1790000003751 implements MigrationInterface {
  name = 'RailSubscriptionsLifecycleState1790000003751';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX IF NOT EXISTS rail_subscriptions_lifecycle_state_idx ON rail_subscriptions (project_id, env, lifecycle_state, customer_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS rail_subscriptions_lifecycle_state_idx`);
  }
}
