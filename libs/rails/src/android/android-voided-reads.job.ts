import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, type AppLogger, Clock, Metrics, OnJob, crossTenant } from '#platform';
import { RailSettingsRepository } from '../model/rail-settings.repository.js';
import { RailReadBounds } from '../reading/rail-read-bounds.service.js';
import { RailSecrets } from '../secrets/rail-secrets.service.js';
import { AndroidPublisherClient, AndroidPublisherUnavailable } from './android-publisher.client.js';
import { type ClaimedVoidedRead, AndroidVoidedReadsRepository } from './android-voided-reads.repository.js';
import { AndroidWebhookService, type VoidedListEntry } from './android-webhook.service.js';

const SWEEP = crossTenant('rails voided-purchases reads');

/** The job looks for projects due every this long (service clock); each project is read once an hour. */
export const ANDROID_VOIDED_READS_EVERY_MS = 30_000;
export const ANDROID_VOIDED_READ_INTERVAL_MS = 3_600_000;
/** The list reaches back at most 30 days (the Publisher API's own limit). */
const MAX_LOOKBACK_MS = 30 * 86_400_000;
/**
 * Each read starts this long before the last read's end: a voiding the store lists late (its
 * voided time before that end) is still seen; entries seen twice change nothing.
 */
export const ANDROID_VOIDED_READ_OVERLAP_MS = 15 * 60_000;
/** After a read that could not be done (no credentials, the store failed), the project is tried again this much later. */
const RETRY_AFTER_FAILURE_MS = 5 * 60_000;
/** A wait for the project's read rate up to this long (wall) is waited out; longer, the project is read later. */
const HOLD_WAIT_MS = 2_000;
const PAGE_SIZE = 1_000;
const CLAIM_BATCH = 20;
/** A project leased to a replica that died is read by another after this long (wall clock). */
const LEASE_MS = 10 * 60_000;

export interface VoidedReadSummary {
  projects: number;
  entries: number;
  outcomes: Record<string, number>;
}

type ReadOutcome = 'read' | 'unavailable' | 'rate_limited';

const text = (value: unknown): string | null => (typeof value === 'string' && value.length > 0 && value.length <= 512 ? value : null);
const millis = (value: unknown): number | null => {
  const n = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : typeof value === 'number' ? value : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n : null;
};

/** An entry as the service keeps it; null when it names no usable purchase token. */
export function voidedListEntry(raw: Record<string, unknown>): VoidedListEntry | null {
  const purchaseToken = text(raw.purchaseToken);
  if (!purchaseToken || purchaseToken.includes('\u0000')) return null;
  const reason =
    typeof raw.voidedReason === 'number' && Number.isInteger(raw.voidedReason) && raw.voidedReason >= 0 && raw.voidedReason <= 1000 ? raw.voidedReason : null;
  return { purchaseToken, orderId: text(raw.orderId), voidedTimeMillis: millis(raw.voidedTimeMillis), voidedReason: reason };
}

/**
 * Reads each project's voided Play purchases once an hour (`purchases.voidedpurchases.list`,
 * type 1, from the last read's end, at most 30 days back, paged) with its Android read
 * credentials, within the project's Android read rate, and applies each entry like a
 * `VOIDED_PURCHASE` notification (AndroidWebhookService.applyVoidedEntry: idempotent). A
 * recurring durable job (one replica at a time); each project's schedule row is leased with
 * FOR UPDATE SKIP LOCKED, so two replicas never read one project in the same hour. The end of
 * the last read moves only when every page was read: a read cut short starts over from it.
 */
@Injectable()
export class AndroidVoidedReadsJob {
  private readonly worker = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;

