import { Module, type OnModuleInit } from '@nestjs/common';
import { KeysModule } from '#keys';
import { RailsModule } from '#rails';
import { ErasureHooks, IdentityModule } from '#identity';
import { EntitlementsModule } from '#entitlements';
import { TelemetryModule } from '#telemetry';
import { AcquisitionController } from './acquisition/acquisition.controller.js';
import { AcquisitionService } from './acquisition/acquisition.service.js';
import { AnalyticsController } from './analytics/analytics.controller.js';
import { AnalyticsReadsService } from './analytics/analytics-reads.service.js';
import { ChartsController } from './charts/charts.controller.js';
import { OperatorChartsController } from './charts/operator-charts.controller.js';
import { ChartsRepository } from './charts/charts.repository.js';
import { ChartsService } from './charts/charts.service.js';
import { ErrorsController } from './errors/errors.controller.js';
import { ErrorsReadsService } from './errors/errors-reads.service.js';
import { ErrorRevenueSnapshotsRepository } from './errors/error-revenue-snapshots.repository.js';
import { ErrorRevenue } from './errors/error-revenue.service.js';
import { ErrorRevenueRefreshJob } from './errors/error-revenue-refresh.job.js';
import { BucketReportsRepository } from './buckets/bucket-reports.repository.js';
import { BucketsController } from './buckets/buckets.controller.js';
import { BucketsService } from './buckets/buckets.service.js';
import { ReadCosts } from './buckets/read-costs.service.js';
import { CoverageRepository } from './coverage.repository.js';
import { ActiveDaysRepository, ActivePeople } from './customers/active-people.js';
import { CustomerCensusRepository } from './customers/customer-census.repository.js';
import { CustomerReadsService } from './customers/customer-reads.service.js';
import { CustomersController } from './customers/customers.controller.js';
import { OverviewController } from './overview/overview.controller.js';
import { OverviewRepository } from './overview/overview.repository.js';
import { OverviewService } from './overview/overview.service.js';
import { ReportingReads } from './reporting-reads.service.js';
import { RevenueFactsRepository } from './revenue/revenue-facts.repository.js';
import { RevenueLedgerRepository } from './revenue/revenue-ledger.repository.js';
import { RevenueLapseJob } from './revenue/revenue-lapse.job.js';
import { RevenueLedger } from './revenue/revenue-ledger.service.js';
import { ReportingSettingsController, RevenueController } from './revenue/revenue.controller.js';
import { RevenueReadsService } from './revenue/revenue-reads.service.js';
import { ReportingSettingsService } from './revenue/reporting-settings.service.js';
import { WorkspaceController } from './workspace/workspace.controller.js';
import { WorkspaceReadsService } from './workspace/workspace-reads.service.js';

/** The read API's shared machinery (envelope, reads bucket, scopes, workspace keys) and the workspace reads. */
@Module({
  imports: [KeysModule, RailsModule, IdentityModule, EntitlementsModule, TelemetryModule],
  controllers: [
    WorkspaceController,
    BucketsController,
    ErrorsController,
    AnalyticsController,
    AcquisitionController,
    RevenueController,
    ReportingSettingsController,
    CustomersController,
    OverviewController,
    ChartsController,
    OperatorChartsController,
  ],
  providers: [
    ReportingReads,
    CoverageRepository,
    WorkspaceReadsService,
    BucketReportsRepository,
    BucketsService,
    ReadCosts,
    RevenueLedgerRepository,
    RevenueFactsRepository,
    RevenueLedger,
    RevenueLapseJob,
    RevenueReadsService,
    ReportingSettingsService,
    CustomerCensusRepository,
    CustomerReadsService,
    OverviewRepository,
    ActiveDaysRepository,
    ActivePeople,
    OverviewService,
    ErrorsReadsService,
    ErrorRevenueSnapshotsRepository,
    ErrorRevenue,
    ErrorRevenueRefreshJob,
    AnalyticsReadsService,
    AcquisitionService,
    ChartsRepository,
    ChartsService,
  ],
  exports: [ReportingReads, ReadCosts, RevenueLedger],
})
export class ReportingModule implements OnModuleInit {
  constructor(
    private readonly erasureHooks: ErasureHooks,
    private readonly errorRevenue: ErrorRevenue,
  ) {}

  onModuleInit(): void {
    // The error revenue snapshots may name the forgotten user: the scope's go with the erasure.
    this.erasureHooks.register('reporting.error_revenue', (scope) => this.errorRevenue.forgetScope(scope));
  }
}
