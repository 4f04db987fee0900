import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope, randomLowerAlnum } from '#platform';
import { type AuditEntryInput, AuditJournal } from '#audit';
import { EntitlementWriter, ProductCatalog, type PublicEntitlement, type RailEntitlementRow } from '#entitlements';
import {
  type PurchaseRail,
  type RailDecision,
  type RailState,
  type RailSubscriptionItem,
  type RailSubscriptionRecord,
  changesState,
  isLive,
  isOlderThanStored,
  itemsOf,
} from './rail-model.js';
import { type RailPayment, type RailPriceLine, RailRevenueFeed } from './rail-revenue-feed.service.js';
import { RailSubscriptionsRepository } from './rail-subscriptions.repository.js';
import type { SubscriptionHistoryWrite } from './subscription-history.repository.js';
import type { Subscription } from '../lifecycle/subscription.js';
import type { LifecycleEvent } from '../lifecycle/lifecycle-outcome.js';
import { lifecycleChangeCauses, railChangeCause, renewalEventTypes, subscriptionEventTypes, willRenew } from './subscription-events.js';
import { describeApplied, grantsOf, outlasts } from './rail-grants.js';

/** The rail's current view of one subscription, already mapped to the shared model. */
export interface RailStateChange {
  rail: PurchaseRail;
  /** iOS originalTransactionId, card `sub_…`, Android purchase token. */
  subscriptionId: string;
  /** Resolved by the caller through the alias graph (RailCustomerResolver), in the same transaction. */
  customerId: string;
  /** The customer resolution created the customer rail-only for this event (it has no developer user id). */
  railOnlyCustomer?: boolean;
  /** The primary product (stored in the record's product_id). */
  productId: string;
  /**
   * Every product of the subscription, each until its own end (card: one per item). Absent:
   * the one item (productId, validUntil). The keys written are the union of the items' keys.
   */
  items?: RailSubscriptionItem[];
  state: RailState;
  /** How an inactive state ended: `revoked` (refund, revocation) or `expired` (default). */
  endedBy?: 'revoked' | 'expired';
  /** Unix seconds; null = lifetime. With several items: the latest of their ends. */
  validUntil: number | null;
  /** The rail's time of this state (ms): iOS signedDate, card event `created` × 1000 … */
  railTimeMs: number;
  /** The rail's own status word (`DID_RENEW`, `past_due`, `SUBSCRIPTION_STATE_ACTIVE` …). */
  rawStatus: string | null;
  /** Android: the state read from the Publisher API is current whatever its time. */
  ignoreRailTime?: boolean;
  /** The subscription's price per billing period when the event carries it (revenue ledger), and the payment it reports. */
  price?: RailPriceLine[] | null;
  payment?: RailPayment | null;
  /**
   * What the lifecycle derived from the rail's event (rails that derive the subscription
   * object): the object stored with the record, its events (sent instead of those read from
   * the record's state) and whether it changed anything (an event, a ledger fact: `applied`).
   */
  lifecycle?: RailLifecycleChange;
  /** The state the revenue ledger counts (default `state`): a trial, a billing retry or a pause gives access but pays nothing. */
  revenueState?: RailState;
}

/** The lifecycle's part of a rail change. */
export interface RailLifecycleChange {
  subscription: Subscription | null;
  events: readonly LifecycleEvent[];
  decision: 'applied' | 'no_op';
  /** The rail's own id of what caused it (card event `id`, iOS `notificationUUID` …); null for a read. */
  railEventId: string | null;
}

/** What the audit entry says about the event (its `auditEventId`, docs/rails.md). */
export interface RailEventContext {
  /** The rail's own type (`DID_RENEW`, `customer.subscription.updated`, `SUBSCRIPTION_RENEWED`, `purchase_sync` …). */
  eventType: string;
  notificationId?: string | null;
  transactionId?: string | null;
  signatureVerified: boolean;
  reconciledWithProvider: boolean;
  /** Unix ms the service received the raw event. */
  rawEventReceivedAt: number;
  /** `rail:ios_store`, `api_key:<keyId>` … */
  actor: string;
  requestId: string | null;
  /** Extra non-personal details for the audit entry. */
  details?: Record<string, unknown>;
}