  constructor(
    private readonly reads: AndroidVoidedReadsRepository,
    private readonly secrets: RailSecrets,
    private readonly settings: RailSettingsRepository,
    private readonly publisher: AndroidPublisherClient,
    private readonly bounds: RailReadBounds,
    private readonly android: AndroidWebhookService,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  @OnJob({
    type: 'rails.read_voided_purchases',
    everyMs: ANDROID_VOIDED_READS_EVERY_MS,
    maxAttempts: 5,
    leaseMs: LEASE_MS,
    transaction: false,
    backoff: { baseMs: 5_000, maxMs: 60_000 },
  })
  async run(): Promise<void> {
    await this.readDue();
  }

  /** Reads every project whose read is due now; tests call it with the test clock. */
  async readDue(): Promise<VoidedReadSummary> {
    const summary: VoidedReadSummary = { projects: 0, entries: 0, outcomes: {} };
    for (;;) {
      const claimed = await this.reads.claimDue(SWEEP, {
        nowMs: this.clock.nowMs(),
        wallNowMs: this.clock.wallNowMs(),
        leaseMs: LEASE_MS,
        worker: this.worker,
        limit: CLAIM_BATCH,
      });
      if (claimed.length === 0) return summary;
      for (const project of claimed) {
        const { outcome, entries } = await this.readProject(project);
        summary.projects++;
        summary.entries += entries;
        summary.outcomes[outcome] = (summary.outcomes[outcome] ?? 0) + 1;
      }
    }
  }

  private async readProject(claim: ClaimedVoidedRead): Promise<{ outcome: ReadOutcome; entries: number }> {
    const { projectId } = claim;
    const nowMs = this.clock.nowMs();
    let entries = 0;
    const settle = async (outcome: ReadOutcome, nextReadAtMs: number, readUntilMs: number | null) => {
      await this.reads.settle({ projectId }, this.worker, { outcome, readUntilMs, nextReadAtMs, nowMs: this.clock.nowMs() });
      return { outcome, entries };
    };
    const account = this.secrets.androidStore(projectId)?.serviceAccount;
    const settings = await this.settings.find<{ packageName?: string }>({ projectId }, 'android_store');
    const packageName = settings?.enabled ? settings.settings.packageName : undefined;
    if (!account || !packageName) {
      this.metrics.railReads.inc({ rail: 'android_store', outcome: 'unavailable' });
      return settle('unavailable', nowMs + RETRY_AFTER_FAILURE_MS, null);
    }
    const startTimeMs = Math.max((claim.readUntilMs ?? 0) - ANDROID_VOIDED_READ_OVERLAP_MS, nowMs - MAX_LOOKBACK_MS);
    let pageToken: string | null = null;
    do {
      const waitMs = await this.admit(projectId);
      if (waitMs > 0) {
        this.metrics.railReads.inc({ rail: 'android_store', outcome: 'throttled' });
        return settle('rate_limited', this.clock.nowMs() + waitMs, null);
      }
      let page: Awaited<ReturnType<AndroidPublisherClient['listVoided']>>;
      try {
        page = await this.publisher.listVoided(account, packageName, { startTimeMs, endTimeMs: nowMs, pageToken, maxResults: PAGE_SIZE });
      } catch (err) {
        if (!(err instanceof AndroidPublisherUnavailable)) throw err;
        const backOff = err.status === 429 || (err.status ?? 0) >= 500;
        const pauseMs = backOff ? this.bounds.backOff(projectId, 'android_store', err.retryAfterMs) : 0;
        this.metrics.railReads.inc({ rail: 'android_store', outcome: 'unavailable' });
        this.logger.warn({ projectId, rail: 'android_store', reason: err.message }, 'voided purchases: the list could not be read; read again later');
        return settle('unavailable', this.clock.nowMs() + Math.max(pauseMs, RETRY_AFTER_FAILURE_MS), null);
      }
      this.metrics.railReads.inc({ rail: 'android_store', outcome: 'voided_list' });
      for (const raw of page.entries) {
        const entry = voidedListEntry(raw as Record<string, unknown>);
        if (!entry) continue;
        await this.android.applyVoidedEntry(projectId, entry, nowMs);
        entries++;
      }
      pageToken = page.nextPageToken;
    } while (pageToken);
    return settle('read', nowMs + ANDROID_VOIDED_READ_INTERVAL_MS, nowMs);
  }

  /** 0 when a page may be read now (a short wait for the project's read rate is waited out); else how long until it may. */
  private async admit(projectId: string): Promise<number> {
    const waitMs = await this.bounds.admit(projectId, 'android_store');
    if (waitMs === 0 || waitMs > HOLD_WAIT_MS) return waitMs;
    await sleep(waitMs);
    return this.bounds.admit(projectId, 'android_store');
  }
}
