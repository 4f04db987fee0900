import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock, type TenantScope, currentTraceHeaders, randomLowerAlnum } from '#platform';
import { type CustomerEntitlementChange, type EntitlementChangeSink, EntitlementReadService, EntitlementWriter, type PublicEntitlement } from '#entitlements';
import { CustomerDirectory, ErasureHooks } from '#identity';
import {
  type ActiveEntitlementView,
  type EntitlementChange,
  activeView as view,
  announcedSetText,
  causeSinceHeard,
  changedKeys,
  changedRows,
  collapseByKey,
  diffEntitlements,
  parseAnnouncedSet,
  withoutChange,
} from '../domain/webhook-rules.js';
import { EndpointPresence } from './endpoint-presence.service.js';
import {
  type CounterFinding,
  type CounterTouch,
  type CustomerOutboxEvent,
  type OutboxEvent,
  SEQUENCE_SLOT,
  WebhookOutboxRepository,
} from './webhook-outbox.repository.js';

export const WEBHOOKS_ERASURE_HOOK_NAME = 'webhooks';

export const newEventId = (): string => `evt_${randomLowerAlnum(24)}`;

const UPDATED = 'customer.entitlements.updated';

/** A recorded `customer.entitlements.updated`, with what its body is made of (to rewrite it). */
interface UpdateEvent {
  event: CustomerOutboxEvent;
  data: Record<string, unknown>;
  createdAt: number;
}

/** One entitlement per key: the row that wins the key (collapseByKey), in the rows' order. */
function winnersOf(active: PublicEntitlement[]): PublicEntitlement[] {
  const winners = collapseByKey(active.map(view));
  return active.filter((e) => {
    const winner = winners.get(e.key);
    if (winner?.rail !== e.source.rail) return false;
    winners.delete(e.key);
    return true;
  });
}

/** The exact JSON body of an event. */
function bodyOf(scope: TenantScope, id: string, type: string, createdAt: number, data: Record<string, unknown>): string {
  return JSON.stringify({ id, object: 'event', type, apiVersion: 'v1', createdAt, projectId: scope.projectId, env: scope.env, data });
}

/**
 * The outbox recorder: turns every entitlement change (handed over by the entitlements
 * context's writer, which this sink attaches to) and every erasure into events and pending deliveries, in the
 * transaction of the change, with the change's trace context. Nothing is sent here; the
 * dispatcher delivers after commit. A scope without an enabled endpoint is not tracked at all
 * (EndpointPresence): its changes cost no statement here.
 */
@Injectable()
export class WebhookOutbox implements EntitlementChangeSink, OnModuleInit {
  constructor(
    private readonly repository: WebhookOutboxRepository,
    private readonly clock: Clock,
    private readonly writer: EntitlementWriter,
    private readonly entitlements: EntitlementReadService,
    private readonly erasureHooks: ErasureHooks,
    private readonly customers: CustomerDirectory,
    private readonly presence: EndpointPresence,
  ) {}

  /** The change feed asks before it reads anything: only scopes with an enabled endpoint are tracked. */
  wants(scope: TenantScope): Promise<boolean> {
    return this.presence.hasEnabled(scope);
  }

  onModuleInit(): void {
    this.writer.attach(this);
    this.erasureHooks.register(WEBHOOKS_ERASURE_HOOK_NAME, async (scope, subject) => {
      if (subject.deviceOnly) return;
      await this.erased(scope, subject.customerId);
    });
  }

  /** The envelope of every event. */
  envelope(scope: TenantScope, type: string, data: Record<string, unknown>): OutboxEvent {
    const id = newEventId();
    return { id, type, body: bodyOf(scope, id, type, Math.floor(this.clock.nowMs() / 1000), data) };
  }

  /**
   * In the change's (ambient) transaction. Every change that writes rows takes the customer's
   * counter: with an event it takes the next number, without one (the rows leave the announced
   * set as it was) it only takes the counter. Where the counter says the change read a state
   * another change had moved on from (CounterFinding: two changes of one customer at once, or an
   * update announced since the state was read), the change is announced again under the
   * counter's lock (reannounce): the event with the higher `sequence` always carries the whole
   * active set, and its `changes` say what changed since the update numbered before it.
   */
  async record(scope: TenantScope, changes: CustomerEntitlementChange[]): Promise<void> {
    if (!(await this.presence.hasEnabled(scope))) return;
    const events: CustomerOutboxEvent[] = [];
    const touched: CounterTouch[] = [];
    const updates = new Map<string, UpdateEvent>();
    const byCustomer = new Map(changes.map((change) => [change.customerId, change]));
    for (const change of changes) {
      const [was, now] = [change.before.map(view), change.after.map(view)];
      const diff = diffEntitlements(was, now, change.causeOf);
      const customerId = change.customerId;
      // Rows written under the announced set: no number, but the counter is taken.
      if (diff.length === 0 && changedRows(was, now).size > 0) touched.push({ customerId, stateSnapshot: change.afterSnapshot });
      if (diff.length === 0 && change.events.length === 0) continue;
      const developerUserId = await this.developerUserIdOf(scope, change);
      if (diff.length > 0) {
        const update = this.updateEvent(
          scope,
          { serviceCustomerId: customerId, developerUserId, entitlements: change.after, changes: diff },
          { stateSnapshot: change.afterSnapshot, heard: was, now },
        );
        events.push(update.event);
        updates.set(customerId, update);
      }
      for (const side of change.events) {
        const { serviceCustomerId, ...rest } = side.data;
        events.push({ ...this.envelope(scope, side.type, { serviceCustomerId, developerUserId, ...rest }), customerId, sequenced: false });
      }
    }
    const findings = await this.repository.record(scope, events, currentTraceHeaders(), this.clock.nowMs(), touched);
    for (const finding of findings) await this.reannounce(scope, byCustomer.get(finding.customerId)!, finding, updates.get(finding.customerId));
  }