/** How a caller applies a state, beyond the event itself. */
export interface RailApplyOptions {
  /** Catalogue keys of products the caller already read in the transaction (the applier reads only the others). */
  catalogueKeys?: ReadonlyMap<string, string[]>;
  /**
   * A read of the rail keeps only a state that changes something and rolls the rest back: an
   * older or unchanged state is answered `no_op` as soon as the locked record tells, with
   * nothing written (no audit entry: `auditEventId` is empty).
   */
  onlyChanges?: boolean;
  /** The caller holds the subscription's lock already (serializeSubscription: it resolved the customer under it). */
  subscriptionSerialized?: boolean;
  /** The record as the caller read it under that lock (`lockRecord`); absent: the applier reads it. */
  lockedRecord?: RailSubscriptionRecord | null;
  /** Customers whose rail-derived rows the caller serialised already (lockRecordWithCustomers): not locked again. */
  customersSerialized?: readonly string[];
}

export interface RailApplyResult {
  decision: RailDecision;
  reason: string;
  auditEventId: string;
  /** The entitlements this call wrote (empty on no_op and rejected). */
  entitlements: PublicEntitlement[];
  /** The subscription record after the call (the stored one on no_op, null when rejected and never stored). */
  subscription: RailSubscriptionRecord | null;
}

export interface RailDecisionRecord {
  rail: PurchaseRail;
  customerId: string | null;
  decision: RailDecision;
  reason: string;
}

/** A decision of a rail event with its audit entry. */
export interface RecordedDecision {
  decision: RailDecision;
  customerId: string | null;
  auditEventId: string;
}

/** `rail_evt_<24 chars of [a-z0-9]>`. */
export function newRailEventId(): string {
  return `rail_evt_${randomLowerAlnum(24)}`;
}

/** The strongest live grant of a key: a subscription record and the item of it that grants the key. */
interface LiveGrant {
  record: RailSubscriptionRecord;
  item: RailSubscriptionItem;
}

/**
 * The one write path of every purchase rail. Inside the caller's transaction (one per
 * event): serialises writers of the subscription, applies "newest rail time wins", upserts
 * the subscription record, maps its products (one per item) to entitlement keys through the
 * catalogue, writes the union of their keys through the entitlements context's writer (each
 * key until the end of the item granting it), and appends exactly one audit entry.
 */
@Injectable()
export class RailStateApplier {
  constructor(
    private readonly clock: Clock,
    private readonly subscriptions: RailSubscriptionsRepository,
    private readonly catalog: ProductCatalog,
    private readonly writer: EntitlementWriter,
    private readonly journal: AuditJournal,
    private readonly revenue: RailRevenueFeed,
  ) {}

  /**
   * Takes the subscription's lock (apply's first lock) until the transaction ends. A writer whose
   * customer resolution can fold customers takes it before resolving, so the fold's locks come
   * after it, as in apply: a second notification of the same subscription waits here instead of
   * holding it while it waits for the fold.
   */
  serializeSubscription(scope: TenantScope, rail: PurchaseRail, subscriptionId: string): Promise<void> {
    return this.subscriptions.serialize(scope, rail, subscriptionId);
  }

  /** Reads and locks a subscription's record (after serializeSubscription), to hand to apply as `lockedRecord`. */
  lockRecord(scope: TenantScope, rail: PurchaseRail, subscriptionId: string): Promise<RailSubscriptionRecord | null> {
    return this.subscriptions.lock(scope, rail, subscriptionId);
  }

