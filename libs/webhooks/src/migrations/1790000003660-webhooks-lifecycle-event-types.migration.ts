import type { MigrationInterface, QueryRunner } from 'typeorm';

const BEFORE = [
  'customer.entitlements.updated',
  'subscription.started',
  'subscription.renewed',
  'subscription.canceled',
  'subscription.uncanceled',
  'subscription.billing_issue',
  'subscription.expired',
  'subscription.refunded',
  'subscription.product_changed',
  'entitlement.granted_manually',
  'entitlement.revoked_manually',
  'customer.erased',
  'test',
];

/** The subscription lifecycle's event types (recovered, paused, resumed, extended, price change, refund reversed, transferred, purchase completed, consumption requested). */
const ADDED = [
  'subscription.recovered',
  'subscription.paused',
  'subscription.resumed',
  'subscription.extended',
  'subscription.price_change',
  'subscription.refund_reversed',
  'subscription.transferred',
  'subscription.consumption_requested',
  'purchase.completed',
];

const check = (types: readonly string[]) => `CHECK (type IN (${types.map((type) => `'${type}'`).join(', ')}))`;

/** Outbound events may carry every type of the subscription lifecycle. */
export class WebhooksLifecycleEventTypes1790000003660 implements MigrationInterface {
  name = 'WebhooksLifecycleEventTypes1790000003660';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_type_ck`);
    await q.query(`ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_type_ck ${check([...BEFORE, ...ADDED])}`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_type_ck`);
    await q.query(`ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_type_ck ${check(BEFORE)} NOT VALID`);
  }
}
