import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each rail record keeps its subscription object (the lifecycle's state, period, money and
 * dates) and the object's state as a column for filters. Records applied before stay NULL
 * until their next notification or read.
 */
export class RailSubscriptionObjects1790000003640 implements MigrationInterface {
  name = 'RailSubscriptionObjects1790000003640';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rail_subscriptions ADD COLUMN IF NOT EXISTS subscription jsonb NULL`);
    await q.query(`ALTER TABLE rail_subscriptions ADD COLUMN IF NOT EXISTS lifecycle_state text NULL`);
    await q.query(
      `ALTER TABLE rail_subscriptions ADD CONSTRAINT rail_subscriptions_lifecycle_state_check
         CHECK (lifecycle_state IN ('active', 'trialing', 'in_grace_period', 'in_billing_retry', 'on_hold', 'paused', 'expired', 'refunded'))`,
    );
    await q.query(
      `ALTER TABLE rail_subscriptions ADD CONSTRAINT rail_subscriptions_subscription_check
         CHECK (subscription IS NULL OR (jsonb_typeof(subscription) = 'object' AND subscription->>'state' = lifecycle_state))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE rail_subscriptions DROP CONSTRAINT IF EXISTS rail_subscriptions_subscription_check`);
    await q.query(`ALTER TABLE rail_subscriptions DROP CONSTRAINT IF EXISTS rail_subscriptions_lifecycle_state_check`);
    await q.query(`ALTER TABLE rail_subscriptions DROP COLUMN IF EXISTS lifecycle_state`);
    await q.query(`ALTER TABLE rail_subscriptions DROP COLUMN IF EXISTS subscription`);
  }
}
