import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope } from '#platform';
import type { AuthContext } from '#keys';
import { SubscriptionCounts } from '#rails';
import { CoverageRepository } from '../coverage.repository.js';
import type { ReadEnvelope } from '../read-envelope.js';
import { ReportingReads } from '../reporting-reads.service.js';
import { dayOf, monthOf } from './price-normalisation.js';
import { ANY_CURRENCY, type DailyRow, type LedgerRail, RevenueLedgerRepository, type TotalsRow } from './revenue-ledger.repository.js';
import { DEFAULT_REPORTING_CURRENCY } from './revenue-ledger.service.js';
import type { RevenueAveragesData, RevenueData, RevenueFiguresView, RevenuePointView, RevenueQueryDto } from './revenue.dto.js';

const RAILS = ['ios_store', 'card_payments', 'android_store'] as const;
const DAY_MS = 86_400_000;
/**
 * A figure in cents. The rails' amount bounds keep every stored amount a safe integer of
 * micros, so a sum that is not finite is a broken invariant: it fails the read rather than
 * showing `null` beside coverage "measured".
 */
export function cents(minor: number): number {
  const rounded = Math.round(minor);
  if (!Number.isSafeInteger(rounded)) throw new Error(`revenue figure out of range: ${minor}`);
  return rounded;
}

/** `GET /v1/revenue` and `/v1/revenue/averages`: point reads of the revenue ledger's totals. */
@Injectable()
export class RevenueReadsService {
  constructor(
    private readonly reads: ReportingReads,
    private readonly ledger: RevenueLedgerRepository,
    private readonly coverage: CoverageRepository,
    private readonly clock: Clock,
    private readonly counts: SubscriptionCounts,
  ) {}

  revenue(auth: AuthContext, query: RevenueQueryDto): Promise<ReadEnvelope<RevenueData>> {
    return this.reads.read(auth, 'revenue', async () => {
      const scope: TenantScope = auth;
      const [revenue, currency] = await Promise.all([this.coverage.revenue(scope), this.currencyOf(scope)]);
      const measured = revenue.state === 'measured';
      const nowMs = this.clock.nowMs();
      const figures = measured ? await this.figures(scope, currency, nowMs) : nullFigures(currency);
      const data: RevenueData = { ...figures, current: { ...figures } };
      if (query.granularity === 'day') data.series = await this.series(scope, currency, query.days ?? 30, nowMs, measured);
      return { data, coverage: { revenue } };
    });
  }

  averages(auth: AuthContext): Promise<ReadEnvelope<RevenueAveragesData>> {
    return this.reads.read(auth, 'revenue_averages', async () => {
      const scope: TenantScope = auth;
      const [revenue, currency] = await Promise.all([this.coverage.revenue(scope), this.currencyOf(scope)]);
      if (revenue.state !== 'measured') {
        const data = {
          currency,
          arpuCents: null,
          averageLifetimeValueCents: null,
          combinedLifetimeValueCents: null,
          recognisedCashToDateCents: null,
          payingCustomers: null,
        };
        return { data, coverage: { revenue } };
      }
      const [totals, cash] = await Promise.all([this.ledger.totals(scope), this.ledger.cash(scope, null)]);
      const mrr = find(totals, 'all', currency)?.mrrMinor ?? 0;
      const payingInCurrency = find(totals, 'all', currency)?.payingCustomers ?? 0;
      const inCurrency = cash.filter((c) => c.currency === currency);
      const oneOff = inCurrency.filter((c) => !c.recurring).reduce((sum, c) => sum + c.amountMinor, 0);
      const combined = mrr * 12 + oneOff;
      const data: RevenueAveragesData = {
        currency,
        arpuCents: payingInCurrency > 0 ? cents(mrr / payingInCurrency) : 0,
        averageLifetimeValueCents: payingInCurrency > 0 ? cents(combined / payingInCurrency) : 0,
        combinedLifetimeValueCents: cents(combined),
        recognisedCashToDateCents: cents(inCurrency.reduce((sum, c) => sum + c.amountMinor, 0)),
        payingCustomers: find(totals, 'all', ANY_CURRENCY)?.payingCustomers ?? 0,
      };
      return { data, coverage: { revenue } };
    });
  }

  async currencyOf(scope: TenantScope): Promise<string> {
    return (await this.ledger.reportingCurrency(scope)) ?? DEFAULT_REPORTING_CURRENCY;
  }

