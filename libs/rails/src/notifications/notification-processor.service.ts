import { Injectable } from '@nestjs/common';
import { Clock, Metrics, type TenantScope, Sql } from '#platform';
import type { PurchaseRail } from '../model/rail-model.js';
import { type RailNotificationRecord, type RailTransactionRecord, RailSubscriptionsRepository } from '../model/rail-subscriptions.repository.js';
import type { RecordedDecision } from '../model/rail-state-applier.service.js';
import type { RailNotificationView } from './rail-notification.view.js';

export interface AuthenticNotification {
  scope: TenantScope;
  rail: PurchaseRail;
  notificationId: string;
  /** The rail's own type (`customer.subscription.updated`, `SUBSCRIPTION_RENEWED`, `DID_RENEW`, …). */
  eventType: string;
  /** Unix ms the raw event was received. */
  receivedAtMs: number;
}

/**
 * What the rail did with the notification; its one audit entry is already written (RailStateApplier).
 * `transactions`: rail purchase ids it links to a subscription, recorded with the notification's claim.
 */
export type NotificationOutcome = RecordedDecision & { transactions?: readonly Omit<RailTransactionRecord, 'rail'>[] };

/** Thrown inside the transaction when another delivery of the notification committed first: rolls this one back. */
class AlreadyProcessed extends Error {
  constructor(readonly record: RailNotificationRecord) {
    super('notification already processed');
  }
}

export function notificationView(record: RailNotificationRecord, duplicate: boolean): RailNotificationView {
  return {
    object: 'rail_notification',
    rail: record.rail,
    notificationId: record.notificationId,
    env: record.env,
    decision: record.decision,
    duplicate,
    serviceCustomerId: record.customerId,
    crossdeckCustomerId: record.customerId,
    auditEventId: record.auditEventId ?? '',
  };
}

/**
 * Runs one authentic notification exactly once: the rail applies it (state, entitlements and
 * one audit entry) and the notification id is claimed with the answer, in one transaction. A
 * duplicate, also a concurrent one (its claim waits for the first to commit, then this
 * transaction rolls back), is answered from the first processing.
 */
@Injectable()
export class NotificationProcessor {
  constructor(
    private readonly sql: Sql,
    private readonly records: RailSubscriptionsRepository,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {}

  /** The first answer, marked duplicate, when this notification was processed already. */
  async previousAnswer(projectId: string, rail: PurchaseRail, notificationId: string): Promise<RailNotificationView | null> {
    const record = await this.records.findNotification({ projectId }, rail, notificationId);
    if (!record) return null;
    this.metrics.railNotifications.inc({ rail, decision: 'duplicate' });
    return notificationView(record, true);
  }

  /** `work` runs in the transaction (ambient: everything it awaits joins it) and writes the outcome's audit entry. */
  async process(notification: AuthenticNotification, work: () => Promise<NotificationOutcome>): Promise<RailNotificationView> {
    const { scope, rail, notificationId } = notification;
    try {
      const view = await this.sql.transaction(
        async () => {
          const outcome = await work();
          const record: Omit<RailNotificationRecord, 'env'> = {
            rail,
            notificationId,
            eventType: notification.eventType,
            decision: outcome.decision,
            customerId: outcome.customerId,
            auditEventId: outcome.auditEventId,
            receivedAt: notification.receivedAtMs,
            processedAt: this.clock.nowMs(),
          };
          const first = await this.records.claimNotification(scope, record, outcome.transactions, this.clock.now());
          if (first) throw new AlreadyProcessed(first);
          return notificationView({ ...record, env: scope.env }, false);
        },
        { retry: true },
      );
      this.metrics.railNotifications.inc({ rail, decision: view.decision });
      return view;
    } catch (err) {
      if (err instanceof AlreadyProcessed) {
        this.metrics.railNotifications.inc({ rail, decision: 'duplicate' });
        return notificationView(err.record, true);
      }
      this.metrics.railNotifications.inc({ rail, decision: 'failed' });
      throw err;
    }
  }
}
