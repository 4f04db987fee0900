import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope } from '#platform';
import { AuditJournal } from '#audit';
import { type EntitlementSideEvent, EntitlementWriter, PURCHASE_RAILS, ProductCatalog } from '#entitlements';
import { type AliasNode, RailCustomers, decideOwner, ownersDisagree } from '#identity';
import type { AndroidPurchaseState } from '../android/android-notifications.js';
import type { CardSubscription } from '../card/card-events.js';
import { type StoreTransaction, isFamilyShared, normaliseAppAccountToken } from '../ios/ios-store-rules.js';
import { type PurchaseRail, RAIL_ALIAS_TYPES, type RailSubscriptionRecord } from '../model/rail-model.js';
import { transferredEvent } from '../model/subscription-events.js';
import { subscriptionOfRecord } from '../subscriptions/subscription-reads.service.js';
import { isActiveAt } from '../lifecycle/access.js';
import { RailRevenueFeed } from '../model/rail-revenue-feed.service.js';
import { RefundRequestsRepository } from '../refunds/refund-requests.repository.js';
import { RailSubscriptionsRepository } from '../model/rail-subscriptions.repository.js';
import { SubscriptionHistoryRepository, type SubscriptionHistoryWrite } from '../model/subscription-history.repository.js';
import { newHistoryId } from '../model/rail-state-applier.service.js';

/** The customer a rail event names besides its rail id (card metadata, Android's obfuscated account id). */
export interface NamedCustomerHints {
  serviceCustomerId: string | null;
  developerUserId: string | null;
}

/**
 * What a caller already read in the ambient transaction of a rail id's holders: `alias` the
 * customer of its rail node, `recorded` the customer of its subscription record (null: none;
 * absent: not read). A read of the rails learns them when it checks the id is linked and
 * hands them on, so the rail's resolution does not read them again.
 */
export interface KnownHolders {
  alias?: string | null;
  recorded?: string | null;
}

/** The customer a rail event resolves to; `railOnly` when the resolution created it rail-only (it has no developer user id). */
export interface ResolvedRailCustomer {
  customerId: string;
  railOnly?: true;
}

/** How a rail id and the customer a notification names were reconciled. */
export type LinkOutcome =
  | { kind: 'linked'; customerId: string }
  | { kind: 'already_linked'; customerId: string }
  | { kind: 'folded'; customerId: string; railOnlyCustomerId: string }
  | { kind: 'conflict'; customerId: string; namedCustomerId: string };

/**
 * "Whose purchase it is" for every rail (purchase sync, store notifications, reads of the
 * rails), in the caller's (ambient) transaction: the rail id's alias or subscription record
 * first, then the customer the event names; a rail-only customer is folded into a named one;
 * any other disagreement is queued for review, never merged. A forgotten customer's node reads
 * as unknown and is released when linked again.
 */
@Injectable()
export class RailCustomerResolver {
  constructor(
    private readonly customers: RailCustomers,
    private readonly subscriptions: RailSubscriptionsRepository,
    private readonly writer: EntitlementWriter,
    private readonly clock: Clock,
    private readonly revenue: RailRevenueFeed,
    private readonly refundRequests: RefundRequestsRepository,
    private readonly catalog: ProductCatalog,
    private readonly journal: AuditJournal,
    private readonly history: SubscriptionHistoryRepository,
  ) {}

  /** The active customer of a rail node (`known.alias` when the caller read it already). */
  async findByAlias(scope: TenantScope, node: AliasNode, known: KnownHolders = {}): Promise<string | null> {
    return known.alias !== undefined ? known.alias : this.customers.findByAlias(scope, node);
  }

  /** The customer of a subscription record, else of the rail node; null when the rail id is linked to no customer. */
  async holder(scope: TenantScope, rail: PurchaseRail, subscriptionId: string, node: AliasNode, known: KnownHolders = {}): Promise<string | null> {
    return (await this.recordedCustomer(scope, rail, subscriptionId, known)) ?? (await this.findByAlias(scope, node, known));
  }

  /**
   * Whether a rail id is linked to a customer (its record or its rail node), with the holders
   * read to tell: the lookup the rail's own resolution makes first (card and iOS: the rail
   * node; Android: the record) comes first, and the other only when the first finds none.
   */
  async linkedHolders(scope: TenantScope, rail: PurchaseRail, subscriptionId: string, node: AliasNode): Promise<{ linked: boolean; known: KnownHolders }> {
    const known: KnownHolders = {};
    if (rail === 'android_store') {
      known.recorded = await this.recordedCustomer(scope, rail, subscriptionId);
      if (known.recorded === null) known.alias = await this.findByAlias(scope, node);
    } else {
      known.alias = await this.findByAlias(scope, node);
      if (known.alias === null) known.recorded = await this.recordedCustomer(scope, rail, subscriptionId);
    }
    return { linked: (known.alias ?? known.recorded ?? null) !== null, known };
  }

