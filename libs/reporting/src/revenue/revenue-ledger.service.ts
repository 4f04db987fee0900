import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock, type CrossTenant, type TenantScope } from '#platform';
import type { PurchaseRail } from '#entitlements';
import { type RailMoneyReturn, type RailPayment, type RailRevenueChange, RailRevenueFeed, type RailRevenueSink } from '#rails';
import { dayOf, minorUnitDigits, monthOf, monthlyPrice, toMinorUnits } from './price-normalisation.js';
import { type CountedState, chartStateMoves, chartStateOf } from './chart-states.js';
import { type MrrKeyAmount, mrrMovements } from './mrr-movements.js';
import { totalsDeltas } from './revenue-deltas.js';
import { type CustomerFirsts, RevenueFactsRepository } from './revenue-facts.repository.js';
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
 * reads are point reads of those rows. With them it writes the charts' per-day facts, keyed
 * by the rail time's day: payments, refunds and reversals per rail and product, MRR movements,
 * subscriptions entering and leaving the paying set and each lifecycle state the state chart
 * counts, trials started, ended and converted, first payments and the first-payment cohorts' net cash.
 */
@Injectable()
export class RevenueLedger implements RailRevenueSink, OnModuleInit {
  constructor(
    private readonly repository: RevenueLedgerRepository,
    private readonly facts: RevenueFactsRepository,
    private readonly feed: RailRevenueFeed,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.feed.attach(this);
  }

  async changed(scope: TenantScope, change: RailRevenueChange): Promise<void> {
    const price = monthlyPrice(change.price);
    const nowMs = this.clock.nowMs();
    const active = change.state === 'active' && (change.validUntil === null || change.validUntil * 1000 > nowMs);
    const validUntil = change.validUntil === null ? null : new Date(change.validUntil * 1000);
    // A change that counts as the stored row does (a renewal) moves the period end in the same statement.
    const {
      subscription: stored,
      chartState,
      renewed,
    } = await this.repository.lockSubscriptionWithChartState(scope, change.rail, change.subscriptionId, {
      customerId: change.customerId,
      active,
      price,
      validUntil,
      now: new Date(nowMs),
    });
    const next: LedgerSubscription = {
      customerId: change.customerId,
      active,
      validUntil,
      currency: price?.currency ?? stored?.currency ?? null,
      monthlyMinor: price?.monthlyMinor ?? stored?.monthlyMinor ?? null,
    };
    // The rail hands over the record as it wrote it; a read of the record otherwise.
    const { productId, railTimeMs, lifecycleState } = change.written ?? (await this.facts.subscriptionFacts(scope, change.rail, change.subscriptionId));
    // The change belongs to its rail time's day (a late notification corrects its own day), never a day to come.
    const day = dayOf(Math.min(railTimeMs ?? nowMs, nowMs));
    const state = chartStateOf(lifecycleState, next.active);
    await this.moveChartState(scope, change.rail, change.subscriptionId, state === null ? null : { state, productId }, day, chartState);
    // A renewal moves the period end alone (lockSubscriptionWithChartState moved it): the
    // customer's rows and the totals count what is active and priced, so they stay. Should the
    // statement's comparison of the amount have told otherwise, the period end is moved here.
    if (stored && countsAlike(stored, next)) {
      if (!renewed && stored.validUntil?.getTime() !== next.validUntil?.getTime())
        await this.repository.setPeriodEnd(scope, change.rail, change.subscriptionId, next.validUntil, new Date(nowMs));
      return;
    }
    const customers = [...new Set([change.customerId, stored?.customerId ?? change.customerId])].sort();
    for (const customerId of customers) await this.repository.lockCustomer(scope, customerId);
    await this.repository.upsertSubscription(scope, change.rail, change.subscriptionId, next, new Date(nowMs));
    if ((stored?.active ?? false) !== next.active)
      await this.facts.moveState(scope, { day, rail: change.rail, productId, state: 'active', delta: next.active ? 1 : -1 });
    for (const customerId of customers) await this.refreshCustomer(scope, customerId, day);
  }

