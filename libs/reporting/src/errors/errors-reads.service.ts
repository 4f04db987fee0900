import { Injectable } from '@nestjs/common';
import type { AuthContext } from '#keys';
import { EventRollups } from '#telemetry';
import { CoverageRepository } from '../coverage.repository.js';
import { type ReadEnvelope, surfaceCoverage } from '../read-envelope.js';
import { ReportingReads } from '../reporting-reads.service.js';
import { DEFAULT_LIMIT } from '../read-query.js';
import type { AffectedUserItem, AffectedUsersData, ErrorImpactData } from './errors.dto.js';
import { ErrorRevenue } from './error-revenue.service.js';

const FINGERPRINT = /^[0-9a-f]{8}$/;

/** GET /v1/errors and /v1/errors/affected: the error rollups, and what the error costs in revenue (ErrorRevenue). */
@Injectable()
export class ErrorsReadsService {
  constructor(
    private readonly reads: ReportingReads,
    private readonly coverage: CoverageRepository,
    private readonly rollups: EventRollups,
    private readonly revenue: ErrorRevenue,
  ) {}

  impact(auth: AuthContext, fingerprint: string): Promise<ReadEnvelope<ErrorImpactData | null>> {
    return this.reads.read<ErrorImpactData | null>(auth, 'error_impact', async () => {
      const { errors, revenue } = await this.coverage.coverage(auth);
      const coverage = { errors, revenue };
      const fp = fingerprint.toLowerCase();
      const row = FINGERPRINT.test(fp) ? await this.rollups.error(auth, fp) : null;
      if (!row) return { data: null, coverage };
      let payingUsers: number | null = null;
      if (revenue?.state === 'measured') payingUsers = row.users > 0 ? (await this.revenue.current(auth, fp)).payingUsers : 0;
      return {
        data: {
          fingerprint: fp,
          exceptionType: row.exceptionType,
          status: 'open',
          level: row.level,
          occurrences: row.occurrences,
          affected: { users: row.users, payingUsers },
          firstSeen: row.firstSeenMs,
          lastSeen: row.lastSeenMs,
          // The CLI reads one surface's coverage inside data: the revenue behind payingUsers.
          coverage: surfaceCoverage(revenue),
        },
        coverage,
      };
    });
  }

  affected(auth: AuthContext, fingerprint: string, limit = DEFAULT_LIMIT): Promise<ReadEnvelope<AffectedUsersData>> {
    return this.reads.read<AffectedUsersData>(auth, 'error_affected_users', async () => {
      const { errors, revenue } = await this.coverage.coverage(auth);
      const fp = fingerprint.toLowerCase();
      // A fingerprint that hit no user has no snapshot (none is kept for a made-up one).
      const hitUsers = FINGERPRINT.test(fp) && (await this.rollups.affectedUserCount(auth, fp)) > 0;
      const affected = hitUsers ? (await this.revenue.current(auth, fp)).affected : [];
      const rows: AffectedUserItem[] = affected.slice(0, limit).map(([userId, customerId, monthlyRevenueCents, lastHitMs]) => ({
        userId,
        serviceCustomerId: customerId,
        crossdeckCustomerId: customerId,
        monthlyRevenueCents,
        lastHitAt: lastHitMs,
      }));
      return { data: { rows }, coverage: { errors, revenue } };
    });
  }
}
