import { Injectable } from '@nestjs/common';
import { ApiError, Clock } from '#platform';
import { type AuthContext, WorkspaceDirectory } from '#keys';
import { EventRollups } from '#telemetry';
import { utcDay } from '../buckets/bucket-report.rules.js';
import { CoverageRepository } from '../coverage.repository.js';
import type { ReadEnvelope, SurfaceCoverage } from '../read-envelope.js';
import { ReportingReads } from '../reporting-reads.service.js';
import { DEFAULT_DAYS, DEFAULT_LIMIT } from '../read-query.js';
import { hostAllowed } from './allowed-hosts.js';
import type { BreakdownData, MetricsData, ViewsDayView } from './analytics.dto.js';

/** Per-host web analytics from the page-view rollups; the host must belong to one of the project's web apps. */
@Injectable()
export class AnalyticsReadsService {
  constructor(
    private readonly reads: ReportingReads,
    private readonly coverage: CoverageRepository,
    private readonly rollups: EventRollups,
    private readonly directory: WorkspaceDirectory,
    private readonly clock: Clock,
  ) {}

  metrics(auth: AuthContext, host: string, granularity: 'total' | 'day' = 'total', days = DEFAULT_DAYS): Promise<ReadEnvelope<MetricsData>> {
    return this.reads.read<MetricsData>(auth, 'web_metrics', async () => {
      const name = await this.allowedHost(auth, host);
      const analytics = await this.analyticsCoverage(auth);
      if (analytics.state !== 'measured') {
        return { data: { totals: { uniqueVisitors: null, views: null }, ...(granularity === 'day' ? { series: [] } : {}) }, coverage: { analytics } };
      }
      const now = this.clock.nowMs();
      const { series, uniqueVisitors } = await this.rollups.views(auth, name, utcDay(now, days - 1));
      const views = series.reduce((n, d) => n + d.views, 0);
      const data: MetricsData = { totals: { uniqueVisitors, views } };
      if (granularity === 'day') {
        const byDate = new Map(series.map((d) => [d.date, d]));
        const filled: ViewsDayView[] = [];
        for (let offset = days - 1; offset >= 0; offset--) {
          const date = utcDay(now, offset);
          const d = byDate.get(date);
          filled.push({ date, uniqueVisitors: d?.uniqueVisitors ?? 0, views: d?.views ?? 0 });
        }
        data.series = filled;
      }
      return { data, coverage: { analytics } };
    });
  }

  breakdown(
    auth: AuthContext,
    host: string,
    dimension: 'top_pages' | 'top_referrers' = 'top_pages',
    days = DEFAULT_DAYS,
    limit = DEFAULT_LIMIT,
  ): Promise<ReadEnvelope<BreakdownData>> {
    return this.reads.read<BreakdownData>(auth, 'web_breakdown', async () => {
      const name = await this.allowedHost(auth, host);
      const analytics = await this.analyticsCoverage(auth);
      if (analytics.state !== 'measured') return { data: { rows: null }, coverage: { analytics } };
      const rows = await this.rollups.breakdown(auth, name, dimension, utcDay(this.clock.nowMs(), days - 1), limit);
      return { data: { rows }, coverage: { analytics } };
    });
  }

  /** The host, lower-cased, when one of the project's web apps allows an origin on it; else 403 origin_not_allowed. */
  private async allowedHost(auth: AuthContext, host: string): Promise<string> {
    const apps = (await this.directory.apps(auth)).filter((a) => a.projectId === auth.projectId);
    if (
      !hostAllowed(
        host,
        apps.flatMap((a) => a.allowedOrigins),
      )
    ) {
      throw ApiError.permission('origin_not_allowed', `host ${host.slice(0, 253)} is not a host of this project's allowed origins`);
    }
    return host.trim().toLowerCase();
  }

  private async analyticsCoverage(auth: AuthContext): Promise<SurfaceCoverage> {
    return (await this.coverage.coverage(auth)).analytics ?? { state: 'not_instrumented', since: null };
  }
}
