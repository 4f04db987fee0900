import { Injectable } from '@nestjs/common';
import { Clock, TenantScopes } from '#platform';
import { ProjectDirectory } from '#keys';
import { ChartsService } from '../charts/charts.service.js';
import { CoverageRepository } from '../coverage.repository.js';
import { RevenueReadsService } from '../revenue/revenue-reads.service.js';
import type { OverviewView } from './overview.dto.js';
import { OverviewRepository } from './overview.repository.js';

const SERIES_DAYS = 30;

/** The operator console's overview of one project and environment. */
@Injectable()
export class OverviewService {
  constructor(
    private readonly projects: ProjectDirectory,
    private readonly revenue: RevenueReadsService,
    private readonly coverage: CoverageRepository,
    private readonly counts: OverviewRepository,
    private readonly charts: ChartsService,
    private readonly clock: Clock,
  ) {}

  async overview(projectId: string, env: 'production' | 'sandbox'): Promise<OverviewView> {
    await this.projects.assertExists(projectId);
    // The operator token reads every project; the project was checked above.
    const scope = TenantScopes.operator(projectId, env);
    const nowMs = this.clock.nowMs();
    const [revenue, currency] = await Promise.all([this.coverage.revenue(scope), this.revenue.currencyOf(scope)]);
    const measured = revenue.state === 'measured';
    const figures = measured ? await this.revenue.figures(scope, currency, nowMs) : null;
    const series = await this.revenue.series(scope, currency, SERIES_DAYS, nowMs, measured);
    const active = measured ? await this.counts.activeSubscriptionsByRail(scope) : null;
    const today = new Date(nowMs).toISOString().slice(0, 10);
    const [openErrorIssues, deadJobs, eventsToday, summary] = await Promise.all([
      this.counts.errorIssues(scope),
      this.counts.deadJobs(scope),
      this.counts.eventsOfDay(scope, today),
      this.charts.operatorRevenueSummary(scope),
    ]);
    return {
      object: 'overview',
      currency,
      mrrCents: figures?.mrrCents ?? null,
      payingCustomers: figures?.payingCustomers ?? null,
      activeSubscriptionsByRail: {
        ios_store: active ? (active.get('ios_store') ?? 0) : null,
        card_payments: active ? (active.get('card_payments') ?? 0) : null,
        android_store: active ? (active.get('android_store') ?? 0) : null,
      },
      eventsToday,
      openErrorIssues,
      deadJobs,
      mrrSeries: series.map((point) => ({ date: point.date, mrrCents: point.mrrCents })),
      revenue: summary.data,
    };
  }
}