  /** The customer of a subscription record, or null when there is none (`known.recorded` when the caller read it already). */
  async recordedCustomer(scope: TenantScope, rail: PurchaseRail, subscriptionId: string, known: KnownHolders = {}): Promise<string | null> {
    if (known.recorded !== undefined) return known.recorded;
    return (await this.subscriptions.find(scope, rail, subscriptionId))?.customerId ?? null;
  }

  /** The customer the hints name, without creating one: a `cdcust_` id of the scope, else a developer user id's customer. */
  async findNamed(scope: TenantScope, hints: NamedCustomerHints): Promise<string | null> {
    if (hints.serviceCustomerId) {
      if (await this.customers.isActiveCustomer(scope, hints.serviceCustomerId)) return hints.serviceCustomerId;
    }
    if (hints.developerUserId) return this.customers.findDeveloperUser(scope, hints.developerUserId);
    return null;
  }

  /** The named customer, the developer user's created like identify when unknown; null when nothing usable is named. */
  async resolveNamed(scope: TenantScope, hints: NamedCustomerHints): Promise<string | null> {
    const found = await this.findNamed(scope, hints);
    if (found) return found;
    if (hints.developerUserId) return this.customers.resolveDeveloperUser(scope, hints.developerUserId);
    return null;
  }

  /**
   * Links the rail node to `namedCustomerId`: unknown node → linked; same customer → nothing;
   * held by a rail-only customer → that customer is folded into the named one; held by a
   * customer with a developer or anonymous id → a review is queued and nothing moves.
   */
  async link(scope: TenantScope, node: AliasNode, namedCustomerId: string): Promise<LinkOutcome> {
    const holder = await this.findByAlias(scope, node);
    // Identity's alias-graph rule decides: the rail id is the primary id, the named customer the secondary.
    const railOnly = ownersDisagree(holder, namedCustomerId) && (await this.customers.isRailOnly(scope, holder));
    const decision = decideOwner(holder, namedCustomerId, railOnly);
    if (decision.kind === 'fold') {
      await this.reassign(scope, decision.foldedCustomerId, decision.customerId, true);
      return { kind: 'folded', customerId: decision.customerId, railOnlyCustomerId: decision.foldedCustomerId };
    }
    if (decision.kind === 'review') {
      await this.customers.queueConflict(scope, decision.customerId, decision.otherCustomerId);
      return { kind: 'conflict', customerId: decision.customerId, namedCustomerId };
    }
    if (holder) return { kind: 'already_linked', customerId: holder };
    await this.customers.linkAliasIfAbsent(scope, namedCustomerId, node);
    return { kind: 'linked', customerId: namedCustomerId };
  }

  /**
   * iOS (purchase sync and notifications): the original transaction id's customer; else the
   * customer identify bound an app account token to (the signed transaction's, then
   * `alsoToken`, e.g. the purchase sync body's), never for family-shared transactions; else a
   * new rail-only customer. The original transaction id becomes an alias of the customer found.
   */
  async iosPurchaseCustomer(scope: TenantScope, transaction: StoreTransaction, alsoToken?: string | null, holders: KnownHolders = {}): Promise<string> {
    const node = { type: RAIL_ALIAS_TYPES.iosOriginalTransactionId, value: transaction.originalTransactionId as string };
    const known = await this.findByAlias(scope, node, holders);
    if (known) return known;
    if (!isFamilyShared(transaction)) {
      for (const token of [normaliseAppAccountToken(transaction.appAccountToken), normaliseAppAccountToken(alsoToken)]) {
        if (!token) continue;
        const bound = await this.findByAlias(scope, { type: RAIL_ALIAS_TYPES.iosAppAccountToken, value: token });
        if (bound) {
          await this.customers.linkAliasIfAbsent(scope, bound, node);
          return bound;
        }
      }
    }
    return this.customers.createRailCustomer(scope, node);
  }

