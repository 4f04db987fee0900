import { Injectable } from '@nestjs/common';
import { type TenantScope, Sql } from '#platform';
import type { PurchaseRail, RailDecision } from '../model/rail-model.js';

export interface RailNotificationListRow {
  notificationId: string;
  eventType: string;
  decision: RailDecision;
  customerId: string | null;
  auditEventId: string | null;
  receivedAt: Date;
  processedAt: Date;
}

/** A rail's notifications of one environment, newest first (rail_notifications_recent_idx), bounded. */
@Injectable()
export class RailNotificationsReadRepository {
  constructor(private readonly sql: Sql) {}

  /** At most `limit`, older than the notification `before` when given. */
  async recent(scope: TenantScope, rail: PurchaseRail, before: string | null, limit: number): Promise<RailNotificationListRow[]> {
    return this.sql.rows<RailNotificationListRow>(
      `SELECT notification_id AS "notificationId", event_type AS "eventType", decision, customer_id AS "customerId",
              audit_event_id AS "auditEventId", received_at AS "receivedAt", processed_at AS "processedAt"
         FROM rail_notifications n
        WHERE project_id = $1 AND env = $2 AND rail = $3
          AND ($4::text IS NULL OR (received_at, notification_id) < (SELECT b.received_at, b.notification_id FROM rail_notifications b
                                                                      WHERE b.project_id = $1 AND b.rail = $3 AND b.notification_id = $4))
        ORDER BY received_at DESC, notification_id DESC LIMIT $5`,
      [scope.projectId, scope.env, rail, before, limit],
    );
  }
}
