import { Injectable } from '@nestjs/common';
import { ApiError, type TenantScope } from '#platform';
import type { AuthContext } from '#keys';
import { CustomerDirectory } from '#identity';
import { EntitlementReadService } from '#entitlements';
import { RAIL_ALIAS_TYPES } from '#rails';
import { CoverageRepository } from '../coverage.repository.js';
import type { Coverage, ReadEnvelope, SurfaceCoverage } from '../read-envelope.js';
import { ReportingReads } from '../reporting-reads.service.js';
import { RevenueLedger } from '../revenue/revenue-ledger.service.js';
import { CustomerCensusRepository } from './customer-census.repository.js';
import {
  CROSSMATCH_KEYS,
  type CrossmatchData,
  type CrossmatchKey,
  type CrossmatchQueryDto,
  type CustomersData,
  type RankedData,
  type RankedQueryDto,
  type RankedRowView,
} from './customers.dto.js';

const NOT_INSTRUMENTED: SurfaceCoverage = { state: 'not_instrumented', since: null };
const DEFAULT_DAYS = 30;
const DEFAULT_LIMIT = 25;

/** Alias node types of the crossmatch identifiers that are rail ids. */
const RAIL_NODE: Partial<Record<CrossmatchKey, string>> = {
  appleOriginalTransactionId: RAIL_ALIAS_TYPES.iosOriginalTransactionId,
  googlePurchaseToken: RAIL_ALIAS_TYPES.androidPurchaseToken,
  stripeCustomerId: RAIL_ALIAS_TYPES.cardCustomerId,
};

/** `GET /v1/customers`, `/v1/customers/ranked` and `/v1/crossmatch`: the customer book joined to revenue. */
@Injectable()
export class CustomerReadsService {
  constructor(
    private readonly reads: ReportingReads,
    private readonly ledger: RevenueLedger,
    private readonly census: CustomerCensusRepository,
    private readonly coverage: CoverageRepository,
    private readonly directory: CustomerDirectory,
    private readonly entitlements: EntitlementReadService,
  ) {}

  customers(auth: AuthContext): Promise<ReadEnvelope<CustomersData>> {
    return this.reads.read(auth, 'customers', async () => {
      const scope: TenantScope = auth;
      const revenue = await this.coverage.revenue(scope);
      const [paying, total] = await Promise.all([
        revenue.state === 'measured' ? this.ledger.payingCustomerCount(scope) : null,
        this.census.totalCustomers(scope),
      ]);
      const coverage: Coverage = { revenue, userCensus: { state: 'measured', since: null }, analytics: NOT_INSTRUMENTED };
      return { data: { payingCustomers: paying, totalCustomers: total, activePeople: null }, coverage };
    });
  }

  ranked(auth: AuthContext, query: RankedQueryDto): Promise<ReadEnvelope<RankedData>> {
    return this.reads.read(auth, 'customers_ranked', async () => {
      const scope: TenantScope = auth;
      const by = query.by ?? 'read_cost';
      const segment = query.segment ?? 'all';
      const limit = query.limit ?? DEFAULT_LIMIT;
      const revenue = await this.coverage.revenue(scope);
      const coverage: Coverage = { revenue, readCost: NOT_INSTRUMENTED };
      // Read cost is not instrumented yet: no ranking by it rather than a misleading one.
      if (by === 'read_cost') return { data: { rows: [] }, coverage };
      const ids: { customerId: string; monthly: number }[] = [];
      if (segment !== 'non_paying') {
        for (const row of await this.ledger.topCustomersByRevenue(scope, limit)) ids.push({ customerId: row.customerId, monthly: row.monthlyRevenueCents });
      }
      if (segment !== 'paying' && ids.length < limit) {
        for (const customerId of await this.census.nonPaying(scope, limit - ids.length)) ids.push({ customerId, monthly: 0 });
      }
      const paying = await this.ledger.payingAmong(
        scope,
        ids.map((r) => r.customerId),
      );
      const rows: RankedRowView[] = [];
      for (const { customerId, monthly } of ids) {
        const profile = await this.directory.profile(scope, customerId);
        if (!profile) continue;
        rows.push({
          userId: profile.developerUserIds[0] ?? null,
          serviceCustomerId: customerId,
          crossdeckCustomerId: customerId,
          monthlyRevenueCents: monthly,
          paying: paying.has(customerId),
          readCost: null,
        });
      }
      return { data: { rows }, coverage };
    });
  }

  crossmatch(auth: AuthContext, query: CrossmatchQueryDto): Promise<ReadEnvelope<CrossmatchData>> {
    const given = CROSSMATCH_KEYS.filter((key) => typeof query[key] === 'string' && query[key] !== '');
    if (given.length !== 1) {
      const message = `Exactly one of ${CROSSMATCH_KEYS.join(', ')} is required${given.length > 1 ? ` (got ${given.join(', ')})` : ''}`;
      throw given.length === 0 ? ApiError.missingParam(message) : ApiError.invalidParam(message);
    }
    const key = given[0];
    const value = query[key] as string;
    return this.reads.read(auth, 'crossmatch', async () => {
      const scope: TenantScope = auth;
      const revenue = await this.coverage.revenue(scope);
      const coverage: Coverage = { revenue, readCost: NOT_INSTRUMENTED };
      const customerId = await this.resolve(scope, key, value);
      const profile = customerId ? await this.directory.profile(scope, customerId) : null;
      const empty: CrossmatchData = {
        customer: null,
        revenue: { paying: false, monthlyCents: 0 },
        entitlements: { active: 0, keys: [] },
        readCost: { reads: null, windowDays: DEFAULT_DAYS },
      };
      if (!customerId || !profile) return { data: empty, coverage };
      const [monthly, paying, active] = await Promise.all([
        this.ledger.monthlyRevenueByCustomer(scope, [customerId]),
        this.ledger.payingAmong(scope, [customerId]),
        this.entitlements.listActive(scope, customerId),
      ]);
      const keys = [...new Set(active.map((e) => e.key))].sort();
      return {
        data: {
          customer: { serviceCustomerId: customerId, crossdeckCustomerId: customerId, userId: profile.developerUserIds[0] ?? null },
          revenue: { paying: paying.has(customerId), monthlyCents: monthly.get(customerId) ?? 0 },
          entitlements: { active: keys.length, keys },
          readCost: { reads: null, windowDays: DEFAULT_DAYS },
        },
        coverage,
      };
    });
  }

  private resolve(scope: TenantScope, key: CrossmatchKey, value: string): Promise<string | null> {
    const railType = RAIL_NODE[key];
    if (railType) return this.directory.findCustomerIdByAlias(scope, railType, value);
    if (key === 'customerId') return this.directory.findCustomerId(scope, { customerId: value });
    if (key === 'userId') return this.directory.findCustomerId(scope, { userId: value });
    return this.directory.findCustomerId(scope, { anonymousId: value });
  }
}
