import { Injectable } from '@nestjs/common';
import type { TenantScope } from '#platform';
import type { PurchaseRail } from '#entitlements';

/** Why a rail is read (store-rails.md "Reading the rails"). */
export type RailReadReason = 'expiry' | 'refresh' | 'migration';

/** What one read of a rail id found and did. */
export interface RailReadResult {
  rail: PurchaseRail;
  /** The rail id read: cus_…, original transaction id, purchase token. */
  id: string;
  /** none: the rail has no subscription for the id; unavailable: no credentials, or the API failed. */
  found: 'live' | 'ended' | 'none' | 'unavailable';
  decision: string;
  auditEventId: string | null;
  /** Set when the rail (or the per-project read rate) asks to wait before the next read. */
  retryAfterMs?: number;
}

/**
 * Stand-in of the rails' reader until the store clients are wired: every rail reads as
 * unavailable, so the stored state governs (expiry reads back off, the migration gate
 * counts the row undetermined).
 */
@Injectable()
export class RailReader {
  async readRailId(_scope: TenantScope, rail: PurchaseRail, railId: string, _reason: RailReadReason): Promise<RailReadResult> {
    return { rail, id: railId, found: 'unavailable', decision: 'unavailable', auditEventId: null };
  }

  async readCustomer(_scope: TenantScope, _customerId: string, _reason: RailReadReason): Promise<RailReadResult[]> {
    return [];
  }
}
