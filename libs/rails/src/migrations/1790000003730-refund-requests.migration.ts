import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Apple refund requests (`CONSUMPTION_REQUEST`).
 *
 * `refund_requests`: one row per consumption request of a project and environment, keyed by
 * its `cr_…` id (derived from the notification's id, so a re-sent notification is the same
 * request). The customer is a composite foreign key to customers (project_id, env, id): a
 * request never points at another tenant's customer. The answer must come before `deadline`
 * (12 hours after the request); `state` moves once from `pending` to `sent` (with the answer
 * and the time it was sent) or `expired` (without). `next_attempt_at_ms`, `attempts` and
 * `last_error` schedule the automatic answer's retries (service clock ms).
 */
export class RefundRequests1790000003730 implements MigrationInterface {
  name = 'RefundRequests1790000003730';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE refund_requests (
        project_id         text        NOT NULL,
        env                text        NOT NULL CONSTRAINT refund_requests_env_ck CHECK (env IN ('sandbox', 'production')),
        id                 text        NOT NULL CONSTRAINT refund_requests_id_ck CHECK (starts_with(id, 'cr_') AND char_length(id) BETWEEN 4 AND 520),
        rail               text        NOT NULL CONSTRAINT refund_requests_rail_ck CHECK (rail = 'ios_store'),
        subscription_id    text        NOT NULL CONSTRAINT refund_requests_subscription_ck CHECK (char_length(subscription_id) BETWEEN 1 AND 512),
        transaction_id     text        NULL CONSTRAINT refund_requests_transaction_ck CHECK (char_length(transaction_id) BETWEEN 1 AND 512),
        customer_id        text        NOT NULL,
        received_at        timestamptz NOT NULL,
        deadline           timestamptz NOT NULL,
        state              text        NOT NULL CONSTRAINT refund_requests_state_ck CHECK (state IN ('pending', 'sent', 'expired')),
        answer             jsonb       NULL CONSTRAINT refund_requests_answer_ck CHECK (jsonb_typeof(answer) = 'object'),
        sent_at            timestamptz NULL,
        attempts           integer     NOT NULL DEFAULT 0 CONSTRAINT refund_requests_attempts_ck CHECK (attempts >= 0),
        next_attempt_at_ms bigint      NOT NULL CONSTRAINT refund_requests_next_attempt_ck CHECK (next_attempt_at_ms >= 0),
        last_error         text        NULL CONSTRAINT refund_requests_last_error_ck CHECK (char_length(last_error) <= 500),
        created_at         timestamptz NOT NULL,
        updated_at         timestamptz NOT NULL,
        CONSTRAINT refund_requests_pk PRIMARY KEY (project_id, env, id),
        CONSTRAINT refund_requests_customer_fk FOREIGN KEY (project_id, env, customer_id) REFERENCES customers (project_id, env, id),
        CONSTRAINT refund_requests_deadline_ck CHECK (deadline = received_at + interval '12 hours'),
        CONSTRAINT refund_requests_sent_ck CHECK ((state = 'sent') = (answer IS NOT NULL AND sent_at IS NOT NULL)),
        CONSTRAINT refund_requests_sent_before_deadline_ck CHECK (sent_at IS NULL OR sent_at < deadline)
      )`);
    await q.query(`CREATE INDEX refund_requests_recent_idx ON refund_requests (project_id, env, received_at DESC, id DESC)`);
    await q.query(`CREATE INDEX refund_requests_pending_idx ON refund_requests (deadline) WHERE state = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS refund_requests`);
  }
}
