import { Injectable } from '@nestjs/common';
import { Clock, OnJob, crossTenant } from '#platform';
import { RevenueLedger } from './revenue-ledger.service.js';

const SCAN = crossTenant('revenue ledger lapse scan');
/** The scan runs every 15 s of the service clock. */
export const REVENUE_LAPSE_EVERY_MS = 15_000;
/**
 * How long after its period's end a subscription still counts without news from its rail:
 * renewals and ends arrive as notifications, sometimes hours late (card retries, store
 * billing grace); past a day without either, the subscription stops counting in MRR.
 */
export const REVENUE_LAPSE_GRACE_MS = 86_400_000;
const BATCH = 500;

/**
 * Time passing in the revenue ledger: a recurring durable job (one replica at a time, rows
 * claimed with SKIP LOCKED) that stops counting subscriptions whose period ended more than
 * REVENUE_LAPSE_GRACE_MS ago, moving the totals in the same transaction.
 */
@Injectable()
export class RevenueLapseJob {
  constructor(
    private readonly clock: Clock,
    private readonly ledger: RevenueLedger,
  ) {}

  @OnJob({ type: 'reporting.lapse_revenue', everyMs: REVENUE_LAPSE_EVERY_MS, maxAttempts: 5, leaseMs: 120_000, backoff: { baseMs: 5_000, maxMs: 60_000 } })
  async scan(): Promise<void> {
    await this.scanOnce();
  }

  /** One scan in the caller's (ambient) transaction; returns how many subscriptions it lapsed. */
  scanOnce(): Promise<number> {
    return this.ledger.lapse(SCAN, this.clock.nowMs() - REVENUE_LAPSE_GRACE_MS, BATCH);
  }
}