  /**
   * Card: the customer its card customer is linked to (a rail-only one is folded into the
   * customer the metadata names), else the subscription record's, else the metadata's
   * (`serviceCustomerId`, then `developerUserId` resolved or created), else a new rail-only
   * customer. The card customer becomes an alias of it.
   */
  async cardSubscriptionCustomer(
    scope: TenantScope,
    sub: Pick<CardSubscription, 'id' | 'customer' | 'hints'>,
    known: KnownHolders = {},
  ): Promise<ResolvedRailCustomer> {
    const cardNode = { type: RAIL_ALIAS_TYPES.cardCustomerId, value: sub.customer };
    const holder = await this.findByAlias(scope, cardNode, known);
    if (holder) {
      const named = await this.findNamed(scope, sub.hints);
      if (!named || named === holder) return { customerId: holder };
      return { customerId: (await this.link(scope, cardNode, named)).customerId };
    }
    const customerId = (await this.recordedCustomer(scope, 'card_payments', sub.id, known)) ?? (await this.resolveNamed(scope, sub.hints));
    if (customerId) {
      await this.customers.linkAliasIfAbsent(scope, customerId, cardNode);
      return { customerId };
    }
    // Its only alias is the card customer: it has no developer user id.
    return { customerId: await this.createRailOnly(scope, [cardNode]), railOnly: true };
  }

  /**
   * Android: the token's record or alias, else the linked (previous) token's, else the
   * obfuscated account id (a `cdcust_` id of the scope, else an `android_obfuscated_account_id`
   * alias, else a new customer keyed by it), else a new rail-only customer. The purchase token
   * becomes an alias of the customer.
   */
  async androidPurchaseCustomer(
    scope: TenantScope,
    purchaseToken: string,
    state: Pick<AndroidPurchaseState, 'linkedPurchaseToken' | 'obfuscatedAccountId'>,
    holders: KnownHolders = {},
  ): Promise<string> {
    const rail = 'android_store';
    const tokenNode = { type: RAIL_ALIAS_TYPES.androidPurchaseToken, value: purchaseToken };
    const known =
      (await this.holder(scope, rail, purchaseToken, tokenNode, holders)) ??
      (state.linkedPurchaseToken
        ? await this.holder(scope, rail, state.linkedPurchaseToken, { type: RAIL_ALIAS_TYPES.androidPurchaseToken, value: state.linkedPurchaseToken })
        : null);
    const obfuscatedNode = state.obfuscatedAccountId ? { type: RAIL_ALIAS_TYPES.androidObfuscatedAccountId, value: state.obfuscatedAccountId } : null;
    const named = obfuscatedNode
      ? ((await this.findNamed(scope, { serviceCustomerId: obfuscatedNode.value, developerUserId: null })) ?? (await this.findByAlias(scope, obfuscatedNode)))
      : null;
    if (known) {
      // A token whose alias already names the customer needs no link (a known purchase, most often).
      if ((await this.findByAlias(scope, tokenNode, holders)) !== known) await this.customers.linkAliasIfAbsent(scope, known, tokenNode);
      // The purchase stays with its customer; another customer named by the account id is a
      // conflict for review (identity's rule, without a fold: the account id never folds a customer).
      const decision = decideOwner(known, named);
      if (decision.kind === 'review') await this.customers.queueConflict(scope, decision.customerId, decision.otherCustomerId);
      return known;
    }
    if (named) {
      await this.customers.linkAliasIfAbsent(scope, named, tokenNode);
      return named;
    }
    if (obfuscatedNode) return this.createRailOnly(scope, [obfuscatedNode, tokenNode]);
    return this.createRailOnly(scope, [tokenNode]);
  }

  /**
   * An approved merge review moves the other customer's subscription records, revenue and
   * rail-derived entitlements, as when a rail-only customer is folded into a named one.
   */
  reassignRecords(scope: TenantScope, fromCustomerId: string, intoCustomerId: string): Promise<void> {
    return this.reassign(scope, fromCustomerId, intoCustomerId, false);
  }

  /** A new customer whose only aliases are the given rail nodes (at least one). */
  private async createRailOnly(scope: TenantScope, nodes: [AliasNode, ...AliasNode[]]): Promise<string> {
    const customerId = await this.customers.createRailCustomer(scope, nodes[0]);
    for (const node of nodes.slice(1)) await this.customers.linkAliasIfAbsent(scope, customerId, node);
    return customerId;
  }

