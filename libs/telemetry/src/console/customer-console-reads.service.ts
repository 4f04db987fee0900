import { PassThrough, type Readable } from 'node:stream';
import { Injectable, Logger } from '@nestjs/common';
import { ApiError, type TenantScope, TenantScopes, type Env } from '#platform';
import { ProjectDirectory } from '#keys';
import { CustomerConsole } from '#identity';
import { EntitlementHistory } from '#entitlements';
import { CustomerRailStatuses, RAIL_ALIAS_TYPES } from '#rails';
import { AuditJournal } from '#audit';
import { CustomerEventsRepository } from './customer-events.repository.js';
import { type CustomerExportRow, type CustomerListRow, CustomerListRepository } from './customer-list.repository.js';
import { type CustomerListCursor, type CustomerListFilter, csvLine, encodeCursor } from './customer-list-rules.js';
import type { CustomerDetailView, CustomerListItemView, CustomerListPage, CustomerSearchList, CustomerTimelineView } from './customer-console.views.js';

const RECENT_EVENTS = 20;
const EXPORT_BATCH = 2000;
const CSV_HEADER = ['customer_id', 'user_id', 'email', 'states', 'rails', 'products', 'mrr_minor', 'currency', 'paying', 'last_seen_day', 'created_at'];

const RAIL_ID_TYPES = Object.values(RAIL_ALIAS_TYPES);
const seconds = (date: Date | string) => Math.floor(new Date(date).getTime() / 1000);

/**
 * The console's customer pages: search, the customer page (one call: identities, traits,
 * entitlements, rail subscriptions, erasure, latest events) and the audit timeline. Each part
 * is read by the context that owns it, through its exported service.
 */
@Injectable()
export class CustomerConsoleReads {
  private readonly log = new Logger('CustomerExport');

  constructor(
    private readonly projects: ProjectDirectory,
    private readonly customers: CustomerConsole,
    private readonly entitlements: EntitlementHistory,
    private readonly rails: CustomerRailStatuses,
    private readonly journal: AuditJournal,
    private readonly events: CustomerEventsRepository,
    private readonly list: CustomerListRepository,
  ) {}

  /** One page of the customer list, filtered, searched (partial, case-insensitive) and sorted; `limit` + 1 rows tell whether more follow. */
  async page(projectId: string, env: Env, filter: CustomerListFilter, cursor: CustomerListCursor | null, limit: number): Promise<CustomerListPage> {
    const scope = await this.scope(projectId, env);
    const rows = await this.list.page(scope, filter, cursor, limit + 1);
    const hasMore = rows.length > limit;
    const data = rows.slice(0, limit);
    const last = data[data.length - 1];
    return { object: 'list', data: data.map(listItem), hasMore, nextCursor: hasMore && last ? encodeCursor({ key: last.sortKey, id: last.id }) : null, env };
  }

  /**
   * Checks the project, then answers the whole filtered list as a CSV stream, written batch by
   * batch from a database cursor as the reader takes it (a slow reader holds the cursor, never
   * more than a batch in memory); a reader that goes away ends the cursor at the next batch.
   */
  async exportCsv(projectId: string, env: Env, filter: CustomerListFilter): Promise<Readable> {
    const scope = await this.scope(projectId, env);
    const out = new PassThrough();
    const write = async (chunk: string): Promise<boolean> => {
      if (out.destroyed) return false;
      if (!out.write(chunk)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            out.off('drain', done);
            out.off('close', done);
            resolve();
          };
          out.on('drain', done);
          out.on('close', done);
        });
      }
      return !out.destroyed;
    };
    const run = async () => {
      if (!(await write(csvLine(CSV_HEADER)))) return;
      await this.list.each(scope, filter, EXPORT_BATCH, (rows) => write(rows.map(csvRow).join('')));
    };
    run().then(
      () => out.end(),
      (err: unknown) => {
        this.log.error(`customer export failed: ${err instanceof Error ? err.message : String(err)}`);
        out.destroy(err instanceof Error ? err : new Error(String(err)));
      },
    );
    return out;
  }

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
    const [entitlements, subscriptions, subscriptionObjects, events, [summary]] = await Promise.all([
      this.entitlements.of(scope, customerId),
      this.rails.subscriptionsOf(scope, customerId),
      this.rails.subscriptionObjectsOf(scope, customerId),
      this.events.latest(scope, customerId, RECENT_EVENTS),
      this.list.rowsOf(scope, [customerId]),
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
      traits: { email: identities.email, firstName: identities.firstName, other: identities.traits },
      summary: listItem(summary!),
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
      subscriptionObjects,
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

function listItem(r: CustomerListRow): CustomerListItemView {
  return {
    object: 'customer',
    serviceCustomerId: r.id,
    crossdeckCustomerId: r.id,
    userId: r.userId,
    email: r.email,
    createdAt: seconds(r.createdAt),
    mrr: { amountMinor: Number(r.mrrMinor), currency: r.currency },
    paying: r.paying,
    lastSeenDay: r.lastSeenDay,
    rails: r.rails,
    products: r.products,
    states: r.states,
  };
}

function csvRow(r: CustomerExportRow): string {
  return csvLine([
    r.id,
    r.userId,
    r.email,
    r.states,
    r.rails,
    r.products,
    r.mrrMinor,
    r.currency,
    r.paying,
    r.lastSeenDay,
    new Date(r.createdAt).toISOString(),
  ]);
}