  /**
   * Moves the subscription from the state the state chart counts it in to `next` on `day`:
   * leaves the one, enters the other, and records a trial's start, end and conversion.
   * `counted`: the state it is counted in now, when the caller read it (else read here).
   */
  private async moveChartState(
    scope: TenantScope,
    rail: string,
    subscriptionId: string,
    next: CountedState | null,
    day: string,
    counted?: CountedState | null,
  ): Promise<void> {
    const moves = chartStateMoves(counted !== undefined ? counted : await this.facts.chartState(scope, rail, subscriptionId), next);
    if (moves) await this.facts.writeChartMoves(scope, rail, subscriptionId, day, moves);
  }

  async paid(scope: TenantScope, rail: PurchaseRail, customerId: string, payment: RailPayment): Promise<void> {
    const amountMinor = Math.round(toMinorUnits(payment.amount, payment.currency));
    if (!(amountMinor > 0)) return;
    const paidAtMs = payment.paidAtMs > 0 ? payment.paidAtMs : this.clock.nowMs();
    // The paid day's fact goes under the product of the subscription the payment bills.
    const productId = payment.productId ?? (await this.facts.subscriptionFacts(scope, rail, payment.subscriptionId ?? null)).productId;
    // The customer first, then the shared per-month and per-day rows, as a rail change does: no lock cycle.
    const { recorded, firsts } = await this.repository.lockAndRecordPayment(scope, {
      rail,
      transactionId: payment.transactionId,
      customerId,
      currency: payment.currency,
      amountMinor,
      recurring: payment.recurring,
      paidAt: new Date(paidAtMs),
      month: monthOf(paidAtMs),
      day: dayOf(paidAtMs),
      productId,
    });
    if (!recorded) return;
    // The statement added the cash to the customer's cohort when it found the customer paid first no later than this.
    if (firsts && firsts.firstPaidAt !== null && firsts.firstPaidAt.getTime() <= paidAtMs) return;
    await this.placeInCohort(scope, rail, customerId, payment, amountMinor, paidAtMs, firsts ?? (await this.facts.firsts(scope, customerId)));
  }

  /**
   * A new payment's place among the customer's firsts and cohorts: a payment no older than the
   * customer's first adds its cash to the customer's cohort; a first payment, or one older than
   * the first, moves the customer (and its cash) to the payment's cohort.
   */
  private async placeInCohort(
    scope: TenantScope,
    rail: PurchaseRail,
    customerId: string,
    payment: RailPayment,
    amountMinor: number,
    paidAtMs: number,
    firsts: CustomerFirsts,
  ) {
    const day = dayOf(paidAtMs);
    const month = monthOf(paidAtMs);
    const currency = payment.currency;
    const firstMs = firsts.firstPaidAt?.getTime() ?? null;
    if (firstMs !== null && firstMs <= paidAtMs) {
      await this.facts.addCohortCash(scope, [{ cohortMonth: monthOf(firstMs), month, currency, netMinor: amountMinor }]);
      return;
    }
    await this.facts.setFirstPaid(scope, customerId, new Date(paidAtMs));
    await this.facts.addFirstPaying(scope, day, firsts.createdDay, 1);
    if (firstMs !== null) await this.facts.addFirstPaying(scope, dayOf(firstMs), firsts.createdDay, -1);
    const cash = [{ cohortMonth: month, month, currency, netMinor: amountMinor }];
    if (firstMs === null || monthOf(firstMs) !== month) {
      await this.facts.addCohortCustomers(scope, month, 1);
      if (firstMs !== null) {
        const earlier = monthOf(firstMs);
        await this.facts.addCohortCustomers(scope, earlier, -1);
        for (const p of await this.facts.paymentsByMonth(scope, customerId, rail, payment.transactionId)) {
          cash.push({ cohortMonth: earlier, month: p.month, currency: p.currency, netMinor: -p.amountMinor });
          cash.push({ cohortMonth: month, month: p.month, currency: p.currency, netMinor: p.amountMinor });
        }
      }
    }
    await this.facts.addCohortCash(scope, cash);
  }

