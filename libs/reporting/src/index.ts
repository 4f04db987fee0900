import { ActiveDaysByCustomer1790000003712 } from './migrations/1790000003712-active-days-by-customer.migration.js';
import { BucketReports1790000002400 } from './migrations/1790000002400-bucket-reports.migration.js';
import { RevenueLedger1790000002410 } from './migrations/1790000002410-revenue-ledger.migration.js';
import { ActivePeopleAndLapses1790000002420 } from './migrations/1790000002420-active-people.migration.js';
import { CensusCounters1790000003220 } from './migrations/1790000003220-census-counters.migration.js';
import { ErrorRevenueSnapshots1790000003240 } from './migrations/1790000003240-error-revenue-snapshots.migration.js';
import { ErrorRevenueErasures1790000003500 } from './migrations/1790000003500-error-revenue-erasures.migration.js';
import { ChartFacts1790000003600 } from './migrations/1790000003600-chart-facts.migration.js';
import { RevenueRefunds1790000003650 } from './migrations/1790000003650-revenue-refunds.migration.js';
import { LifecycleChartFacts1790000003750 } from './migrations/1790000003750-lifecycle-chart-facts.migration.js';
import { CustomerListOrders1790000003800 } from './migrations/1790000003800-customer-list-orders.migration.js';
import { ChartLevelMonths1790000003810 } from './migrations/1790000003810-chart-level-months.migration.js';
import { ActivePeriods1790000003960 } from './migrations/1790000003960-active-periods.migration.js';
import { ChartSplitSums1790000003970 } from './migrations/1790000003970-chart-split-sums.migration.js';

export { ReportingModule } from './reporting.module.js';
export { ReportingRead, type ReportingReadOptions } from './reporting-read.decorator.js';
export { ReportingReads, READS_BUCKET, projectOf } from './reporting-reads.service.js';
export {
  COVERAGE_SURFACES,
  type Coverage,
  type CoverageState,
  type CoverageSurface,
  type ReadEnvelope,
  type ReadMeta,
  type SurfaceCoverage,
  CoverageView,
  ReadMetaView,
  SurfaceCoverageView,
} from './read-envelope.js';
export { RevenueLapseJob, REVENUE_LAPSE_EVERY_MS, REVENUE_LAPSE_GRACE_MS } from './revenue/revenue-lapse.job.js';
export { ReadCosts } from './buckets/read-costs.service.js';
export { ErrorRevenueRefreshJob } from './errors/error-revenue-refresh.job.js';

/** Migrations of the reporting context, in order. */
export const REPORTING_MIGRATIONS = [
  BucketReports1790000002400,
  RevenueLedger1790000002410,
  ActivePeopleAndLapses1790000002420,
  CensusCounters1790000003220,
  ErrorRevenueSnapshots1790000003240,
  ErrorRevenueErasures1790000003500,
  ChartFacts1790000003600,
  RevenueRefunds1790000003650,
  ActiveDaysByCustomer1790000003712,
  LifecycleChartFacts1790000003750,
  CustomerListOrders1790000003800,
  ChartLevelMonths1790000003810,
  ActivePeriods1790000003960,
  ChartSplitSums1790000003970,
];
