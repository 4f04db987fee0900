import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope } from '#platform';
import { activeAfter, byCodeUnits, keyOrderProbe } from '../domain/active-after.js';
import { type EntitlementRecord, EntitlementRepository, toPublicEntitlement } from '../domain/entitlement.repository.js';
import { type Rail, isActiveAt } from '../domain/entitlement-rules.js';
import type { PublicEntitlement } from '../domain/public-entitlement.js';
import type { CustomerEntitlementChange, EntitlementChangeSink, EntitlementSideEvent } from './entitlement-change.js';

/** One entitlement row a change wrote, as its write returned it. */
export interface WrittenEntitlement {
  customerId: string;
  entitlement: PublicEntitlement;
}

/** What the writer already knows, which spares the feed and the sink a read each. */
export interface ChangeFacts {
  /**
   * Every entitlement row the change wrote for the tracked customers, in the order written.
   * With it the state after the change is derived from the state before instead of read again;
   * a writer that cannot name every row it wrote leaves it out.
   */
  written?: readonly WrittenEntitlement[];
  /** Per tracked customer, its first developer user id (null: none), when the writer read it. */
  developerUserIds?: ReadonlyMap<string, string | null>;
}

/** The writer's handle between reading the state before a change and publishing it after. */
export interface EntitlementChangeTracker {
  publish(causeOf: CustomerEntitlementChange['causeOf'], events?: (customerId: string) => EntitlementSideEvent[], facts?: ChangeFacts): Promise<void>;
}

const NO_TRACKING: EntitlementChangeTracker = { publish: async () => undefined };

/** A customer's active entitlement rows (every rail, not collapsed) and the database snapshot (`pg_snapshot` text) they were read in. */
export interface ActiveState {
  entitlements: PublicEntitlement[];
  snapshot: string;
}

/**
 * The writer's own (never exported): where `EntitlementWriter.apply` reports every change. It
 * snapshots the customers' active entitlements before the change and hands before, after and
 * the change's events to the attached sink in the same transaction. Without a sink, or when the
 * sink does not want the scope, it costs nothing.
 */
@Injectable()
export class EntitlementChangeFeed {
  private sink: EntitlementChangeSink | null = null;
  /** Whether the database sorts keys and rails by code units (asked once per process; see activeAfter). */
  private codeUnitOrder: Promise<boolean> | null = null;

  constructor(
    private readonly entitlements: EntitlementRepository,
    private readonly clock: Clock,
  ) {}

  attach(sink: EntitlementChangeSink): void {
    this.sink = sink;
  }

  get attached(): boolean {
    return this.sink !== null;
  }

  /** Whether changes of the scope are tracked (a sink wants them): a writer reads facts for the sink only then. */
  async tracks(scope: TenantScope): Promise<boolean> {
    return this.sink !== null && (await this.sink.wants(scope));
  }

  /**
   * Reads the customers' active entitlements now; `publish` reports the change with the state
   * after it: derived from the rows the writer says it wrote, else read again.
   */
  async track(scope: TenantScope, customerIds: readonly string[]): Promise<EntitlementChangeTracker> {
    const sink = this.sink;
    if (!sink || !(await sink.wants(scope))) return NO_TRACKING;
    const ids = [...new Set(customerIds)].sort();
    const before = new Map<string, ActiveState>();
    for (const id of ids) before.set(id, await this.activeState(scope, id));
    return this.trackerOf(scope, sink, ids, before);
  }

