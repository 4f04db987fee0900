import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, type AppLogger, Clock, OnJob, crossTenant } from '#platform';
import { type CustomerLookup, EVENT_CUSTOMER_LOOKUP } from './customer-lookup.js';
import { EventIdentityHintsRepository, type HintSetRow, type HintSetUpdate } from './event-identity-hints.repository.js';

/** The hint-set queue is drained across tenants; each claimed set carries its own scope. */
const HINT_QUEUE = crossTenant('event identity hint queue');

/** After the n-th miss in a row the set waits UNMATCHED_BACKOFF_MS[n-1] before the next try. */
export const UNMATCHED_BACKOFF_MS = [60_000, 10 * 60_000, 60 * 60_000, 6 * 60 * 60_000] as const;
export const MAX_RESOLVE_ATTEMPTS = UNMATCHED_BACKOFF_MS.length + 1;
/** A set that missed MAX_RESOLVE_ATTEMPTS times is tried again only when new events arrive, at most this often. */
export const EXHAUSTED_RETRY_MS = 6 * 60 * 60_000;
/** When the directory itself fails, the set waits this long and the attempt is not counted. */
export const LOOKUP_FAILURE_DELAY_MS = 30_000;
/** A claimed set is leased for this long; a replica that dies mid-run leaves it to the next. */
export const CLAIM_LEASE_MS = 60_000;

const BATCH_SIZE = 200;
const MAX_BATCHES_PER_RUN = 10;
const RUN_INTERVAL_MS = 2_000;
const LOOKUP_CONCURRENCY = 2;

export type HintSetOutcome = HintSetUpdate;

/**
 * Pure: what a hint set becomes after a lookup (a customer id, null for no customer,
 * undefined when the directory failed).
 */
export function hintSetOutcome(previousAttempts: number, found: string | null | undefined, nowMs: number): HintSetOutcome {
  if (found === undefined) return { pending: true, attempts: previousAttempts, afterMs: nowMs + LOOKUP_FAILURE_DELAY_MS, customerId: null };
  if (found !== null) return { pending: false, attempts: 0, afterMs: 0, customerId: found };
  const attempts = Math.min(previousAttempts + 1, MAX_RESOLVE_ATTEMPTS);
  if (attempts >= MAX_RESOLVE_ATTEMPTS) return { pending: false, attempts, afterMs: nowMs + EXHAUSTED_RETRY_MS, customerId: null };
  return { pending: true, attempts, afterMs: nowMs + UNMATCHED_BACKOFF_MS[attempts - 1], customerId: null };
}

export interface ResolverRunSummary {
  /** Hint sets looked up. */
  sets: number;
  resolvedSets: number;
  /** Event rows that got their customer. */
  eventsResolved: number;
  misses: number;
  lookupFailures: number;
}

/**
 * Resolves the identity hints of stored events to customers, out of band (never on the
 * request path). The queue is `event_identity_hints`, one row per distinct hint set that
 * ingestion upserts with each batch, so the directory is asked once per device or user,
 * not per event, and a miss costs no event writes.
 *
 * - Claim: due sets are leased (FOR UPDATE SKIP LOCKED, then resolve_after_ms moves a
 *   minute ahead) in a short transaction: several replicas never work on the same set.
 * - Look up: CustomerDirectory.findCustomerId once per set, two at a time.
 * - Apply, per set, in one transaction: the set row first, then its unresolved events
 *   (the same lock order as ingestion, so they cannot deadlock). A hit fills customer_id of
 *   the set's events that have none; a miss is retried with back-off.
 *
 * Idempotent: running it twice gives the same rows. A recurring durable job every 2 s (the
 * platform's job worker; not under NODE_ENV=test, where tests call runOnce()).
 */
@Injectable()
export class EventIdentityResolver {
  constructor(
    private readonly hints: EventIdentityHintsRepository,
    @Inject(EVENT_CUSTOMER_LOOKUP) private readonly directory: CustomerLookup,
    private readonly clock: Clock,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /** A recurring durable job: one replica at a time sweeps the due hint sets every RUN_INTERVAL_MS. */
  @OnJob({ type: 'telemetry.resolve_event_identities', everyMs: RUN_INTERVAL_MS, transaction: false, maxAttempts: 3, backoff: { baseMs: RUN_INTERVAL_MS } })
  async sweep(): Promise<void> {
    const summary = await this.runOnce();
    if (summary.sets > 0) this.logger.debug({ ...summary }, 'event identity resolver');
  }

  /** Works through the due queue (at most MAX_BATCHES_PER_RUN claims). */
  async runOnce(): Promise<ResolverRunSummary> {
    const total: ResolverRunSummary = { sets: 0, resolvedSets: 0, eventsResolved: 0, misses: 0, lookupFailures: 0 };
    for (let i = 0; i < MAX_BATCHES_PER_RUN; i++) {
      const claimed = await this.claim();
      if (claimed.length === 0) break;
      await this.resolve(claimed, total);
      if (claimed.length < BATCH_SIZE) break;
    }
    return total;
  }

  private async claim(): Promise<HintSetRow[]> {
    const nowMs = this.clock.nowMs();
    return this.hints.claimDue(HINT_QUEUE, nowMs, nowMs + CLAIM_LEASE_MS, BATCH_SIZE);
  }

  private async resolve(sets: HintSetRow[], total: ResolverRunSummary): Promise<void> {
    const queue = [...sets];
    const worker = async () => {
      for (let set = queue.shift(); set; set = queue.shift()) {
        const found = await this.lookup(set);
        const outcome = hintSetOutcome(set.attempts, found, this.clock.nowMs());
        const updated = await this.apply(set, outcome);
        total.sets++;
        if (found === undefined) total.lookupFailures++;
        else if (found === null) total.misses++;
        else {
          total.resolvedSets++;
          total.eventsResolved += updated;
        }
      }
    };
    await Promise.all(Array.from({ length: LOOKUP_CONCURRENCY }, worker));
  }

  /** The customer of a set's hints; undefined when the directory failed. */
  private async lookup(set: HintSetRow): Promise<string | null | undefined> {
    const scope = HINT_QUEUE.scopeOf({ projectId: set.project_id, env: set.env });
    try {
      return await this.directory.findCustomerId(scope, {
        customerId: set.service_customer_id ?? undefined,
        userId: set.developer_user_id ?? undefined,
        anonymousId: set.anonymous_id ?? undefined,
      });
    } catch (err) {
      this.logger.warn({ err: { name: (err as Error).name, message: (err as Error).message } }, 'event identity resolver: customer lookup failed');
      return undefined;
    }
  }

  /** Records the outcome on the set and, on a hit, fills in its events; returns the events updated. */
  private async apply(set: HintSetRow, outcome: HintSetOutcome): Promise<number> {
    const scope = HINT_QUEUE.scopeOf({ projectId: set.project_id, env: set.env });
    return this.hints.applyOutcome(scope, set, outcome, this.clock.nowMs());
  }
}
