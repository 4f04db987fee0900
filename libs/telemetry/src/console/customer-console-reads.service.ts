import { Injectable } from '@nestjs/common';
import { ApiError, type TenantScope, TenantScopes, type Env } from '#platform';
import { ProjectDirectory } from '#keys';
import { CustomerConsole } from '#identity';
import { EntitlementHistory } from '#entitlements';
import { CustomerRailStatuses, RAIL_ALIAS_TYPES } from '#rails';
import { AuditJournal } from '#audit';
import { CustomerEventsRepository } from './customer-events.repository.js';
import type { CustomerDetailView, CustomerSearchList, CustomerTimelineView } from './customer-console.views.js';

const RECENT_EVENTS = 20;
const RAIL_ID_TYPES = Object.values(RAIL_ALIAS_TYPES);
const seconds = (date: Date | string) => Math.floor(new Date(date).getTime() / 1000);

/**
 * The console's customer pages: search, the customer page (one call: identities, traits,
 * entitlements, rail subscriptions, erasure, latest events) and the audit timeline. Each part
 * is read by the context that owns it, through its exported service.
 */
@Injectable()
export class CustomerConsoleReads {
  constructor(
    private readonly projects: ProjectDirectory,
    private readonly customers: CustomerConsole,
    private readonly entitlements: EntitlementHistory,
    private readonly rails: CustomerRailStatuses,
    private readonly journal: AuditJournal,
    private readonly events: CustomerEventsRepository,
  ) {}

  async search(projectId: string, env: Env, q: string, limit: number): Promise<CustomerSearchList> {
    const scope = await this.scope(projectId, env);
    const hits = await this.customers.search(scope, q, RAIL_ID_TYPES, limit);
    return {
      object: 'list',
      data: hits.map((h) => ({
        object: 'customer',
        serviceCustomerId: h.customerId,
        crossdeckCustomerId: h.customerId,
        userId: h.userId,
        anonymousIds: h.anonymousIds,
        email: h.email,
        createdAt: seconds(h.createdAt),
        matchedBy: h.matchedBy,
      })),
      env,
    };
  }

  async detail(projectId: string, env: Env, customerId: string): Promise<CustomerDetailView> {
    const scope = await this.scope(projectId, env);
    const identities = await this.customers.identities(scope, customerId);
    if (!identities) throw ApiError.resourceMissing(`No customer ${customerId} in this project and environment`);
    const [entitlements, subscriptions, events] = await Promise.all([
      this.entitlements.of(scope, customerId),
      this.rails.subscriptionsOf(scope, customerId),
      this.events.latest(scope, customerId, RECENT_EVENTS),
    ]);
    return {
      object: 'customer_detail',
      serviceCustomerId: customerId,
      crossdeckCustomerId: customerId,
      env,
      createdAt: seconds(identities.createdAt),
      forgotten: identities.forgottenAt !== null,
      identities: {
        userId: identities.userId,
        anonymousIds: identities.anonymousIds,
        aliases: identities.aliases.map((a) => ({
          type: a.type,
          value: a.value,
          assurance: a.assurance,
          verifiedAt: a.verifiedAt ? seconds(a.verifiedAt) : null,
          createdAt: seconds(a.createdAt),
        })),
        merges: identities.merges.map((m) => ({ ...m, createdAt: seconds(m.createdAt) })),
      },
      traits: { email: identities.email, firstName: identities.firstName },
      entitlements,
      subscriptions: subscriptions.map((s) => ({
        rail: s.rail,
        subscriptionId: s.subscriptionId,
        productId: s.productId,
        state: s.state,
        validUntil: s.validUntil,
        items: s.items,
        railStatus: s.rawStatus,
        updatedAt: s.updatedAt,
      })),
      erasure: identities.erasure
        ? {
            status: identities.erasure.status,
            queuedAt: new Date(identities.erasure.queuedAt).getTime(),
            deletedAt: identities.erasure.deletedAt ? new Date(identities.erasure.deletedAt).getTime() : null,
          }
        : null,
      recentEvents: events.map((e) => ({ id: e.eventId, name: e.name, timestampMs: Number(e.timestampMs), level: e.level, fingerprint: e.fingerprint })),
    };
  }

  async timeline(projectId: string, env: Env, customerId: string, limit: number, before: string | undefined): Promise<CustomerTimelineView> {
    const scope = await this.scope(projectId, env);
    if (!(await this.customers.identities(scope, customerId))) throw ApiError.resourceMissing(`No customer ${customerId} in this project and environment`);
    const page = await this.journal.customerTimeline(scope, customerId, limit, before ?? null);
    return { object: 'list', data: page.entries, hasMore: page.hasMore, env };
  }

  private async scope(projectId: string, env: Env): Promise<TenantScope> {
    await this.projects.assertExists(projectId);
    return TenantScopes.operator(projectId, env);
  }
}