  async figures(scope: TenantScope, currency: string, nowMs: number): Promise<RevenueFiguresView> {
    const [totals, cash, trials] = await Promise.all([this.ledger.totals(scope), this.ledger.cash(scope, monthOf(nowMs)), this.counts.activeTrials(scope)]);
    const thisMonth = cash.filter((c) => c.currency === currency);
    const recurring = thisMonth.filter((c) => c.recurring).reduce((sum, c) => sum + c.amountMinor, 0);
    const oneOff = thisMonth.filter((c) => !c.recurring).reduce((sum, c) => sum + c.amountMinor, 0);
    const refunds = thisMonth.reduce((sum, c) => sum + c.refundsMinor, 0);
    const byRailDetail = railsOf((rail) => ({
      mrrCents: cents(find(totals, rail, currency)?.mrrMinor ?? 0),
      payingCustomers: find(totals, rail, ANY_CURRENCY)?.payingCustomers ?? 0,
      activeTrials: trials.byRail[rail],
    }));
    return {
      currency,
      mrrCents: cents(find(totals, 'all', currency)?.mrrMinor ?? 0),
      payingCustomers: find(totals, 'all', ANY_CURRENCY)?.payingCustomers ?? 0,
      byRail: railsOf((rail) => byRailDetail[rail].mrrCents),
      byRailDetail,
      recognisedCashThisMonthCents: cents(recurring + oneOff),
      recognisedCashThisMonthByShape: { recurring: cents(recurring), oneOff: cents(oneOff) },
      refundsCents: cents(refunds),
      netCashCents: cents(recurring + oneOff - refunds),
      activeTrials: trials.total,
      otherCurrencies: totals
        .filter((t) => t.rail === 'all' && t.currency !== ANY_CURRENCY && t.currency !== currency && t.mrrMinor > 0)
        .sort((a, b) => a.currency.localeCompare(b.currency))
        .map((t) => ({ currency: t.currency, mrrCents: cents(t.mrrMinor) })),
    };
  }

  /** One point per day (oldest first): each day's last value, carried forward over days without a change. */
  async series(scope: TenantScope, currency: string, days: number, nowMs: number, measured: boolean): Promise<RevenuePointView[]> {
    const dates = Array.from({ length: days }, (_, i) => dayOf(nowMs - (days - 1 - i) * DAY_MS));
    if (!measured) return dates.map((date) => ({ date, mrrCents: null, payingCustomers: null, refundsCents: null }));
    const today = dates[dates.length - 1];
    const [mrr, paying, refunds] = await Promise.all([
      this.ledger.daily(scope, 'all', currency, today, days + 1),
      this.ledger.daily(scope, 'all', ANY_CURRENCY, today, days + 1),
      this.ledger.refundsByDay(scope, currency, dates[0]),
    ]);
    return dates.map((date) => ({
      date,
      mrrCents: cents(valueOn(mrr, date)?.mrrMinor ?? 0),
      payingCustomers: valueOn(paying, date)?.payingCustomers ?? 0,
      refundsCents: cents(refunds.get(date) ?? 0),
    }));
  }
}

function find(totals: readonly TotalsRow[], rail: LedgerRail, currency: string): TotalsRow | undefined {
  return totals.find((t) => t.rail === rail && t.currency === currency);
}

/** The newest row on or before `date` (rows newest first). */
function valueOn(rows: readonly DailyRow[], date: string): DailyRow | undefined {
  return rows.find((row) => row.day <= date);
}

/** One value per rail, in the rails' order. */
function railsOf<T>(value: (rail: (typeof RAILS)[number]) => T): Record<(typeof RAILS)[number], T> {
  return { ios_store: value('ios_store'), card_payments: value('card_payments'), android_store: value('android_store') };
}

function nullFigures(currency: string): RevenueFiguresView {
  return {
    currency,
    mrrCents: null,
    payingCustomers: null,
    byRail: railsOf(() => null),
    byRailDetail: railsOf(() => ({ mrrCents: null, payingCustomers: null, activeTrials: null })),
    recognisedCashThisMonthCents: null,
    recognisedCashThisMonthByShape: { recurring: null, oneOff: null },
    refundsCents: null,
    netCashCents: null,
    activeTrials: null,
    otherCurrencies: [],
  };
}
