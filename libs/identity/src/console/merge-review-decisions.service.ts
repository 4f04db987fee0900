import { Injectable } from '@nestjs/common';
import { ApiError, Clock, TenantScopes, Sql } from '#platform';
import { ProjectDirectory } from '#keys';
import { AuditJournal } from '#audit';
import { MergeHooks } from './merge-hooks.js';
import { type LockedReview, MergeReviewDecisionsRepository } from './merge-review-decisions.repository.js';

export type ReviewDecision = 'approved' | 'dismissed';

/**
 * The operator's answer to a queued identify conflict. Approving performs the merge identify
 * held back: every alias node of the other customer (the anonymous id of the conflict
 * included) moves to the canonical customer, and the registered merge hooks move what other
 * contexts keep per customer. Dismissing leaves both customers as they are. Either way the
 * decision is final (a second one is 409) and journaled with the request id.
 */
@Injectable()
export class MergeReviewDecisions {
  constructor(
    private readonly sql: Sql,
    private readonly repository: MergeReviewDecisionsRepository,
    private readonly hooks: MergeHooks,
    private readonly journal: AuditJournal,
    private readonly projects: ProjectDirectory,
    private readonly clock: Clock,
  ) {}

  async decide(projectId: string, reviewId: string, decision: ReviewDecision, requestId: string): Promise<LockedReview & { auditEventId: string }> {
    await this.projects.assertExists(projectId);
    return this.sql.transaction(
      async () => {
        const review = await this.repository.lock(projectId, reviewId);
        if (!review) throw ApiError.resourceMissing(`No merge review ${reviewId} in this project`);
        if (review.status !== 'pending') throw ApiError.conflict('review_already_decided', `Merge review ${reviewId} was already ${review.status}`);
        const scope = TenantScopes.operator(projectId, review.env);
        const now = this.clock.now();
        let moved = 0;
        if (decision === 'approved') {
          const merge = { fromCustomerId: review.otherCustomerId, intoCustomerId: review.canonicalCustomerId };
          moved = await this.repository.moveAliases(scope, merge.fromCustomerId, merge.intoCustomerId);
          await this.hooks.runAll(scope, merge);
        }
        const decided = await this.repository.decide(scope, reviewId, decision, now, requestId);
        const { eventId } = await this.journal.append(scope, {
          eventIdPrefix: 'srv_merge_',
          rail: 'manual',
          eventType: decision === 'approved' ? 'identity.merge_approved' : 'identity.merge_dismissed',
          customerId: review.canonicalCustomerId,
          decision: decision === 'approved' ? 'applied' : 'no_op',
          reason: decision === 'approved' ? 'Operator approved the merge review' : 'Operator dismissed the merge review',
          actor: 'operator',
          requestId,
          details: { reviewId, otherCustomerId: review.otherCustomerId, aliasesMoved: moved },
        });
        if (decision === 'approved') {
          // The other customer's timeline shows where its ids went.
          await this.journal.append(scope, {
            eventIdPrefix: 'srv_merge_',
            rail: 'manual',
            eventType: 'identity.merged_into',
            customerId: review.otherCustomerId,
            decision: 'applied',
            reason: `Merged into ${review.canonicalCustomerId} (operator approved the merge review)`,
            actor: 'operator',
            requestId,
            details: { reviewId, intoCustomerId: review.canonicalCustomerId, aliasesMoved: moved },
          });
        }
        return { ...decided, auditEventId: eventId };
      },
      { retry: true },
    );
  }
}
