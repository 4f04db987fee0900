import { Injectable } from '@nestjs/common';
import { type Env, type TenantScope, Sql } from '#platform';

export interface LockedReview {
  id: string;
  env: Env;
  developerUserId: string | null;
  anonymousId: string | null;
  canonicalCustomerId: string;
  otherCustomerId: string;
  status: 'pending' | 'approved' | 'dismissed';
  createdAt: Date;
  decidedAt: Date | null;
}

const REVIEW_COLUMNS = `id, env, developer_user_id AS "developerUserId", anonymous_id AS "anonymousId",
  canonical_customer_id AS "canonicalCustomerId", other_customer_id AS "otherCustomerId", status,
  created_at AS "createdAt", decided_at AS "decidedAt"`;

/** Decisions on merge reviews and the alias moves an approval makes, in the caller's transaction. */
@Injectable()
export class MergeReviewDecisionsRepository {
  constructor(private readonly sql: Sql) {}

  /** The project's review (either environment: the id is the operator's handle), locked until the transaction ends. */
  async lock(projectId: string, reviewId: string): Promise<LockedReview | null> {
    return this.sql.one<LockedReview>(`SELECT ${REVIEW_COLUMNS} FROM merge_reviews WHERE project_id = $1 AND id = $2 FOR UPDATE`, [projectId, reviewId]);
  }

  async decide(scope: TenantScope, reviewId: string, status: 'approved' | 'dismissed', at: Date, requestId: string): Promise<LockedReview> {
    const row = await this.sql.one<LockedReview>(
      `UPDATE merge_reviews SET status = $4, decided_at = $5, decided_request_id = $6
        WHERE project_id = $1 AND env = $2 AND id = $3 AND status = 'pending' RETURNING ${REVIEW_COLUMNS}`,
      [scope.projectId, scope.env, reviewId, status, at, requestId],
    );
    if (!row) throw new Error(`merge review ${reviewId} was not pending under its lock`);
    return row;
  }

  /** Moves every alias node of one customer to another (a node is unique in the scope, so none is held by both). */
  async moveAliases(scope: TenantScope, fromCustomerId: string, toCustomerId: string): Promise<number> {
    return this.sql.affected(`UPDATE customer_aliases SET customer_id = $4 WHERE project_id = $1 AND env = $2 AND customer_id = $3`, [
      scope.projectId,
      scope.env,
      fromCustomerId,
      toCustomerId,
    ]);
  }
}
