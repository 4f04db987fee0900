import { Injectable } from '@nestjs/common';
import { type TenantScope } from '#platform';
import type { AuthContext } from '#keys';
import { ALIAS_TYPES } from '#identity';
import { EventRollups } from '#telemetry';
import { CoverageRepository } from '../coverage.repository.js';
import { type ReadEnvelope, surfaceCoverage } from '../read-envelope.js';
import { ReportingReads } from '../reporting-reads.service.js';
import { DEFAULT_LIMIT } from '../read-query.js';
import { RevenueLedger } from '../revenue/revenue-ledger.service.js';
import type { AffectedUserItem, AffectedUsersData, ErrorImpactData } from './errors.dto.js';
import { ErrorImpactRepository } from './error-impact.repository.js';

const FINGERPRINT = /^[0-9a-f]{8}$/;
/**
 * Affected users weighed for revenue: the most recent this many. An error that hit more
 * users counts its paying users among these (the figure is then a lower bound).
 */
export const AFFECTED_REVENUE_WINDOW = 5_000;

interface AffectedRevenue {
  userId: string;
  customerId: string | null;
  monthlyRevenueCents: number;
  lastHitMs: number;
}

/** GET /v1/errors and /v1/errors/affected: the error rollups joined to identity and the revenue ledger. */
@Injectable()
export class ErrorsReadsService {
  constructor(
    private readonly reads: ReportingReads,
    private readonly coverage: CoverageRepository,
    private readonly rollups: EventRollups,
    private readonly errorImpact: ErrorImpactRepository,
    private readonly ledger: RevenueLedger,
  ) {}

  impact(auth: AuthContext, fingerprint: string): Promise<ReadEnvelope<ErrorImpactData | null>> {
    return this.reads.read<ErrorImpactData | null>(auth, 'error_impact', async () => {
      const { errors, revenue } = await this.coverage.coverage(auth);
      const coverage = { errors, revenue };
      const fp = fingerprint.toLowerCase();
      const row = FINGERPRINT.test(fp) ? await this.rollups.error(auth, fp) : null;
      if (!row) return { data: null, coverage };
      const payingUsers = revenue?.state === 'measured' ? await this.payingUsers(auth, fp, row.users) : null;
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
      const users = FINGERPRINT.test(fp) ? await this.withRevenue(auth, fp) : [];
      users.sort((a, b) => b.monthlyRevenueCents - a.monthlyRevenueCents || b.lastHitMs - a.lastHitMs || (a.userId < b.userId ? -1 : 1));
      const rows: AffectedUserItem[] = users.slice(0, limit).map((u) => ({
        userId: u.userId,
        serviceCustomerId: u.customerId,
        crossdeckCustomerId: u.customerId,
        monthlyRevenueCents: u.monthlyRevenueCents,
        lastHitAt: u.lastHitMs,
      }));
      return { data: { rows }, coverage: { errors, revenue } };
    });
  }

  /**
   * Affected users (of the most recent window) whose customer has an active priced
   * subscription (in any currency). `users`: the fingerprint's maintained count; within the
   * window, every user is in it.
   */
  private payingUsers(scope: TenantScope, fingerprint: string, users: number): Promise<number> {
    return this.errorImpact.payingUsers(scope, fingerprint, AFFECTED_REVENUE_WINDOW, users <= AFFECTED_REVENUE_WINDOW, ALIAS_TYPES.developer);
  }

  /** The most recent affected users with their customer (forgotten ones read as unknown) and monthly revenue in the reporting currency (0 when none). */
  private async withRevenue(scope: TenantScope, fingerprint: string): Promise<AffectedRevenue[]> {
    const currency = await this.ledger.reportingCurrency(scope);
    const rows = await this.errorImpact.affectedCustomers(scope, fingerprint, AFFECTED_REVENUE_WINDOW, ALIAS_TYPES.developer, currency);
    return rows.map((r) => ({
      userId: r.userId,
      customerId: r.customerId,
      monthlyRevenueCents: r.monthlyMinor === null ? 0 : Math.round(Number(r.monthlyMinor)),
      lastHitMs: r.lastHitMs,
    }));
  }
}
