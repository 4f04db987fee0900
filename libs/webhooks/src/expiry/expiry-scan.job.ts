import { Injectable } from '@nestjs/common';
import { Clock, OnJob, Sql, crossTenant } from '#platform';
import { EntitlementReadService, EntitlementWriter, type PassedEntitlement } from '#entitlements';

const SCAN = crossTenant('webhooks expiry scan');
/** The scan runs every 15 s of the service clock: an end is reported well within 60 s. */
export const EXPIRY_SCAN_EVERY_MS = 15_000;
const BATCH = 5_000;

/**
 * Reports time passing: entitlements whose validUntil fell since the last scan yield
 * `customer.entitlements.updated` (cause `expiration`) as an expiry change of the entitlements writer.
 * A recurring durable job (one replica at a time) whose watermark moves in the same
 * transaction as the events it records: each end is reported once, also after a test-clock
 * advance and with several replicas.
 */
@Injectable()
export class ExpiryScanJob {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly entitlements: EntitlementReadService,
    private readonly writer: EntitlementWriter,
  ) {}

  @OnJob({ type: 'webhooks.report_expirations', everyMs: EXPIRY_SCAN_EVERY_MS, maxAttempts: 5, leaseMs: 120_000, backoff: { baseMs: 5_000, maxMs: 60_000 } })
  async scan(): Promise<void> {
    await this.scanOnce();
  }

  /** One scan in the caller's (ambient) transaction; returns how many ended entitlements it reported. */
  async scanOnce(): Promise<number> {
    const nowMs = this.clock.nowMs();
    const watermark = await this.sql.one<{ ms: number }>(
      `INSERT INTO webhook_expiry_watermark (id, scanned_to_ms) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET scanned_to_ms = webhook_expiry_watermark.scanned_to_ms
       RETURNING scanned_to_ms::float8 AS ms`,
      [nowMs],
    );
    const fromMs = watermark!.ms;
    if (fromMs >= nowMs) return 0;
    let rows = await this.entitlements.passedBetween(SCAN, fromMs, nowMs, BATCH);
    let toMs = nowMs;
    if (rows.length === BATCH) {
      // A full batch: stop before the last end (its peers come in the next scan), unless every row shares it.
      const last = rows[rows.length - 1].validUntil * 1000;
      const before = rows.filter((row) => row.validUntil * 1000 < last);
      if (before.length > 0) {
        rows = before;
        toMs = last - 1;
      } else toMs = last;
    }
    const byCustomer = new Map<string, PassedEntitlement[]>();
    for (const row of rows) {
      const id = `${row.projectId}\u0000${row.env}\u0000${row.customerId}`;
      byCustomer.set(id, [...(byCustomer.get(id) ?? []), row]);
    }
    // In customer order: the counters this transaction takes one by one are taken in the order a
    // change of two customers takes them in one statement (no lock cycle with a merge).
    for (const passed of [...byCustomer.keys()].sort().map((id) => byCustomer.get(id)!)) {
      const scope = SCAN.scopeOf({ projectId: passed[0].projectId, env: passed[0].env });
      // A scope nobody listens to costs the writer one question and no read.
      await this.writer.apply(scope, { kind: 'expiry', customerId: passed[0].customerId, passed });
    }
    await this.sql.rows(`UPDATE webhook_expiry_watermark SET scanned_to_ms = $1 WHERE id = 1`, [toMs]);
    return rows.length;
  }
}
