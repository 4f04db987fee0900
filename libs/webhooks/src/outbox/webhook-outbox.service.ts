import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock, type TenantScope, currentTraceHeaders, randomLowerAlnum } from '#platform';
import { type CustomerEntitlementChange, EntitlementChangeFeed, type EntitlementChangeSink, type PublicEntitlement } from '#entitlements';
import { CustomerDirectory, ErasureHooks } from '#identity';
import { type EntitlementChange, activeView as view, changedRows, collapseByKey, diffEntitlements, withoutChange } from '../domain/webhook-rules.js';
import { EndpointPresence } from './endpoint-presence.service.js';
import { type CounterTouch, type CustomerOutboxEvent, type OutboxEvent, SEQUENCE_SLOT, WebhookOutboxRepository } from './webhook-outbox.repository.js';

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
 * The outbox recorder: turns every entitlement change (reported by the entitlements
 * context's change feed) and every erasure into events and pending deliveries, in the
 * transaction of the change, with the change's trace context. Nothing is sent here; the
 * dispatcher delivers after commit. A scope without an enabled endpoint is not tracked at all
 * (EndpointPresence): its changes cost no statement here.
 */
@Injectable()
export class WebhookOutbox implements EntitlementChangeSink, OnModuleInit {
  constructor(
    private readonly repository: WebhookOutboxRepository,
    private readonly clock: Clock,
    private readonly feed: EntitlementChangeFeed,
    private readonly erasureHooks: ErasureHooks,
    private readonly customers: CustomerDirectory,
    private readonly presence: EndpointPresence,
  ) {}

  /** The change feed asks before it reads anything: only scopes with an enabled endpoint are tracked. */
  wants(scope: TenantScope): Promise<boolean> {
    return this.presence.hasEnabled(scope);
  }

  onModuleInit(): void {
    this.feed.attach(this);
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
   * set as it was) it only takes the counter. Where another transaction took the counter after
   * this change read its state (two changes of one customer at once), the state is read again
   * under the counter's lock and the change is announced against the state without it: the event
   * with the higher `sequence` always carries the whole active set.
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
          change.afterSnapshot,
        );
        events.push(update.event);
        updates.set(customerId, update);
      }
      for (const side of change.events) {
        const { serviceCustomerId, ...rest } = side.data;
        events.push({ ...this.envelope(scope, side.type, { serviceCustomerId, developerUserId, ...rest }), customerId, sequenced: false });
      }
    }
    const stale = await this.repository.record(scope, events, currentTraceHeaders(), this.clock.nowMs(), touched);
    for (const { customerId, sequence, numbered } of stale) {
      const change = byCustomer.get(customerId)!;
      const fresh = await this.feed.activeState(scope, customerId);
      const now = fresh.entitlements.map(view);
      const heard = withoutChange(now, change.before.map(view), change.after.map(view));
      const diff = diffEntitlements(heard, now, change.causeOf);
      if (numbered) {
        const { event, data, createdAt } = updates.get(customerId)!;
        if (diff.length === 0) await this.repository.dropEvent(scope, event.id);
        else {
          const body = bodyOf(scope, event.id, UPDATED, createdAt, { ...data, sequence, entitlements: winnersOf(fresh.entitlements), changes: diff });
          await this.repository.rewriteBody(scope, event.id, body);
        }
      } else if (diff.length > 0) {
        // Another change announced a set without this one's rows: announce the set with them, numbered after it.
        const developerUserId = await this.developerUserIdOf(scope, change);
        const { event } = this.updateEvent(
          scope,
          { serviceCustomerId: customerId, developerUserId, entitlements: fresh.entitlements, changes: diff },
          fresh.snapshot,
        );
        await this.repository.record(scope, [event], currentTraceHeaders(), this.clock.nowMs());
      }
    }
  }

  /** A `customer.entitlements.updated` event whose `sequence` the recording statement fills in, from the state read in `stateSnapshot`. */
  private updateEvent(
    scope: TenantScope,
    of: { serviceCustomerId: string; developerUserId: string | null; entitlements: PublicEntitlement[]; changes: EntitlementChange[] },
    stateSnapshot: string,
  ): UpdateEvent {
    const { serviceCustomerId, developerUserId, entitlements, changes } = of;
    const data = { serviceCustomerId, developerUserId, sequence: SEQUENCE_SLOT, entitlements: winnersOf(entitlements), changes };
    const id = newEventId();
    const createdAt = Math.floor(this.clock.nowMs() / 1000);
    const body = bodyOf(scope, id, UPDATED, createdAt, data);
    return { event: { id, type: UPDATED, body, customerId: serviceCustomerId, sequenced: true, stateSnapshot }, data, createdAt };
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
