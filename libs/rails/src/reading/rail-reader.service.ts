import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, type AppLogger, Clock, Metrics, type TenantScope, Sql } from '#platform';
import type { Rail } from '#entitlements';
import { BulkIdentity } from '#identity';
import { RailCustomerResolver } from '../customers/rail-customer-resolver.service.js';
import { type PurchaseRail, RAIL_ALIAS_TYPES } from '../model/rail-model.js';
import type { RailEventContext } from '../model/rail-state-applier.service.js';
import { RailSubscriptionsRepository } from '../model/rail-subscriptions.repository.js';
import type { NotificationOutcome } from '../notifications/notification-processor.service.js';
import { RailReadBounds } from './rail-read-bounds.service.js';
import { RailReadUnavailable } from './rail-read-errors.js';
import { type ObservedState, StoreObservations } from './store-observations.service.js';

/** Why a rail is read: the expiry sweep, a refresh on demand, the migration gate. */
export type RailReadReason = 'expiry' | 'refresh' | 'migration';

/** What one read of a rail id found and did. */
export interface RailReadResult {
  rail: Rail;
  /** The rail id read: `cus_…` (or `sub_…`), an original transaction id, a purchase token. */
  id: string;
  /** `none`: the rail has no subscription for the id; `unavailable`: the rail could not be read. */
  found: 'live' | 'ended' | 'none' | 'unavailable';
  /** `applied` | `no_change` | `no_subscription` | `unavailable`. */
  decision: string;
  /** The audit entry written when the read changed something (one per changed subscription; the first). */
  auditEventId: string | null;
  /** When unavailable because of a store's `429` / `5xx` back-off or the project's read rate: how long until a read may go. */
  retryAfterMs?: number;
  /** True when the project's read rate refused the read (no store was asked): not a failure of the rail. */
  throttled?: boolean;
}

/** Who asked for the read (audit actor and request id); optional. */
export interface RailReadOptions {
  actor?: string;
  requestId?: string | null;
  /** Runs the read's writes (a caller reading many ids bounds how many hold a connection at once). */
  applyWith?: <R>(apply: () => Promise<R>) => Promise<R>;
}

/** Thrown inside a read's transaction when the state changed nothing: rolls it back, so no audit entry is written. */
class Unchanged extends Error {}

const ALIAS_RAILS: Record<string, PurchaseRail> = {
  [RAIL_ALIAS_TYPES.cardCustomerId]: 'card_payments',
  [RAIL_ALIAS_TYPES.iosOriginalTransactionId]: 'ios_store',
  [RAIL_ALIAS_TYPES.androidPurchaseToken]: 'android_store',
};
const RAIL_ORDER: PurchaseRail[] = ['ios_store', 'card_payments', 'android_store'];
const isPurchaseRail = (rail: Rail): rail is PurchaseRail => (RAIL_ORDER as string[]).includes(rail);

/**
 * Reads the rails' APIs (docs/rails.md, "Reading the rails") within the project's read rate
 * and the stores' back-off, and applies what they hold like a notification whose rail time is
 * the moment of the read, through the same apply paths and the RailStateApplier (newest rail
 * state wins; outbound webhook events follow from it). Only a read that changes something
 * keeps its audit entry (`eventType` `reconciliation`, `reconciledWithProvider: true`); one
 * that changes nothing rolls back. A read never creates a customer: a rail id linked to no
 * customer of the scope (no record, no alias) is read and reported, not applied.
 */