  /**
   * lockRecord with the customers' writer locks apply takes (of `customerIds` and of the record's
   * customer), in one statement; `serializeFirst`: serializeSubscription too, before the record.
   * Hand both to apply (`lockedRecord`, `customersSerialized`).
   */
  lockRecordWithCustomers(
    scope: TenantScope,
    rail: PurchaseRail,
    subscriptionId: string,
    customerIds: readonly string[],
    serializeFirst: boolean,
  ): Promise<{ record: RailSubscriptionRecord | null; customersLocked: string[] }> {
    return this.subscriptions.lockWithCustomers(scope, rail, subscriptionId, customerIds, serializeFirst);
  }

  async apply(scope: TenantScope, change: RailStateChange, event: RailEventContext, options: RailApplyOptions = {}): Promise<RailApplyResult> {
    if (!options.subscriptionSerialized) await this.subscriptions.serialize(scope, change.rail, change.subscriptionId);
    const stored =
      options.subscriptionSerialized && options.lockedRecord !== undefined
        ? options.lockedRecord
        : await this.subscriptions.lock(scope, change.rail, change.subscriptionId);
    const items = itemsOf(change);
    // The lifecycle moved the subscription object, or a read fills the object of a record
    // applied before objects were kept (its price then reaches the revenue ledger too).
    const lifecycleChanged =
      change.lifecycle?.decision === 'applied' || (options.onlyChanges === true && !!change.lifecycle?.subscription && !!stored && !stored.subscription);

    if (
      options.onlyChanges &&
      (isOlderThanStored(stored, change.railTimeMs, change.ignoreRailTime) || (!changesState(stored, { ...change, items }) && !lifecycleChanged))
    ) {
      return {
        decision: 'no_op',
        reason: `Subscription ${change.subscriptionId} already in this state or newer`,
        auditEventId: '',
        entitlements: [],
        subscription: stored,
      };
    }
    if (isOlderThanStored(stored, change.railTimeMs, change.ignoreRailTime)) {
      const reason = `Older than the stored state of subscription ${change.subscriptionId} (rail time ${change.railTimeMs} < ${stored?.railTimeMs})`;
      const auditEventId = await this.audit(
        scope,
        { rail: change.rail, customerId: stored?.customerId ?? change.customerId, decision: 'no_op', reason },
        event,
        change,
      );
      return { decision: 'no_op', reason, auditEventId, entitlements: [], subscription: stored };
    }

    const keysOf = this.keysOfProducts(scope, change.rail, options.catalogueKeys);
    const granted = await grantsOf(items, keysOf);
    const keys = [...granted.keys()];
    if (keys.length === 0) {
      const products = [...new Set(items.map((item) => item.productId))];
      const reason =
        products.length === 1
          ? `Product ${products[0]} is not in the project's catalogue for rail ${change.rail}`
          : `Products ${products.join(', ')} are not in the project's catalogue for rail ${change.rail}`;
      const auditEventId = await this.audit(scope, { rail: change.rail, customerId: change.customerId, decision: 'rejected', reason }, event, change);
      return { decision: 'rejected', reason, auditEventId, entitlements: [], subscription: stored };
    }

    // Entitlement rows are per (customer, key, rail) and aggregate every subscription of the
    // customer on the rail: writers of one customer's rail rows run one at a time too
    // (always after the subscription lock, customers in sorted order: no lock cycles).
    const customers = [...new Set([change.customerId, stored?.customerId ?? change.customerId])].sort();
    const held = new Set(options.customersSerialized ?? []);
    await this.subscriptions.serializeCustomers(
      scope,
      change.rail,
      customers.filter((customerId) => !held.has(customerId)),
    );

    const changed = changesState(stored, { ...change, items });
    const auditEventId = newRailEventId();
    const now = this.clock.now();
    const facts = { stored, next: { ...change } };
    const lifecycle = change.lifecycle;
    const decision: RailDecision = changed || lifecycleChanged ? 'applied' : 'no_op';
    const reason = changed
      ? describeApplied(change, items, keys)
      : lifecycleChanged
        ? `Subscription ${change.subscriptionId}: the subscription object moved; access unchanged`
        : `Subscription ${change.subscriptionId} already in this state; nothing to change`;
    // A rail that derives no lifecycle: the event types read from the record's state.
    const recordTypes = lifecycle ? [] : changed ? subscriptionEventTypes(facts) : renewalEventTypes(facts);
    const events = lifecycle
      ? lifecycleEvents(change, lifecycle, auditEventId)
      : recordTypes.map((type) => ({
          type,
          data: {
            serviceCustomerId: change.customerId,
            rail: change.rail,
            subscriptionId: change.subscriptionId,
            productId: change.productId,
            state: change.state,
            validUntil: change.validUntil,
            willRenew: willRenew(change.state, change.rawStatus),
            priceMicros: null,
            currency: null,
            railEventId: auditEventId,
          },
        }));
    // The upsert also lists the customer's records on the rail as they stand after it (liveGrants reads them).
    const { record: subscription, customerRecords } = await this.subscriptions.upsertListingCustomer(
      scope,
      {
        rail: change.rail,
        subscriptionId: change.subscriptionId,
        customerId: change.customerId,
        productId: change.productId,
        state: change.state,
        validUntil: change.validUntil,
        items,
        railTimeMs: Math.max(change.railTimeMs, stored?.railTimeMs ?? 0),
        rawStatus: change.rawStatus,
        lastEventId: auditEventId,
        subscription: change.lifecycle?.subscription ?? null,
        // The customer history keeps every event, whether or not the project has webhook endpoints.
        history: historyOf(change, lifecycle, auditEventId, event, recordTypes),
      },
      now,
    );
    const { rail, subscriptionId, customerId, state, validUntil } = subscription;
    await this.revenue.changed(scope, {
      rail,
      subscriptionId,
      customerId,
      state: change.revenueState ?? state,
      validUntil,
      price: change.price ?? null,
      payment: change.payment ?? null,
      // What the upsert wrote (its lifecycle_state is the written object's state): the ledger need not read the record again.
      written: { productId: subscription.productId, railTimeMs: subscription.railTimeMs, lifecycleState: change.lifecycle?.subscription?.state ?? null },
    });

    const entitlementState = change.state === 'active' ? 'active' : (change.endedBy ?? 'expired');
    // What the subscription granted before and no longer grants to the same customer (a
    // removed item, a plan change, another customer) ends, unless another live item or
    // subscription of that customer on this rail still grants it.
    const ended = stored ? [...(await grantsOf(stored.items, keysOf))].filter(([key]) => stored.customerId !== change.customerId || !granted.has(key)) : [];
    // The customer's records are read once (after the upsert), for the keys that end and those granted.
    const grantsByCustomer = new Map<string, Promise<Map<string, LiveGrant>>>();
    const grantsOfCustomer = (customerId: string) => {
      let grants = grantsByCustomer.get(customerId);
      if (!grants)
        grantsByCustomer.set(
          customerId,
          (grants = this.liveGrants(scope, change.rail, customerId, keysOf, customerId === change.customerId ? customerRecords : undefined)),
        );
      return grants;
    };
    const rowsOf = async (customerId: string, keyItems: Iterable<[string, RailSubscriptionItem]>, state: RailEntitlementRow['state']) => {
      const grants = await grantsOfCustomer(customerId);
      return [...keyItems].map(([key, item]) =>
        this.rowOf(customerId, key, grants.get(key), {
          productId: item.productId,
          subscriptionId: change.subscriptionId,
          state,
          validUntil: item.validUntil,
          auditEventId,
        }),
      );
    };
    const rows: RailEntitlementRow[] = stored && ended.length > 0 ? await rowsOf(stored.customerId, ended, 'expired') : [];
    // One entitlement row per (customer, key, rail): the strongest live grant of the key among
    // the customer's subscriptions on this rail, else this subscription's (ended) state.
    rows.push(...(await rowsOf(change.customerId, granted, entitlementState)));
    // Ended keys are another customer's, or keys no longer granted: the rows are distinct.
    const wrote = await this.writer.apply(scope, {
      kind: 'rail_state',
      rail: change.rail,
      customerId: change.customerId,
      previousCustomerId: stored?.customerId ?? null,
      rows,
      causes: lifecycle
        ? lifecycleChangeCauses(lifecycle.events, facts.next)
        : {
            activated: railChangeCause('activated', facts.next),
            extended: railChangeCause('extended', facts.next),
            deactivated: railChangeCause('deactivated', facts.next),
          },
      events,
      audit: this.auditEntry({ rail: change.rail, customerId: change.customerId, decision, reason }, event, change, auditEventId, keys),
      ...(change.railOnlyCustomer ? { railOnlyCustomer: true } : {}),
    });
    const entitlements = wrote.slice(rows.length - granted.size);
    return { decision, reason, auditEventId, entitlements, subscription };
  }

