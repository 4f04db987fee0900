import { Injectable } from '@nestjs/common';
import { ApiError, Clock } from '#platform';
import type { AuthContext } from '#keys';
import { EventRollups } from '#telemetry';
import { CoverageRepository } from '../coverage.repository.js';
import { type ReadEnvelope, surfaceCoverage } from '../read-envelope.js';
import { ReportingReads } from '../reporting-reads.service.js';
import { DEFAULT_LIMIT } from '../read-query.js';
import type { AcquisitionData, ArrivalAcceptedView, HubspotArrivalDto } from './acquisition.dto.js';

/** Campaign arrivals (first touch wins per anonymous id) and signups by first-touch source. */
@Injectable()
export class AcquisitionService {
  constructor(
    private readonly rollups: EventRollups,
    private readonly reads: ReportingReads,
    private readonly coverage: CoverageRepository,
    private readonly clock: Clock,
  ) {}

  async arrival(auth: AuthContext, dto: HubspotArrivalDto): Promise<ArrivalAcceptedView> {
    if (auth.platform !== 'web') throw ApiError.authentication('invalid_api_key', "Arrivals take a web app's publishable key");
    await this.rollups.recordArrival(auth, dto.anonymousId, dto.ref, this.clock.nowMs());
    return { object: 'arrival' };
  }

  sources(auth: AuthContext, limit = DEFAULT_LIMIT): Promise<ReadEnvelope<AcquisitionData>> {
    return this.reads.read<AcquisitionData>(auth, 'acquisition', async () => {
      const { analytics, userCensus } = await this.coverage.coverage(auth);
      const sources = await this.rollups.signupsBySource(auth, limit);
      // The CLI reads one surface's coverage inside data: the first touches come from page views.
      return { data: { sources, coverage: surfaceCoverage(analytics) }, coverage: { analytics, userCensus } };
    });
  }
}
