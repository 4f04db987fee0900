import { Injectable } from '@nestjs/common';
import { ApiError, type TenantScope } from '#platform';
import { CustomerDirectory } from '#identity';
import { assertCustomerIdFormat } from '#entitlements';
import { toSeconds } from '../lifecycle/lifecycle-outcome.js';
import { type HistoryPosition, SubscriptionHistoryRepository } from '../model/subscription-history.repository.js';
import type { HistoryList } from './subscription.view.js';

/** Entries per page unless `limit` says otherwise (1 to 100). */
export const HISTORY_DEFAULT_LIMIT = 20;
export const HISTORY_MAX_LIMIT = 100;
const HISTORY_ID = /^hist_[a-z0-9]{24}$/;

/**
 * The customer history read (server and operator): every lifecycle event of the customer's
 * subscriptions, newest first, a page at a time. `before` is the id of the last entry of the
 * previous page; the page holds the entries after it in the same order (older, or recorded
 * earlier at the same time). A merged customer's history holds the events of the customers
 * merged into it (a merge moves them).
 */
@Injectable()
export class SubscriptionHistory {
  constructor(
    private readonly customers: CustomerDirectory,
    private readonly history: SubscriptionHistoryRepository,
  ) {}

  async customerHistory(scope: TenantScope, customerId: string, page: { limit: number; before?: string }, unknown: () => Error): Promise<HistoryList> {
    assertCustomerIdFormat(customerId);
    if (!(await this.customers.isActiveCustomer(scope, customerId))) throw unknown();
    let position: HistoryPosition | null = null;
    if (page.before !== undefined) {
      if (!HISTORY_ID.test(page.before)) throw ApiError.invalidParam('before must be the id of an entry of this history (hist_…)');
      position = await this.history.position(scope, customerId, page.before);
      if (!position) throw ApiError.invalidParam(`before: no entry ${page.before} in the history of customer ${customerId}`);
    }
    const rows = await this.history.page(scope, customerId, position, page.limit + 1);
    return {
      object: 'list',
      data: rows.slice(0, page.limit).map((row) => ({
        id: row.id,
        type: row.type,
        occurredAt: toSeconds(row.occurredAtMs),
        rail: row.rail,
        subscriptionId: row.subscriptionId,
        productId: row.productId,
        auditEventId: row.auditEventId,
        railEventId: row.railEventId,
        details: row.details,
      })),
      hasMore: rows.length > page.limit,
    };
  }
}