  /**
   * Locks the customer's row of (key, rail) (SELECT … FOR UPDATE; null when absent) and, where
   * the change is tracked, reads the state before in the same statement, one round trip fewer
   * than `lock` then `track`. That statement's snapshot is taken before the lock: where the row
   * moved on after it (another change of the row committed, perhaps while the lock waited), the
   * state is read again, now that the row is held. A change of another row of the customer that
   * committed meanwhile is missing from the state, as from any state read before a change
   * commits; the sink finds it from the customer's counter (it reads the state again).
   */
  async trackLocking(
    scope: TenantScope,
    customerId: string,
    key: string,
    rail: Rail,
  ): Promise<{ locked: EntitlementRecord | null; tracker: EntitlementChangeTracker }> {
    const sink = this.sink;
    if (!sink || !(await sink.wants(scope))) return { locked: await this.entitlements.lock(scope, customerId, key, rail), tracker: NO_TRACKING };
    const { locked, records, snapshot, movedOn } = await this.entitlements.lockWithActiveSnapshot(scope, customerId, key, rail, this.clock.now());
    const before = new Map([[customerId, movedOn ? await this.activeState(scope, customerId) : this.activeAfterLock(records, snapshot)]]);
    return { locked, tracker: this.trackerOf(scope, sink, [customerId], before) };
  }

  /** The rows read with a lock that may have waited, as active at the clock after it (as a read after the lock would say). */
  private activeAfterLock(records: readonly EntitlementRecord[], snapshot: string): ActiveState {
    const nowMs = this.clock.nowMs();
    const active = records.filter((record) => isActiveAt(record.state, record.validUntil, nowMs));
    return { entitlements: active.map((record) => toPublicEntitlement(record, nowMs)), snapshot };
  }

  /** The handle of a change of `ids` (sorted), whose states before it are `before`. */
  private trackerOf(
    scope: TenantScope,
    sink: EntitlementChangeSink,
    ids: readonly string[],
    before: ReadonlyMap<string, ActiveState>,
  ): EntitlementChangeTracker {
    return {
      publish: async (causeOf, events, facts = {}) => {
        const changes: CustomerEntitlementChange[] = [];
        for (const id of ids) {
          const was = before.get(id)!;
          const derived = facts.written && (await this.derivedAfter(was.entitlements, facts.written, id));
          const after = derived ? { entitlements: derived, snapshot: was.snapshot } : await this.activeState(scope, id);
          const change: CustomerEntitlementChange = {
            customerId: id,
            before: was.entitlements,
            after: after.entitlements,
            afterSnapshot: after.snapshot,
            causeOf,
            events: events?.(id) ?? [],
          };
          if (facts.developerUserIds?.has(id)) change.developerUserId = facts.developerUserIds.get(id) ?? null;
          changes.push(change);
        }
        await sink.record(scope, changes);
      },
    };
  }

  /** The customer's rows after the change from `before` and what the writer wrote; null when only a read can tell their order. */
  private async derivedAfter(before: PublicEntitlement[], written: readonly WrittenEntitlement[], customerId: string): Promise<PublicEntitlement[] | null> {
    const mine = written.filter((w) => w.customerId === customerId).map((w) => w.entitlement);
    return activeAfter(before, mine, this.clock.nowMs(), await this.sortsByCodeUnits());
  }

  private sortsByCodeUnits(): Promise<boolean> {
    this.codeUnitOrder ??= (async () => {
      const probe = keyOrderProbe();
      const sorted = await this.entitlements.sortedByDatabase(probe);
      const expected = [...probe].sort(byCodeUnits);
      return sorted.length === expected.length && sorted.every((text, i) => text === expected[i]);
    })().catch((err: unknown) => {
      this.codeUnitOrder = null;
      throw err;
    });
    return this.codeUnitOrder;
  }

  /** Reports changes the writer computed itself (expiry by time). */
  async publish(scope: TenantScope, changes: CustomerEntitlementChange[]): Promise<void> {
    if (this.sink && changes.length > 0) await this.sink.record(scope, changes);
  }

  /** A customer's active entitlement rows at the service clock's now, with the snapshot they were read in. */
  async activeState(scope: TenantScope, customerId: string): Promise<ActiveState> {
    const nowMs = this.clock.nowMs();
    const { records, snapshot } = await this.entitlements.findActiveWithSnapshot(scope, customerId, new Date(nowMs));
    return { entitlements: records.map((record) => toPublicEntitlement(record, nowMs)), snapshot };
  }
}