  /** Catalogue keys per product of one rail, read once per call (not at all when the caller read them). */
  private keysOfProducts(scope: TenantScope, rail: PurchaseRail, known?: ReadonlyMap<string, string[]>): (productId: string) => Promise<string[]> {
    const cache = new Map<string, Promise<string[]>>([...(known ?? [])].map(([productId, keys]) => [productId, Promise.resolve(keys)]));
    return (productId) => {
      let keys = cache.get(productId);
      if (!keys) {
        keys = this.catalog.entitlementKeysFor(scope.projectId, rail, productId);
        cache.set(productId, keys);
      }
      return keys;
    };
  }

  /**
   * Per key: the strongest live grant among a customer's subscription records on a rail (an
   * active record's item not past its own end; lifetime, then the later end). `listed`: the
   * records as listForCustomer reads them, already read (with the upsert); absent: read here.
   */
  private async liveGrants(
    scope: TenantScope,
    rail: PurchaseRail,
    customerId: string,
    keysOf: (productId: string) => Promise<string[]>,
    listed?: readonly RailSubscriptionRecord[],
  ): Promise<Map<string, LiveGrant>> {
    const nowMs = this.clock.nowMs();
    const best = new Map<string, LiveGrant>();
    for (const record of listed ?? (await this.subscriptions.listForCustomer(scope, customerId, rail))) {
      for (const item of record.items) {
        if (!isLive({ state: record.state, validUntil: item.validUntil }, nowMs)) continue;
        for (const key of await keysOf(item.productId)) {
          const current = best.get(key);
          if (!current || outlasts(item, current.item)) best.set(key, { record, item });
        }
      }
    }
    return best;
  }

