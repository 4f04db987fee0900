import { Injectable } from '@nestjs/common';
import { type TenantScope } from '#platform';
import type { AuthContext } from '#keys';
import { ALIAS_TYPES, BulkIdentity } from '#identity';
import { EventRollups } from '#telemetry';
import { CoverageRepository } from '../coverage.repository.js';
import { type ReadEnvelope, surfaceCoverage } from '../read-envelope.js';
import { ReportingReads } from '../reporting-reads.service.js';
import { DEFAULT_LIMIT } from '../read-query.js';
import { RevenueLedger } from '../revenue/revenue-ledger.service.js';
import type { AffectedUserItem, AffectedUsersData, ErrorImpactData } from './errors.dto.js';

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
    private readonly identity: BulkIdentity,
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
   * subscription (in any currency). `users`, the fingerprint's maintained count, says when
   * every user is in the window: their ids are then read without their last hits.
   */
  private async payingUsers(scope: TenantScope, fingerprint: string, users: number): Promise<number> {
    const userIds =
      users <= AFFECTED_REVENUE_WINDOW
        ? await this.rollups.affectedUserIds(scope, fingerprint)
        : (await this.rollups.affectedUsers(scope, fingerprint, AFFECTED_REVENUE_WINDOW)).map((u) => u.userId);
    const customerOf = await this.customersOf(scope, userIds);
    const paying = await this.ledger.payingAmong(scope, [...new Set(customerOf.values())]);
    return userIds.filter((id) => paying.has(customerOf.get(id) ?? '')).length;
  }

  /** The customer of each known user id (forgotten customers read as unknown). */
  private async customersOf(scope: TenantScope, userIds: readonly string[]): Promise<Map<string, string>> {
    if (userIds.length === 0) return new Map();
    const hits = await this.identity.findAliases(
      scope,
      userIds.map((value) => ({ type: ALIAS_TYPES.developer, value })),
    );
    return new Map(hits.filter((h) => !h.forgotten).map((h) => [h.value, h.customerId]));
  }

  /** The most recent affected users and the customer of each known one (forgotten customers read as unknown). */
  private async affectedCustomers(
    scope: TenantScope,
    fingerprint: string,
  ): Promise<{ users: Array<{ userId: string; lastHitMs: number }>; customerOf: Map<string, string> }> {
    const users = await this.rollups.affectedUsers(scope, fingerprint, AFFECTED_REVENUE_WINDOW);
    return {
      users,
      customerOf: await this.customersOf(
        scope,
        users.map((u) => u.userId),
      ),
    };
  }

  /** The most recent affected users with their customer and monthly revenue in the reporting currency (0 when none). */
  private async withRevenue(scope: TenantScope, fingerprint: string): Promise<AffectedRevenue[]> {
    const { users, customerOf } = await this.affectedCustomers(scope, fingerprint);
    if (users.length === 0) return [];
    const revenue = await this.ledger.monthlyRevenueByCustomer(scope, [...new Set(customerOf.values())]);
    return users.map((u) => {
      const customerId = customerOf.get(u.userId) ?? null;
      return { userId: u.userId, customerId, monthlyRevenueCents: customerId ? (revenue.get(customerId) ?? 0) : 0, lastHitMs: u.lastHitMs };
    });
  }
}
