import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock, type CrossTenant, type TenantScope } from '#platform';
import type { PurchaseRail } from '#entitlements';
import { type RailMoneyReturn, type RailPayment, type RailRevenueChange, RailRevenueFeed, type RailRevenueSink } from '#rails';
import { dayOf, monthOf, monthlyPrice, toMinorUnits } from './price-normalisation.js';
import { totalsDeltas } from './revenue-deltas.js';
import { type LedgerSubscription, RevenueLedgerRepository } from './revenue-ledger.repository.js';

/** The reporting currency of a project without a setting. */
export const DEFAULT_REPORTING_CURRENCY = 'USD';

/** Of some customers: those that pay, and each one's monthly revenue in the reporting currency (minor units). */
export interface CustomerRevenue {
  paying: Set<string>;
  monthlyMinor: Map<string, number>;
}

/**
 * The revenue ledger: attached to the rails' revenue feed, it keeps in the (ambient) transaction of every
 * rail change each subscription's monthly price, each customer's monthly revenue, the
 * project's totals (by rail and currency) with their daily values, and recognised cash. Its
 * reads are point reads of those rows.
 */
@Injectable()
export class RevenueLedger implements RailRevenueSink, OnModuleInit {
  constructor(
    private readonly repository: RevenueLedgerRepository,
    private readonly feed: RailRevenueFeed,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.feed.attach(this);
  }

  async changed(scope: TenantScope, change: RailRevenueChange): Promise<void> {
    const stored = await this.repository.findSubscription(scope, change.rail, change.subscriptionId);
    const price = monthlyPrice(change.price);
    const nowMs = this.clock.nowMs();
    const next: LedgerSubscription = {
      customerId: change.customerId,
      active: change.state === 'active' && (change.validUntil === null || change.validUntil * 1000 > nowMs),
      validUntil: change.validUntil === null ? null : new Date(change.validUntil * 1000),
      currency: price?.currency ?? stored?.currency ?? null,
      monthlyMinor: price?.monthlyMinor ?? stored?.monthlyMinor ?? null,
    };
    // A renewal moves the period end alone: the customer's rows and the totals count what is
    // active and priced, so they stay, and the subscription's row is locked already.
    if (stored && countsAlike(stored, next)) {
      if (stored.validUntil?.getTime() !== next.validUntil?.getTime())
        await this.repository.setPeriodEnd(scope, change.rail, change.subscriptionId, next.validUntil, new Date(nowMs));
      return;
    }
    const customers = [...new Set([change.customerId, stored?.customerId ?? change.customerId])].sort();
    for (const customerId of customers) await this.repository.lockCustomer(scope, customerId);
    await this.repository.upsertSubscription(scope, change.rail, change.subscriptionId, next, new Date(nowMs));
    for (const customerId of customers) await this.refreshCustomer(scope, customerId);
  }

  async paid(scope: TenantScope, rail: PurchaseRail, customerId: string, payment: RailPayment): Promise<void> {
    const amountMinor = Math.round(toMinorUnits(payment.amount, payment.currency));
    if (!(amountMinor > 0)) return;
    const paidAtMs = payment.paidAtMs > 0 ? payment.paidAtMs : this.clock.nowMs();
    await this.repository.recordPayment(scope, {
      rail,
      transactionId: payment.transactionId,
      customerId,
      currency: payment.currency,
      amountMinor,
      recurring: payment.recurring,
      paidAt: new Date(paidAtMs),
      month: monthOf(paidAtMs),
    });
  }

  async returned(scope: TenantScope, rail: PurchaseRail, customerId: string, money: RailMoneyReturn): Promise<void> {
    const amountMinor = Math.round(toMinorUnits(money.amount, money.currency));
    if (!(amountMinor > 0)) return;
    const occurredAtMs = money.occurredAtMs > 0 ? money.occurredAtMs : this.clock.nowMs();
    await this.repository.recordReturn(scope, {
      rail,
      factId: money.factId,
      kind: money.kind,
      transactionId: money.transactionId,
      subscriptionId: money.subscriptionId,
      customerId,
      currency: money.currency,
      amountMinor,
      occurredAt: new Date(occurredAtMs),
      month: monthOf(occurredAtMs),
    });
  }

