import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Each lifecycle event type's own fields (the history entry's `details`), as the event carries them. */
const OWN_FIELDS: Record<string, readonly string[]> = {
  'subscription.started': ['periodType', 'isTrialStart'],
  'subscription.renewed': ['isTrialConversion'],
  'subscription.recovered': ['billingIssueDetectedAt'],
  'subscription.canceled': ['reason'],
  'subscription.uncanceled': ['reason'],
  'subscription.billing_issue': ['gracePeriodEndsAt'],
  'subscription.paused': ['autoResumeAt'],
  'subscription.resumed': ['autoResumeAt'],
  'subscription.extended': ['previousAccessEndsAt'],
  'subscription.product_changed': ['previousProductId', 'effective'],
  'subscription.price_change': ['priceChange'],
  'subscription.expired': ['expirationReason'],
  'subscription.refunded': ['reason', 'amountMicros', 'currency'],
  'subscription.refund_reversed': ['amountMicros', 'currency'],
  'subscription.transferred': ['fromServiceCustomerId'],
  'subscription.consumption_requested': ['requestId', 'deadline'],
};

/**
 * Fills the customer history with the subscription changes recorded before it was kept: every
 * `subscription.*` and `purchase.completed` event of the outbound events (`webhook_events`,
 * recorded where the scope had an enabled endpoint) that no history entry holds yet (same
 * scope, audit entry, type and subscription). The entry is the event as announced: its type,
 * rail, subscription and product, its audit entry (`auditEventId`; events of the time before
 * the lifecycle named it as `railEventId`) and the type's own fields; its time is the audit
 * entry's rail time, else when the event was recorded; its customer is the one the
 * subscription's record belongs to now (merges and folds moved the history the same way), else
 * the event's. Ids derive from the event's, so running it again adds nothing. Events whose body
 * was erased (a forgotten customer) stay out. Scopes without an endpoint then recorded no
 * event: their changes are in the audit log only.
 */
export class SubscriptionHistoryBackfill1790000003900 implements MigrationInterface {
  name = 'SubscriptionHistoryBackfill1790000003900';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `WITH own(type, fields) AS (SELECT * FROM jsonb_each($1::jsonb)),
       events AS (
         SELECT e.project_id, e.env, e.id AS event_id, e.type, e.customer_id, e.created_at_ms, e.ctid AS position,
                e.body::jsonb -> 'data' AS data
           FROM webhook_events e
          WHERE (e.type LIKE 'subscription.%' OR e.type = 'purchase.completed') AND e.body IS NOT NULL),
       shaped AS (
         SELECT ev.*,
                ev.data ? 'auditEventId' AS lifecycle,
                COALESCE(ev.data ->> 'auditEventId', ev.data ->> 'railEventId') AS audit_event_id,
                ev.data ->> 'rail' AS rail, ev.data ->> 'subscriptionId' AS subscription_id,
                COALESCE(ev.data ->> 'productId', ev.data -> 'subscription' ->> 'productId') AS product_id
           FROM events ev),
       entries AS (
         SELECT s.project_id, s.env, 'hist_' || substr(md5(s.project_id || '|' || s.env || '|' || s.event_id), 1, 24) AS id,
                COALESCE(r.customer_id, s.customer_id) AS customer_id, s.type,
                COALESCE(CASE WHEN a.details ->> 'railTimeMs' ~ '^[0-9]{1,15}$' THEN (a.details ->> 'railTimeMs')::bigint END, s.created_at_ms) AS occurred_at_ms,
                s.rail, s.subscription_id, s.product_id, s.audit_event_id,
                CASE WHEN s.lifecycle THEN NULLIF(s.data ->> 'railEventId', '') ELSE NULLIF(a.details ->> 'notificationId', '') END AS rail_event_id,
                CASE WHEN s.lifecycle
                     THEN COALESCE((SELECT jsonb_object_agg(f.key, s.data -> f.key)
                                      FROM own o, jsonb_array_elements_text(o.fields) AS f(key)
                                     WHERE o.type = s.type AND s.data ? f.key), '{}'::jsonb)
                     ELSE '{}'::jsonb END AS details,
                s.created_at_ms, s.position
           FROM shaped s
           LEFT JOIN rail_subscriptions r ON r.project_id = s.project_id AND r.env = s.env AND r.rail = s.rail AND r.subscription_id = s.subscription_id
           LEFT JOIN audit_entries a ON a.project_id = s.project_id AND a.env = s.env AND a.event_id = s.audit_event_id
          WHERE s.rail IN ('ios_store', 'card_payments', 'android_store')
            AND char_length(s.subscription_id) BETWEEN 1 AND 512 AND char_length(s.product_id) BETWEEN 1 AND 200
            AND char_length(s.audit_event_id) BETWEEN 1 AND 128 AND s.type ~ '^(subscription|purchase)\\.[a-z_]{1,60}$')
       INSERT INTO subscription_history
              (project_id, env, id, customer_id, type, occurred_at_ms, rail, subscription_id, product_id, audit_event_id, rail_event_id, details, recorded_at)
       SELECT n.project_id, n.env, n.id, n.customer_id, n.type, greatest(n.occurred_at_ms, 0), n.rail, n.subscription_id, n.product_id, n.audit_event_id,
              CASE WHEN char_length(n.rail_event_id) <= 512 THEN n.rail_event_id END, n.details, now()
         FROM entries n
        WHERE n.customer_id IS NOT NULL
          AND EXISTS (SELECT 1 FROM customers c WHERE c.project_id = n.project_id AND c.env = n.env AND c.id = n.customer_id)
          AND NOT EXISTS (SELECT 1 FROM subscription_history h
                           WHERE h.project_id = n.project_id AND h.env = n.env AND h.audit_event_id = n.audit_event_id
                             AND h.type = n.type AND h.subscription_id = n.subscription_id)
        ORDER BY n.occurred_at_ms, n.created_at_ms, n.position
       ON CONFLICT ON CONSTRAINT subscription_history_pk DO NOTHING`,
      [JSON.stringify(OWN_FIELDS)],
    );
  }

  /** The filled entries cannot be told from those written since: they stay. */
  async down(): Promise<void> {}
}