  async returned(scope: TenantScope, rail: PurchaseRail, customerId: string, money: RailMoneyReturn): Promise<void> {
    const amountMinor = Math.round(toMinorUnits(money.amount, money.currency));
    if (!(amountMinor > 0)) return;
    const occurredAtMs = money.occurredAtMs > 0 ? money.occurredAtMs : this.clock.nowMs();
    // On the day of its own rail time, under the product of the subscription it concerns.
    const productId = money.productId ?? (await this.facts.subscriptionFacts(scope, rail, money.subscriptionId)).productId;
    // The customer first, then the shared rows, as a payment does.
    const { recorded, firsts } = await this.repository.lockAndRecordReturn(scope, {
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
      day: dayOf(occurredAtMs),
      productId,
    });
    // The statement moved the cohort's net cash in the return's month when it found the firsts row (a customer that never paid has no cohort).
    if (!recorded || firsts) return;
    const firstPaidAt = (await this.facts.firsts(scope, customerId)).firstPaidAt;
    if (firstPaidAt)
      await this.facts.addCohortCash(scope, [
        {
          cohortMonth: monthOf(firstPaidAt.getTime()),
          month: monthOf(occurredAtMs),
          currency: money.currency,
          netMinor: money.kind === 'reversal' ? amountMinor : -amountMinor,
        },
      ]);
  }

  /** The amount the ledger recorded as paid for the rail's transaction id (an order's payment), in micros; null when none is recorded. */
  async recordedPayment(scope: TenantScope, rail: PurchaseRail, transactionId: string): Promise<{ amountMicros: number; currency: string } | null> {
    const payment = await this.repository.findPayment(scope, rail, transactionId);
    if (!payment) return null;
    return { amountMicros: Math.round(payment.amountMinor * 10 ** (6 - minorUnitDigits(payment.currency))), currency: payment.currency };
  }

  async reassigned(scope: TenantScope, fromCustomerId: string, toCustomerId: string): Promise<void> {
    const customers = [fromCustomerId, toCustomerId].sort();
    for (const customerId of customers) await this.repository.lockCustomer(scope, customerId);
    await this.repository.reassignSubscriptions(scope, fromCustomerId, toCustomerId, this.clock.now());
    // MRR moves from one customer to the other: no movement of the project's MRR.
    for (const customerId of customers) await this.refreshCustomer(scope, customerId, null);
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
      // The subscription ended with its period: its day is the period end's.
      const day = dayOf(row.validUntil.getTime());
      const { productId, lifecycleState } = await this.facts.subscriptionFacts(scope, row.rail, row.subscriptionId);
      await this.facts.moveState(scope, { day, rail: row.rail, productId, state: 'active', delta: -1 });
      // No longer paying: `active` and `in_grace_period` count in no state from the period's end.
      const state = chartStateOf(lifecycleState, false);
      await this.moveChartState(scope, row.rail, row.subscriptionId, state === null ? null : { state, productId }, day);
      await this.refreshCustomer(scope, row.customerId, day);
    }
    return due.length;
  }

  /**
   * Recomputes one customer's rows from its subscriptions and moves the totals by the
   * difference; records the MRR movement on `day` (null: none, the MRR changed hands).
   */
  private async refreshCustomer(scope: TenantScope, customerId: string, day: string | null): Promise<void> {
    await this.refreshCustomerProducts(scope, customerId, day);
    const { stored: before, computed: after } = await this.repository.customerRows(scope, customerId);
    const deltas = totalsDeltas(before, after);
    if (deltas.length === 0 && sameRows(before, after)) return;
    await this.repository.replaceCustomer(scope, customerId, after);
    await this.repository.applyDeltas(scope, deltas, dayOf(this.clock.nowMs()));
  }

  /** The customer's MRR per rail and product, and the movement from what it was. */
  private async refreshCustomerProducts(scope: TenantScope, customerId: string, day: string | null): Promise<void> {
    const { stored, computed } = await this.facts.customerProducts(scope, customerId);
    if (sameProducts(stored, computed)) return;
    if (day !== null && mrrMovements(stored, computed, false).length > 0) {
      const firsts = await this.facts.firsts(scope, customerId);
      await this.facts.addMovements(scope, day, mrrMovements(stored, computed, firsts.firstMrrDay !== null));
      if (computed.length > 0 && firsts.firstMrrDay === null) await this.facts.setFirstMrr(scope, customerId, day);
    }
    await this.facts.replaceCustomerProducts(scope, customerId, computed);
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

function sameProducts(a: readonly MrrKeyAmount[], b: readonly MrrKeyAmount[]): boolean {
  const key = (r: MrrKeyAmount) => `${r.rail}|${r.productId}|${r.currency}|${r.monthlyMinor}`;
  return a.map(key).sort().join(',') === b.map(key).sort().join(',');
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
