import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The W3C trace context (`traceparent`, `tracestate`) of the change that produced an event,
 * when tracing was on: its deliveries continue that trace, so a change can be followed to the
 * app's back-end. Both null without tracing.
 */
export class WebhooksTraceContext1790000002900 implements MigrationInterface {
  name = 'WebhooksTraceContext1790000002900';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE webhook_events
        ADD COLUMN traceparent text NULL
          CONSTRAINT webhook_events_traceparent_ck CHECK (traceparent ~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$'),
        ADD COLUMN tracestate text NULL
          CONSTRAINT webhook_events_tracestate_ck CHECK (tracestate IS NULL OR (char_length(tracestate) <= 512 AND traceparent IS NOT NULL))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_events DROP COLUMN IF EXISTS tracestate, DROP COLUMN IF EXISTS traceparent`);
  }
}
