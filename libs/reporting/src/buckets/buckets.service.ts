import { Injectable } from '@nestjs/common';
import { ApiError, Clock } from '#platform';
import type { AuthContext } from '#keys';
import { CoverageRepository } from '../coverage.repository.js';
import type { ReadEnvelope } from '../read-envelope.js';
import { ReportingReads } from '../reporting-reads.service.js';
import { DEFAULT_DAYS } from '../read-query.js';
import { parseBucketReport } from './bucket-report.rules.js';
import { BucketReportsRepository } from './bucket-reports.repository.js';
import type { BucketReportAcceptedView, ReadCostData } from './buckets.dto.js';
import { ReadCosts } from './read-costs.service.js';

/** At most this many labels in byOperation. */
const OPERATIONS_LIMIT = 100;

/** Bucket reports in (added up per key and UTC date) and the read-cost read. */
@Injectable()
export class BucketsService {
  constructor(
    private readonly reports: BucketReportsRepository,
    private readonly readCosts: ReadCosts,
    private readonly reads: ReportingReads,
    private readonly coverage: CoverageRepository,
    private readonly clock: Clock,
  ) {}

  async report(auth: AuthContext, body: unknown): Promise<BucketReportAcceptedView> {
    // Publishable keys of web apps only (the browser reporter); the key guard checked their Origin.
    if (auth.kind === 'publishable' && auth.platform !== 'web') {
      throw ApiError.authentication('invalid_api_key', "Bucket reports take a secret key or a web app's publishable key");
    }
    const report = parseBucketReport(body);
    await this.reports.add(auth, auth.keyId, report, this.clock.nowMs());
    return { object: 'bucket_report', date: report.date };
  }

  read(auth: AuthContext, days = DEFAULT_DAYS): Promise<ReadEnvelope<ReadCostData>> {
    return this.reads.read<ReadCostData>(auth, 'read_cost', async () => {
      const from = this.readCosts.fromDate(days);
      const readCost = (await this.coverage.coverage(auth)).readCost ?? { state: 'not_instrumented', since: null };
      if (readCost.state !== 'measured') {
        const none = { reads: null, writes: null, deletes: null, perUserReads: null, overheadReads: null, attributedActors: null, byOperation: null };
        return { data: none, coverage: { readCost } };
      }
      const summary = await this.reports.summary(auth, from);
      const s = summary ?? { reads: 0, writes: 0, deletes: 0, perUserReads: 0, attributedActors: 0 };
      const byOperation = summary ? await this.reports.byOperation(auth, from, OPERATIONS_LIMIT) : [];
      const perUserReads = Math.min(s.perUserReads, s.reads);
      return {
        data: { ...s, perUserReads, overheadReads: s.reads - perUserReads, byOperation },
        coverage: { readCost },
      };
    });
  }
}