  private rowOf(
    customerId: string,
    key: string,
    live: LiveGrant | undefined,
    otherwise: Omit<RailEntitlementRow, 'customerId' | 'entitlementKey'>,
  ): RailEntitlementRow {
    const base = { customerId, entitlementKey: key };
    if (!live) return { ...base, ...otherwise };
    return {
      ...base,
      productId: live.item.productId,
      subscriptionId: live.record.subscriptionId,
      state: 'active',
      validUntil: live.item.validUntil,
      auditEventId: otherwise.auditEventId,
    };
  }

  /**
   * The one recorder of a rail event that changes no state (test notification, ignored type,
   * wrong app, product not in the catalogue …): one audit entry in the ambient transaction;
   * answers the decision with the entry's id.
   */
  async record(scope: TenantScope, outcome: RailDecisionRecord, event: RailEventContext): Promise<RecordedDecision> {
    return { decision: outcome.decision, customerId: outcome.customerId, auditEventId: await this.audit(scope, outcome, event) };
  }

  private async audit(
    scope: TenantScope,
    outcome: RailDecisionRecord,
    event: RailEventContext,
    change?: RailStateChange,
    eventId = newRailEventId(),
  ): Promise<string> {
    await this.journal.append(scope, this.auditEntry(outcome, event, change, eventId));
    return eventId;
  }

