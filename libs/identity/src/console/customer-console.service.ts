import { Injectable } from '@nestjs/common';
import type { TenantScope } from '#platform';
import { ALIAS_TYPES, PERSONAL_ALIAS_TYPES } from '../domain/identifier-rules.js';
import { CUSTOMER_ID_PREFIX } from '../domain/ids.js';
import { type AliasRow, type CustomerSummaryRow, CustomerReadsRepository } from './customer-reads.repository.js';

export type CustomerMatch = 'user_id' | 'anonymous_id' | 'customer_id' | 'email' | 'rail_id';

export interface CustomerSearchHit {
  customerId: string;
  userId: string | null;
  anonymousIds: string[];
  email: string | null;
  createdAt: Date;
  matchedBy: CustomerMatch;
}

export interface CustomerIdentities {
  customerId: string;
  createdAt: Date;
  forgottenAt: Date | null;
  email: string | null;
  firstName: string | null;
  /** Every stored trait but email and firstName (kept in their own columns). */
  traits: Record<string, string | number | boolean | null>;
  userId: string | null;
  anonymousIds: string[];
  aliases: AliasRow[];
  merges: {
    id: string;
    otherCustomerId: string;
    role: 'canonical' | 'other';
    developerUserId: string | null;
    anonymousId: string | null;
    status: string;
    createdAt: Date;
  }[];
  erasure: { status: 'queued' | 'deleted'; queuedAt: Date; deletedAt: Date | null } | null;
}

const ALIASES_PER_PAGE = 200;
const MERGES_PER_PAGE = 50;
const SEARCH_ALIASES_PER_CUSTOMER = 20;

/**
 * Identity's reads for the operator console: exact-match customer search over its ids, email
 * and the rail ids in the alias graph, and one customer's identities. Forgotten customers are
 * found too (the console shows their erasure status).
 */
@Injectable()
export class CustomerConsole {
  constructor(private readonly reads: CustomerReadsRepository) {}

  /** `railAliasTypes`: the alias node types the rails write (their ids are searchable). */
  async search(scope: TenantScope, q: string, railAliasTypes: readonly string[], limit: number): Promise<CustomerSearchHit[]> {
    const matched = new Map<string, CustomerMatch>();
    const note = (customerId: string, how: CustomerMatch) => {
      if (!matched.has(customerId)) matched.set(customerId, how);
    };
    if (q.startsWith(CUSTOMER_ID_PREFIX)) for (const c of await this.reads.customersById(scope, [q])) note(c.id, 'customer_id');
    const types = [ALIAS_TYPES.developer, ALIAS_TYPES.anonymous, ...railAliasTypes];
    for (const hit of await this.reads.aliasesByValue(scope, types, q, limit)) {
      note(hit.customerId, hit.type === ALIAS_TYPES.developer ? 'user_id' : hit.type === ALIAS_TYPES.anonymous ? 'anonymous_id' : 'rail_id');
    }
    if (q.includes('@')) for (const c of await this.reads.customersByEmail(scope, q, limit)) note(c.id, 'email');
    const ids = [...matched.keys()].slice(0, limit);
    const [customers, aliases] = await Promise.all([
      this.reads.customersById(scope, ids),
      this.reads.aliasesOf(scope, ids, PERSONAL_ALIAS_TYPES, ids.length * SEARCH_ALIASES_PER_CUSTOMER),
    ]);
    const byId = new Map<string, CustomerSummaryRow>(customers.map((c) => [c.id, c]));
    return ids.flatMap((id) => {
      const customer = byId.get(id);
      if (!customer) return [];
      const own = aliases.filter((a) => a.customerId === id);
      return [
        {
          customerId: id,
          userId: lastOfType(own, ALIAS_TYPES.developer),
          anonymousIds: own.filter((a) => a.type === ALIAS_TYPES.anonymous).map((a) => a.value),
          email: customer.email,
          createdAt: customer.createdAt,
          matchedBy: matched.get(id)!,
        },
      ];
    });
  }

  /** The customer's identities, traits, merges and erasure status; null when the scope has no such customer. */
  async identities(scope: TenantScope, customerId: string): Promise<CustomerIdentities | null> {
    if (!customerId.startsWith(CUSTOMER_ID_PREFIX)) return null;
    const [customer] = await this.reads.customersById(scope, [customerId]);
    if (!customer) return null;
    const [aliases, merges, erasure] = await Promise.all([
      this.reads.aliasesOf(scope, [customerId], null, ALIASES_PER_PAGE),
      this.reads.mergesOf(scope, customerId, MERGES_PER_PAGE),
      this.reads.erasureStatus(scope, customerId),
    ]);
    return {
      customerId,
      createdAt: customer.createdAt,
      forgottenAt: customer.forgottenAt,
      email: customer.email,
      firstName: customer.firstName,
      traits: customer.traits ?? {},
      userId: lastOfType(aliases, ALIAS_TYPES.developer),
      anonymousIds: aliases.filter((a) => a.type === ALIAS_TYPES.anonymous).map((a) => a.value),
      aliases,
      merges: merges.map((m) => ({
        id: m.id,
        role: m.canonicalCustomerId === customerId ? 'canonical' : 'other',
        otherCustomerId: m.canonicalCustomerId === customerId ? m.otherCustomerId : m.canonicalCustomerId,
        developerUserId: m.developerUserId,
        anonymousId: m.anonymousId,
        status: m.status,
        createdAt: m.createdAt,
      })),
      erasure,
    };
  }
}

function lastOfType(aliases: readonly AliasRow[], type: string): string | null {
  const values = aliases.filter((a) => a.type === type);
  return values.length ? values[values.length - 1]!.value : null;
}