@Injectable()
export class RailReader {
  constructor(
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
    private readonly sql: Sql,
    private readonly observations: StoreObservations,
    private readonly bounds: RailReadBounds,
    private readonly subscriptions: RailSubscriptionsRepository,
    private readonly customers: RailCustomerResolver,
    private readonly bulk: BulkIdentity,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {}

  async readRailId(scope: TenantScope, rail: Rail, railId: string, reason: RailReadReason, options: RailReadOptions = {}): Promise<RailReadResult> {
    // Manual grants have no rail to read.
    if (!isPurchaseRail(rail)) return { rail, id: railId, found: 'unavailable', decision: 'unavailable', auditEventId: null };
    const waitMs = await this.bounds.admit(scope.projectId, rail);
    if (waitMs > 0) {
      this.metrics.railReads.inc({ rail, outcome: 'throttled' });
      return { rail, id: railId, found: 'unavailable', decision: 'unavailable', auditEventId: null, retryAfterMs: waitMs, throttled: true };
    }
    const readAtMs = this.clock.nowMs();
    let observation;
    try {
      observation = await this.observations.observe(scope, rail, railId, readAtMs);
    } catch (err) {
      if (!(err instanceof RailReadUnavailable)) throw err;
      const retryAfterMs = err.backOff ? this.bounds.backOff(scope.projectId, rail, err.retryAfterMs) : undefined;
      this.metrics.railReads.inc({ rail, outcome: 'unavailable' });
      this.logger.warn(
        { projectId: scope.projectId, env: scope.env, rail, readReason: reason, reason: err.message },
        'rail read: the rail could not be read; the stored state governs',
      );
      return { rail, id: railId, found: 'unavailable', decision: 'unavailable', auditEventId: null, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
    }
    if (observation.kind === 'none') {
      this.metrics.railReads.inc({ rail, outcome: 'none' });
      return { rail, id: railId, found: 'none', decision: 'no_subscription', auditEventId: null };
    }
    const found = observation.states.some((state) => state.live) ? 'live' : 'ended';
    this.metrics.railReads.inc({ rail, outcome: found });
    const context: RailEventContext = {
      eventType: 'reconciliation',
      notificationId: null,
      // iOS answers are signed JWS, verified like notifications; the other rails are read over TLS with the project's key.
      signatureVerified: rail === 'ios_store',
      reconciledWithProvider: true,
      rawEventReceivedAt: readAtMs,
      actor: options.actor ?? `rail:${rail}`,
      requestId: options.requestId ?? null,
      details: { readReason: reason, railId },
    };
    let auditEventId: string | null = null;
    const applyWith = options.applyWith ?? (<R>(apply: () => Promise<R>) => apply());
    await applyWith(async () => {
      for (const state of observation.states) {
        const outcome = await this.applyIfLinked(scope, state, context);
        if (outcome && !auditEventId) auditEventId = outcome.auditEventId;
      }
    });
    return { rail, id: railId, found, decision: auditEventId ? 'applied' : 'no_change', auditEventId };
  }

  /** The project's read rate of the rail (reads per second): what a caller reading many ids paces itself to. */
  readsPerSecond(projectId: string, rail: PurchaseRail): Promise<number> {
    return this.bounds.readsPerSecond(projectId, rail);
  }

  /** Reads every rail id linked to the customer (rail aliases and subscription records), at once; in rail order, then id. */
  async readCustomer(scope: TenantScope, customerId: string, reason: RailReadReason, options: RailReadOptions = {}): Promise<RailReadResult[]> {
    const ids = await this.railIdsOf(scope, customerId);
    return Promise.all(ids.map(({ rail, id }) => this.readRailId(scope, rail, id, reason, options)));
  }

  /** Card: the linked `cus_…` ids (their listing covers their subscriptions), else the records' `sub_…`; iOS and Android: aliases and records. */
  private async railIdsOf(scope: TenantScope, customerId: string): Promise<{ rail: PurchaseRail; id: string }[]> {
    const aliases = await this.bulk.aliasesOfCustomers(scope, [customerId], Object.keys(ALIAS_RAILS));
    const records = await this.subscriptions.listForCustomer(scope, customerId);
    const ids = new Map<string, { rail: PurchaseRail; id: string }>();
    for (const alias of aliases) ids.set(`${ALIAS_RAILS[alias.type]}|${alias.value}`, { rail: ALIAS_RAILS[alias.type], id: alias.value });
    const cardCustomers = aliases.some((alias) => alias.type === RAIL_ALIAS_TYPES.cardCustomerId);
    for (const record of records) {
      if (record.rail === 'card_payments' && cardCustomers) continue;
      ids.set(`${record.rail}|${record.subscriptionId}`, { rail: record.rail, id: record.subscriptionId });
    }
    return [...ids.values()].sort((a, b) => RAIL_ORDER.indexOf(a.rail) - RAIL_ORDER.indexOf(b.rail) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Applies a read state of a linked rail id; the outcome when it changed something, else null (nothing kept). */
  private async applyIfLinked(scope: TenantScope, state: ObservedState, context: RailEventContext): Promise<NotificationOutcome | null> {
    try {
      return await this.sql.transaction(
        async () => {
          // The holders read to tell the id is linked are handed on: the rail's resolution does not read them again.
          const { linked, known } = await this.customers.linkedHolders(scope, ALIAS_RAILS[state.alias.type], state.subscriptionId, state.alias);
          if (!linked) throw new Unchanged();
          const outcome = await state.apply(context, known);
          if (outcome.decision !== 'applied') throw new Unchanged();
          return outcome;
        },
        { retry: true },
      );
    } catch (err) {
      if (err instanceof Unchanged) return null;
      throw err;
    }
  }
}