  /** The one audit entry of a rail event's decision. */
  private auditEntry(
    outcome: RailDecisionRecord,
    event: RailEventContext,
    change: RailStateChange | undefined,
    eventId: string,
    keys?: string[],
  ): AuditEntryInput & { eventId: string } {
    return {
      eventId,
      rail: outcome.rail,
      eventType: event.eventType,
      customerId: outcome.customerId ?? '',
      decision: outcome.decision,
      reason: outcome.reason,
      actor: event.actor,
      requestId: event.requestId,
      details: {
        ...event.details,
        signatureVerified: event.signatureVerified,
        reconciledWithProvider: event.reconciledWithProvider,
        rawEventReceivedAt: event.rawEventReceivedAt,
        processedAt: this.clock.nowMs(),
        ...(event.notificationId ? { notificationId: event.notificationId } : {}),
        ...(event.transactionId ? { transactionId: event.transactionId } : {}),
        ...(change
          ? {
              subscriptionId: change.subscriptionId,
              productId: change.productId,
              ...(change.items && change.items.length > 1 ? { items: change.items } : {}),
              state: change.state,
              validUntil: change.validUntil,
              railTimeMs: change.railTimeMs,
              rawStatus: change.rawStatus,
            }
          : {}),
        ...(keys ? { entitlementKeys: keys } : {}),
      },
    };
  }
}

/**
 * The `subscription.*` events of a lifecycle change: the subscription after the change, the
 * rail's and the audit entry's ids, the earlier flat fields filled from the object, and each
 * type's own fields.
 */
export function lifecycleEvents(
  change: RailStateChange,
  lifecycle: RailLifecycleChange,
  auditEventId: string,
): { type: string; data: Record<string, unknown> }[] {
  const subscription = lifecycle.subscription;
  return lifecycle.events.map(({ type, ...own }) => ({
    type,
    data: {
      serviceCustomerId: change.customerId,
      rail: change.rail,
      subscriptionId: change.subscriptionId,
      productId: subscription?.productId ?? change.productId,
      state: subscription?.state ?? change.state,
      validUntil: subscription ? subscription.accessEndsAt : change.validUntil,
      willRenew: subscription?.willRenew ?? false,
      priceMicros: subscription?.price?.amountMicros ?? null,
      currency: subscription?.price?.currency ?? null,
      subscription,
      railEventId: lifecycle.railEventId,
      auditEventId,
      ...own,
    },
  }));
}

/** `hist_<24 chars of [a-z0-9]>`: the id of one customer history entry (the history read's cursor). */
export function newHistoryId(): string {
  return `hist_${randomLowerAlnum(24)}`;
}

/**
 * The customer history entries of one applied change, in the order its events are announced:
 * each type's own fields as `details`, at the rail's time of the change. A rail that derives no
 * lifecycle names no rail event id of its own (null); its entries carry no details.
 */
export function historyOf(
  change: RailStateChange,
  lifecycle: RailLifecycleChange | undefined,
  auditEventId: string,
  event: Pick<RailEventContext, 'notificationId'>,
  recordTypes: readonly string[] = [],
): SubscriptionHistoryWrite[] {
  const base = {
    customerId: change.customerId,
    occurredAtMs: change.railTimeMs,
    rail: change.rail,
    subscriptionId: change.subscriptionId,
    auditEventId,
  };
  if (lifecycle) {
    return lifecycle.events.map(({ type, ...own }) => ({
      ...base,
      id: newHistoryId(),
      type,
      productId: lifecycle.subscription?.productId ?? change.productId,
      railEventId: lifecycle.railEventId || null,
      details: own,
    }));
  }
  return recordTypes.map((type) => ({
    ...base,
    id: newHistoryId(),
    type,
    productId: change.productId,
    railEventId: event.notificationId || null,
    details: {},
  }));
}