  /**
   * Moves a customer's subscription records, their history, refund requests and rail-derived
   * entitlements (and, for a rail-only customer folded into another, its rail aliases). The entitlement rows move as one
   * change (a fold): the first customer's keys end (cause `revoke`: they left that customer),
   * the other's start or extend (cause `purchase`: the purchase is now theirs). Each
   * subscription moved is announced once to its new customer (`subscription.transferred`, one
   * audit entry each).
   *
   * Locks in the rail applier's order: subscription rows, then both customers' per-rail locks,
   * then revenue, entitlement rows and sequence counters. A fold continues with the applier for
   * the subscription that named the customer; had it taken the revenue lock before the
   * customer's rail lock, a change of another subscription of that customer holding the rail
   * lock would wait for it in a cycle.
   */
  private async reassign(scope: TenantScope, fromCustomerId: string, intoCustomerId: string, railAliases: boolean): Promise<void> {
    if (railAliases) await this.customers.moveRailAliases(scope, fromCustomerId, intoCustomerId);
    const moved = await this.subscriptions.reassignCustomer(scope, fromCustomerId, intoCustomerId, this.clock.now());
    for (const rail of [...PURCHASE_RAILS].sort()) await this.subscriptions.serializeCustomers(scope, rail, [fromCustomerId, intoCustomerId]);
    // A writer that held one of those locks may have recorded a new subscription of the first
    // customer meanwhile: it moves too (its revenue and entitlement rows move below).
    moved.push(...(await this.subscriptions.reassignCustomer(scope, fromCustomerId, intoCustomerId, this.clock.now())));
    await this.revenue.reassigned(scope, fromCustomerId, intoCustomerId);
    await this.refundRequests.reassignCustomer(scope, fromCustomerId, intoCustomerId, this.clock.nowMs());
    // The subscriptions' history follows them: the other customer's history reads as its own.
    await this.history.reassignCustomer(scope, fromCustomerId, intoCustomerId);
    const events = await this.transferred(scope, moved, fromCustomerId, intoCustomerId, railAliases ? 'fold' : 'merge');
    await this.writer.apply(scope, { kind: 'fold', fromCustomerId, intoCustomerId, events });
  }

  /** One `subscription.transferred` per subscription moved, each with its audit entry (`subscription_transferred`). */
  private async transferred(
    scope: TenantScope,
    moved: readonly RailSubscriptionRecord[],
    fromCustomerId: string,
    intoCustomerId: string,
    why: 'fold' | 'merge',
  ): Promise<EntitlementSideEvent[]> {
    const nowSeconds = Math.floor(this.clock.nowMs() / 1000);
    const events: EntitlementSideEvent[] = [];
    const history: SubscriptionHistoryWrite[] = [];
    const seen = new Set<string>();
    for (const record of moved) {
      if (seen.has(`${record.rail}|${record.subscriptionId}`)) continue;
      seen.add(`${record.rail}|${record.subscriptionId}`);
      let subscription = record.subscription ? { ...record.subscription, isActive: isActiveAt(record.subscription, nowSeconds) } : null;
      if (!subscription) {
        const keys = new Set<string>();
        for (const item of record.items) for (const key of await this.catalog.entitlementKeysFor(scope.projectId, record.rail, item.productId)) keys.add(key);
        subscription = subscriptionOfRecord(record, [...keys], scope.env, nowSeconds);
      }
      const { eventId } = await this.journal.append(scope, {
        eventIdPrefix: 'rail_evt_',
        rail: record.rail,
        eventType: 'subscription_transferred',
        customerId: intoCustomerId,
        decision: 'applied',
        reason:
          why === 'fold'
            ? `Subscription ${record.subscriptionId} moved from rail-only customer ${fromCustomerId} (folded into ${intoCustomerId})`
            : `Subscription ${record.subscriptionId} moved from ${fromCustomerId} to ${intoCustomerId} (merge approved)`,
        // A fold follows the rail's news; a merge is an operator's approval.
        actor: why === 'fold' ? `rail:${record.rail}` : 'operator',
        requestId: null,
        details: { subscriptionId: record.subscriptionId, fromCustomerId, productId: record.productId, reason: why },
      });
      events.push(transferredEvent(record, subscription, fromCustomerId, intoCustomerId, eventId));
      history.push({
        id: newHistoryId(),
        customerId: intoCustomerId,
        type: 'subscription.transferred',
        occurredAtMs: this.clock.nowMs(),
        rail: record.rail,
        subscriptionId: record.subscriptionId,
        productId: subscription.productId,
        auditEventId: eventId,
        railEventId: null,
        details: { fromServiceCustomerId: fromCustomerId },
      });
    }
    // The customer history keeps the move too (after the moved history: newest first, it reads on top).
    await this.history.append(scope, history, this.clock.now());
    return events;
  }
}
