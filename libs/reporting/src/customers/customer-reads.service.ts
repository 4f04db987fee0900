import { Injectable } from '@nestjs/common';
import { ApiError, type TenantScope } from '#platform';
import type { AuthContext } from '#keys';
import { CustomerDirectory } from '#identity';
import { EntitlementReadService } from '#entitlements';
import { RAIL_ALIAS_TYPES } from '#rails';
import { CoverageRepository } from '../coverage.repository.js';
import type { Coverage, ReadEnvelope, SurfaceCoverage } from '../read-envelope.js';
import { ReadCosts } from '../buckets/read-costs.service.js';
import { ReportingReads } from '../reporting-reads.service.js';
import { RevenueLedger } from '../revenue/revenue-ledger.service.js';
import { ActivePeople } from './active-people.js';
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
type Segment = 'paying' | 'non_paying' | 'all';
interface Candidate {
  customerId: string;
  userIds: string[];
}
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
    private readonly readCosts: ReadCosts,
    private readonly activePeople: ActivePeople,
  ) {}

  customers(auth: AuthContext): Promise<ReadEnvelope<CustomersData>> {
    return this.reads.read(auth, 'customers', async () => {
      const scope: TenantScope = auth;
      const revenue = await this.coverage.revenue(scope);
      const [paying, total, active] = await Promise.all([
        revenue.state === 'measured' ? this.ledger.payingCustomerCount(scope) : null,
        this.census.totalCustomers(scope),
        this.activePeople.count(scope),
      ]);
      const coverage: Coverage = {
        revenue,
        userCensus: { state: 'measured', since: null },
        analytics: active === null ? NOT_INSTRUMENTED : { state: 'measured', since: null },
      };
      return { data: { payingCustomers: paying, totalCustomers: total, activePeople: active }, coverage };
    });
  }

  ranked(auth: AuthContext, query: RankedQueryDto): Promise<ReadEnvelope<RankedData>> {
    return this.reads.read(auth, 'customers_ranked', async () => {
      const scope: TenantScope = auth;
      const by = query.by ?? 'read_cost';
      const segment = query.segment ?? 'all';
      const limit = query.limit ?? DEFAULT_LIMIT;
      const days = query.days ?? DEFAULT_DAYS;
      const { revenue, readCost } = await this.coverage.revenueAndReadCost(scope);
      const coverage: Coverage = { revenue, readCost };
      const measuredCost = readCost.state === 'measured';
      const candidates =
        by === 'read_cost' ? (measuredCost ? await this.byReadCost(scope, days, limit, segment) : []) : await this.byRevenue(scope, limit, segment);
      const customerIds = candidates.map((c) => c.customerId);
      const { monthlyMinor: monthly, paying } = await this.ledger.revenueAmong(scope, customerIds);
      const rows: RankedRowView[] = [];
      for (const { customerId, userIds } of candidates) {
        rows.push({
          userId: userIds[0] ?? null,
          serviceCustomerId: customerId,
          crossdeckCustomerId: customerId,
          monthlyRevenueCents: monthly.get(customerId) ?? 0,
          paying: paying.has(customerId),
          readCost: null,
        });
      }
      if (measuredCost) {
        const reads = await this.readCosts.readsByActor(
          scope,
          candidates.flatMap((c) => c.userIds),
          days,
        );
        rows.forEach((row, i) => (row.readCost = candidates[i].userIds.reduce((sum, id) => sum + (reads.get(id) ?? 0), 0)));
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
      // The customer is resolved while the coverage is read: neither needs the other.
      const [{ revenue, readCost }, customerId] = await Promise.all([this.coverage.revenueAndReadCost(scope), this.resolve(scope, key, value)]);
      const coverage: Coverage = { revenue, readCost };
      const profile = customerId ? await this.directory.profile(scope, customerId) : null;
      const empty: CrossmatchData = {
        customer: null,
        revenue: { paying: false, monthlyCents: 0 },
        entitlements: { active: 0, keys: [] },
        readCost: { reads: null, windowDays: DEFAULT_DAYS },
      };
      if (!customerId || !profile) return { data: empty, coverage };
      const [{ monthlyMinor: monthly, paying }, active] = await Promise.all([
        this.ledger.revenueAmong(scope, [customerId]),
        this.entitlements.listActive(scope, customerId),
      ]);
      const keys = [...new Set(active.map((e) => e.key))].sort();
      const reads = readCost.state === 'measured' ? await this.readCosts.readsByActor(scope, profile.developerUserIds, DEFAULT_DAYS) : null;
      return {
        data: {
          customer: { serviceCustomerId: customerId, crossdeckCustomerId: customerId, userId: profile.developerUserIds[0] ?? null },
          revenue: { paying: paying.has(customerId), monthlyCents: monthly.get(customerId) ?? 0 },
          entitlements: { active: keys.length, keys },
          readCost: { reads: reads ? profile.developerUserIds.reduce((sum, id) => sum + (reads.get(id) ?? 0), 0) : null, windowDays: DEFAULT_DAYS },
        },
        coverage,
      };
    });
  }

  /** Customers by monthly revenue (paying first, then the rest when the segment takes them). */
  private async byRevenue(scope: TenantScope, limit: number, segment: Segment): Promise<Candidate[]> {
    const ids: string[] = [];
    if (segment !== 'non_paying') ids.push(...(await this.ledger.topCustomersByRevenue(scope, limit)).map((r) => r.customerId));
    if (segment !== 'paying' && ids.length < limit) ids.push(...(await this.census.nonPaying(scope, limit - ids.length)));
    return this.withUserIds(scope, ids);
  }

  /** Customers by reads over the window: the top actors (developer user ids) resolved to customers, filtered by segment. */
  private async byReadCost(scope: TenantScope, days: number, limit: number, segment: Segment): Promise<Candidate[]> {
    const actors = await this.readCosts.topActors(scope, days, segment === 'all' ? limit : limit * 4);
    const ids: string[] = [];
    for (const { actorId } of actors) {
      const customerId = await this.directory.findCustomerId(scope, { userId: actorId });
      if (customerId && !ids.includes(customerId)) ids.push(customerId);
    }
    const paying = segment === 'all' ? null : await this.ledger.payingAmong(scope, ids);
    const kept = paying ? ids.filter((id) => paying.has(id) === (segment === 'paying')) : ids;
    return this.withUserIds(scope, kept.slice(0, limit));
  }

  /** The candidates' developer user ids, in their order, with one statement for the whole page (not one per customer). */
  private async withUserIds(scope: TenantScope, customerIds: readonly string[]): Promise<Candidate[]> {
    const profiles = await this.directory.profiles(scope, customerIds);
    const out: Candidate[] = [];
    for (const customerId of customerIds) {
      const profile = profiles.get(customerId);
      if (profile) out.push({ customerId, userIds: profile.developerUserIds });
    }
    return out;
  }

  private resolve(scope: TenantScope, key: CrossmatchKey, value: string): Promise<string | null> {
    const railType = RAIL_NODE[key];
    if (railType) return this.directory.findCustomerIdByAlias(scope, railType, value);
    if (key === 'customerId') return this.directory.findCustomerId(scope, { customerId: value });
    if (key === 'userId') return this.directory.findCustomerId(scope, { userId: value });
    return this.directory.findCustomerId(scope, { anonymousId: value });
  }
}