  /**
   * A change announced against what receivers last heard, under the counter's lock: the state
   * is read again where the counter says it may lack another change (stale), and the changes
   * are those since the set the last update announced (the counter keeps it; where it keeps
   * none, the state without this change). A numbered event is rewritten, or dropped when
   * nothing is left to announce; a change without a number takes one when the set it leaves
   * is not the set receivers heard.
   */
  private async reannounce(scope: TenantScope, change: CustomerEntitlementChange, finding: CounterFinding, update: UpdateEvent | undefined): Promise<void> {
    const customerId = change.customerId;
    const [was, wrote] = [change.before.map(view), change.after.map(view)];
    const state = finding.stale ? await this.entitlements.activeState(scope, customerId) : { entitlements: change.after, snapshot: change.afterSnapshot };
    const now = state.entitlements.map(view);
    const kept = finding.heard === null ? null : parseAnnouncedSet(finding.heard);
    const heard = kept ?? (finding.stale ? withoutChange(now, was, wrote) : was);
    const diff = diffEntitlements(heard, now, causeSinceHeard(heard, changedKeys(was, wrote), Math.floor(this.clock.nowMs() / 1000), change.causeOf));
    if (update) {
      const { event, data, createdAt } = update;
      if (diff.length === 0) {
        await this.repository.dropEvent(scope, event.id);
        await this.repository.setAnnounced(scope, customerId, announcedSetText(heard));
        return;
      }
      const body = bodyOf(scope, event.id, UPDATED, createdAt, {
        ...data,
        sequence: finding.sequence,
        entitlements: winnersOf(state.entitlements),
        changes: diff,
      });
      await this.repository.rewriteBody(scope, event.id, body);
      // The counter took the set as the change derived it; the state read again may hold more.
      if (finding.stale) await this.repository.setAnnounced(scope, customerId, announcedSetText(now));
    } else if (diff.length > 0) {
      const developerUserId = await this.developerUserIdOf(scope, change);
      const { event } = this.updateEvent(
        scope,
        { serviceCustomerId: customerId, developerUserId, entitlements: state.entitlements, changes: diff },
        { stateSnapshot: state.snapshot, heard, now },
      );
      await this.repository.record(scope, [event], currentTraceHeaders(), this.clock.nowMs());
    }
  }

  /**
   * A `customer.entitlements.updated` event whose `sequence` the recording statement fills in:
   * its state read in `stateSnapshot`, announced against `heard` (the set as the change read it
   * before), leaving `now`.
   */
  private updateEvent(
    scope: TenantScope,
    of: { serviceCustomerId: string; developerUserId: string | null; entitlements: PublicEntitlement[]; changes: EntitlementChange[] },
    sets: { stateSnapshot: string; heard: readonly ActiveEntitlementView[]; now: readonly ActiveEntitlementView[] },
  ): UpdateEvent {
    const { serviceCustomerId, developerUserId, entitlements, changes } = of;
    const data = { serviceCustomerId, developerUserId, sequence: SEQUENCE_SLOT, entitlements: winnersOf(entitlements), changes };
    const id = newEventId();
    const createdAt = Math.floor(this.clock.nowMs() / 1000);
    const body = bodyOf(scope, id, UPDATED, createdAt, data);
    const event: CustomerOutboxEvent = {
      id,
      type: UPDATED,
      body,
      customerId: serviceCustomerId,
      sequenced: true,
      stateSnapshot: sets.stateSnapshot,
      heardSet: announcedSetText(sets.heard),
      announcedSet: announcedSetText(sets.now),
    };
    return { event, data, createdAt };
  }

  /** The customer's first developer user id: as the writer passed it, else read. */
  private async developerUserIdOf(scope: TenantScope, change: CustomerEntitlementChange): Promise<string | null> {
    if (change.developerUserId !== undefined) return change.developerUserId;
    return (await this.customers.profile(scope, change.customerId))?.developerUserIds[0] ?? null;
  }

  /** Erasure, in the (ambient) transaction of the erasure */
  customerErased(scope: TenantScope, customerId: string): Promise<void> {
    return this.erased(scope, customerId);
  }

  /** Purges the customer's stored payloads, then records `customer.erased`. */
  private async erased(scope: TenantScope, customerId: string): Promise<void> {
    const nowMs = this.clock.nowMs();
    await this.repository.purgeCustomer(scope, customerId, nowMs);
    if (!(await this.presence.hasEnabled(scope))) return;
    const erased: CustomerOutboxEvent = { ...this.envelope(scope, 'customer.erased', { serviceCustomerId: customerId }), customerId: null, sequenced: false };
    await this.repository.record(scope, [erased], currentTraceHeaders(), nowMs);
  }
}
