import { Injectable } from '@nestjs/common';
import { ApiError, type Env, type TenantScope, TenantScopes } from '#platform';
import { ProjectDirectory } from '#keys';
import { AuditJournal } from '#audit';
import { PURCHASE_RAILS, type PurchaseRail } from '#entitlements';
import { RailSettingsRepository } from '../model/rail-settings.repository.js';
import { RailNotificationsReadRepository } from './rail-notifications-read.repository.js';
import { RailSecretsStatus } from './rail-secrets-status.js';
import type { RailConnectionView, RailNotificationList, RailNotificationEntryView, RailPanelView } from './rails-console.views.js';
import { type RailConnectionCheck, RailConnectionChecksRepository } from './rail-connection-checks.repository.js';

const seconds = (ms: number) => Math.floor(ms / 1000);

export function connectionView(check: RailConnectionCheck): RailConnectionView {
  return {
    object: 'rail_connection_test',
    rail: check.rail,
    env: check.env,
    ok: check.ok,
    message: check.message,
    checkedAt: seconds(check.checkedAtMs),
    lastWorkedAt: check.lastWorkedAtMs === null ? null : seconds(check.lastWorkedAtMs),
  };
}

export const PANEL_NOTIFICATIONS = 20;

/** The console's rails page: every rail's settings, secrets (booleans), webhook URL and latest notifications. */
@Injectable()
export class RailsConsole {
  constructor(
    private readonly projects: ProjectDirectory,
    private readonly settings: RailSettingsRepository,
    private readonly notificationsRead: RailNotificationsReadRepository,
    private readonly secrets: RailSecretsStatus,
    private readonly journal: AuditJournal,
    private readonly checks: RailConnectionChecksRepository,
  ) {}

  /** `baseUrl`: scheme and host the webhook URLs start with (no trailing slash). */
  async panels(projectId: string, env: Env, baseUrl: string): Promise<RailPanelView[]> {
    const scope = TenantScopes.operator(projectId, env);
    const [stored, checks] = await Promise.all([this.settings.list({ projectId }), this.checks.list({ projectId })]);
    return Promise.all(
      PURCHASE_RAILS.map(async (rail) => {
        const saved = stored.find((s) => s.rail === rail && s.enabled);
        const page = await this.page(scope, rail, null, PANEL_NOTIFICATIONS);
        return {
          rail,
          configured: saved !== undefined,
          settings: saved ? { ...saved.settings } : {},
          secrets: this.secrets.secretKinds(projectId, rail),
          connection: ((check) => (check ? connectionView(check) : null))(checks.find((c) => c.rail === rail)),
          webhookUrl: `${baseUrl}/v1/webhooks/${rail}/${encodeURIComponent(projectId)}`,
          notifications: page.data,
          notificationsHasMore: page.hasMore,
        };
      }),
    );
  }

  async notifications(projectId: string, env: Env, rawRail: string, limit: number, before: string | undefined): Promise<RailNotificationList> {
    if (!(PURCHASE_RAILS as readonly string[]).includes(rawRail)) throw ApiError.invalidParam(`rail must be one of ${PURCHASE_RAILS.join(', ')}`);
    await this.projects.assertExists(projectId);
    const page = await this.page(TenantScopes.operator(projectId, env), rawRail as PurchaseRail, before ?? null, limit);
    return { object: 'list', ...page, env };
  }

  private async page(
    scope: TenantScope,
    rail: PurchaseRail,
    before: string | null,
    limit: number,
  ): Promise<{ data: RailNotificationEntryView[]; hasMore: boolean }> {
    const rows = await this.notificationsRead.recent(scope, rail, before, limit + 1);
    const shown = rows.slice(0, limit);
    const railIds = await this.journal.railSubscriptionIds(
      scope,
      shown.flatMap((r) => (r.auditEventId ? [r.auditEventId] : [])),
    );
    return {
      data: shown.map((r) => ({
        object: 'rail_notification',
        id: r.notificationId,
        receivedAt: Math.floor(new Date(r.receivedAt).getTime() / 1000),
        type: r.eventType,
        decision: r.decision,
        railId: (r.auditEventId && railIds.get(r.auditEventId)) || null,
        customerId: r.customerId || null,
        auditEventId: r.auditEventId,
      })),
      hasMore: rows.length > limit,
    };
  }
}
