import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope } from '#platform';
import { ALIAS_TYPES, BulkIdentity } from '#identity';
import { EventRollups } from '#telemetry';
import { MAX_LIMIT } from '../read-query.js';
import { type CustomerRevenue, RevenueLedger } from '../revenue/revenue-ledger.service.js';
import { type ErrorRevenueSnapshot, ErrorRevenueSnapshotsRepository, type SnapshotAffectedUser } from './error-revenue-snapshots.repository.js';

/**
 * Affected users weighed for revenue: the most recent this many. An error that hit more
 * users counts its paying users among these (the figure is then a lower bound).
 */
export const AFFECTED_REVENUE_WINDOW = 5_000;
/** The affected users a snapshot keeps: the largest `limit` of `/v1/errors/affected`. */
export const AFFECTED_USERS_KEPT = MAX_LIMIT;
/** A snapshot answers reads while at most this old (service clock), the bound of rollups kept by a job. */
export const ERROR_REVENUE_MAX_AGE_MS = 60_000;
/** A read moves a snapshot's read time at most this often. */
const TOUCH_EVERY_MS = 60_000;
/**
 * A snapshot whose computation began this long before an erasure of its scope, or after it, is
 * not stored: it covers the rest of the erasure's transaction after its hook took the time.
 */
const ERASURE_MARGIN_MS = 10_000;

/**
 * How a background computation spreads its database work: it looks affected users up
 * `sliceUsers` at a time and awaits `rest()` before each slice.
 */
export interface WorkPace {
  sliceUsers: number;
  rest(): Promise<void>;
}

/**
 * What an error costs in revenue: its paying users and its affected users with revenue at
 * risk first, worked out from the affected-user rollup, identity and the revenue ledger, and
 * kept as a snapshot at most ERROR_REVENUE_MAX_AGE_MS old (ErrorRevenueRefreshJob works out
 * the ones read lately before they age, so reads seldom wait for it).
 */
@Injectable()
export class ErrorRevenue {
  /**
   * Work in progress per scope and fingerprint on this replica: concurrent reads share it. A
   * read that joins paced work hurries it: its remaining slices go without rests.
   */
  private readonly working = new Map<string, { work: Promise<ErrorRevenueSnapshot>; hurry: () => void }>();

  constructor(
    private readonly snapshots: ErrorRevenueSnapshotsRepository,
    private readonly rollups: EventRollups,
    private readonly identity: BulkIdentity,
    private readonly ledger: RevenueLedger,
    private readonly clock: Clock,
  ) {}

  /** The fingerprint's snapshot, worked out now when there is none at most 60 s old. */
  async current(scope: TenantScope, fingerprint: string): Promise<ErrorRevenueSnapshot> {
    const nowMs = this.clock.nowMs();
    const stored = await this.snapshots.get(scope, fingerprint);
    if (stored && stored.computedAtMs >= nowMs - ERROR_REVENUE_MAX_AGE_MS) {
      if (stored.readAtMs < nowMs - TOUCH_EVERY_MS) await this.snapshots.touch(scope, fingerprint, nowMs);
      return stored;
    }
    return this.shared(scope, fingerprint, nowMs);
  }

  /** Works the snapshot out again and stores it, keeping its read time (the refresh job, in slices spread by `pace`). */
  async refresh(scope: TenantScope, fingerprint: string, pace?: WorkPace): Promise<void> {
    await this.shared(scope, fingerprint, null, pace);
  }

  /** Drops the scope's snapshots (an erasure), so none computed before it is stored after it. */
  forgetScope(scope: TenantScope): Promise<void> {
    return this.snapshots.forgetScope(scope, this.clock.nowMs());
  }

  private shared(scope: TenantScope, fingerprint: string, readAtMs: number | null, pace?: WorkPace): Promise<ErrorRevenueSnapshot> {
    const key = `${scope.projectId}|${scope.env}|${fingerprint}`;
    const running = this.working.get(key);
    if (running) {
      if (readAtMs !== null) running.hurry();
      return running.work;
    }
    let hurried = false;
    const hurriedPace = pace && { sliceUsers: pace.sliceUsers, rest: () => (hurried ? Promise.resolve() : pace.rest()) };
    const work = this.workOut(scope, fingerprint, hurriedPace)
      .then(async (snapshot) => {
        const { erased } = await this.snapshots.put(scope, fingerprint, snapshot, readAtMs, ERASURE_MARGIN_MS);
        // An erasure of the scope came while it was worked out: what it read may name the
        // erased customer. It is not kept; the answer is worked out again from what is left.
        const answer = erased ? await this.workOut(scope, fingerprint) : snapshot;
        return { ...answer, readAtMs: readAtMs ?? answer.computedAtMs };
      })
      .finally(() => this.working.delete(key));
    this.working.set(key, { work, hurry: () => (hurried = true) });
    return work;
  }

  /**
   * Paying users: affected users (of the most recent window) whose customer has an active
   * priced subscription in any currency. The affected users: the window's, revenue in the
   * reporting currency first, then the most recent; forgotten customers read as unknown.
   * Unpaced (a read waiting for it), each lookup is one statement; paced, the lookups go a
   * slice of users at a time, each after a rest.
   */
  private async workOut(scope: TenantScope, fingerprint: string, pace?: WorkPace): Promise<Omit<ErrorRevenueSnapshot, 'readAtMs'>> {
    const computedAtMs = this.clock.nowMs();
    const users = await this.rollups.affectedUsers(scope, fingerprint, AFFECTED_REVENUE_WINDOW);
    if (users.length === 0) return { payingUsers: 0, affected: [], computedAtMs };
    const customerOf = new Map<string, string>();
    const revenue: CustomerRevenue = { paying: new Set(), monthlyMinor: new Map() };
    const lookedUp = new Set<string>();
    const currency = await this.ledger.reportingCurrency(scope);
    const slice = pace ? Math.max(1, pace.sliceUsers) : users.length;
    for (let from = 0; from < users.length; from += slice) {
      await pace?.rest();
      const hits = await this.identity.findAliases(
        scope,
        users.slice(from, from + slice).map((u) => ({ type: ALIAS_TYPES.developer, value: u.userId })),
      );
      const customers: string[] = [];
      for (const hit of hits) {
        if (hit.forgotten) continue;
        customerOf.set(hit.value, hit.customerId);
        if (!lookedUp.has(hit.customerId)) customers.push(hit.customerId);
        lookedUp.add(hit.customerId);
      }
      const found = await this.ledger.revenueAmong(scope, customers, currency);
      for (const id of found.paying) revenue.paying.add(id);
      for (const [id, minor] of found.monthlyMinor) revenue.monthlyMinor.set(id, minor);
    }
    const rows: SnapshotAffectedUser[] = users.map((u) => {
      const customerId = customerOf.get(u.userId) ?? null;
      return [u.userId, customerId, customerId ? (revenue.monthlyMinor.get(customerId) ?? 0) : 0, u.lastHitMs];
    });
    rows.sort((a, b) => b[2] - a[2] || b[3] - a[3] || (a[0] < b[0] ? -1 : 1));
    return {
      payingUsers: users.filter((u) => revenue.paying.has(customerOf.get(u.userId) ?? '')).length,
      affected: rows.slice(0, AFFECTED_USERS_KEPT),
      computedAtMs,
    };
  }
}