  async reassigned(scope: TenantScope, fromCustomerId: string, toCustomerId: string): Promise<void> {
    const customers = [fromCustomerId, toCustomerId].sort();
    for (const customerId of customers) await this.repository.lockCustomer(scope, customerId);
    await this.repository.reassignSubscriptions(scope, fromCustomerId, toCustomerId, this.clock.now());
    for (const customerId of customers) await this.refreshCustomer(scope, customerId);
  }

  /**
   * Stops counting active subscriptions whose period ended before `endedBeforeMs` (the rail
   * reported neither a renewal nor an end); returns how many it lapsed. Idempotent.
   */
  async lapse(scan: CrossTenant, endedBeforeMs: number, limit: number): Promise<number> {
    const due = await this.repository.dueLapses(scan, new Date(endedBeforeMs), limit);
    const now = this.clock.now();
    for (const row of due) {
      const scope = scan.scopeOf(row);
      await this.repository.lockCustomer(scope, row.customerId);
      await this.repository.markLapsed(scope, row.rail, row.subscriptionId, now);
      await this.refreshCustomer(scope, row.customerId);
    }
    return due.length;
  }

  /** Recomputes one customer's rows from its subscriptions and moves the totals by the difference. */
  private async refreshCustomer(scope: TenantScope, customerId: string): Promise<void> {
    const { stored: before, computed: after } = await this.repository.customerRows(scope, customerId);
    const deltas = totalsDeltas(before, after);
    if (deltas.length === 0 && sameRows(before, after)) return;
    await this.repository.replaceCustomer(scope, customerId, after);
    await this.repository.applyDeltas(scope, deltas, dayOf(this.clock.nowMs()));
  }

  // Reads

  async reportingCurrency(scope: Pick<TenantScope, 'projectId'>): Promise<string> {
    return (await this.repository.reportingCurrency(scope)) ?? DEFAULT_REPORTING_CURRENCY;
  }

  /**
   * Which of `customerIds` pay (an active priced subscription in any currency), and each one's
   * monthly revenue in the reporting currency (minor units; absent = 0), from one read.
   * `currency`: the reporting currency when the caller already read it.
   */
  async revenueAmong(scope: TenantScope, customerIds: readonly string[], currency?: string): Promise<CustomerRevenue> {
    const revenue: CustomerRevenue = { paying: new Set(), monthlyMinor: new Map() };
    if (customerIds.length === 0) return revenue;
    const [reporting, rows] = await Promise.all([currency ?? this.reportingCurrency(scope), this.repository.totalsAmong(scope, customerIds)]);
    for (const row of rows) {
      revenue.paying.add(row.customerId);
      if (row.currency === reporting) revenue.monthlyMinor.set(row.customerId, Math.round(row.monthlyMinor));
    }
    return revenue;
  }

  async topCustomersByRevenue(scope: TenantScope, limit: number): Promise<Array<{ customerId: string; monthlyRevenueCents: number }>> {
    const rows = await this.repository.topByRevenue(scope, await this.reportingCurrency(scope), limit);
    return rows.map((r) => ({ customerId: r.customerId, monthlyRevenueCents: Math.round(r.monthlyMinor) }));
  }

  /** Distinct customers with an active priced subscription, in any currency. */
  payingCustomerCount(scope: TenantScope): Promise<number> {
    return this.repository.payingCustomers(scope);
  }

  /** Which of `customerIds` pay (in any currency). */
  payingAmong(scope: TenantScope, customerIds: readonly string[]): Promise<Set<string>> {
    return this.repository.payingAmong(scope, customerIds);
  }
}

function sameRows(a: readonly { rail: string; currency: string; monthlyMinor: number; subscriptions: number }[], b: typeof a): boolean {
  const key = (r: (typeof a)[number]) => `${r.rail}|${r.currency}|${r.monthlyMinor}|${r.subscriptions}`;
  const sa = a.map(key).sort().join(',');
  return sa === b.map(key).sort().join(',');
}

/** Whether two states of a subscription count the same in its customer's rows and the totals. */
function countsAlike(a: LedgerSubscription, b: LedgerSubscription): boolean {
  return a.customerId === b.customerId && a.active === b.active && a.currency === b.currency && a.monthlyMinor === b.monthlyMinor;
}
