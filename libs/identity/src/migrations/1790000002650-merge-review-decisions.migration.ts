import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The operator approves or dismisses a queued identify conflict: the review keeps its row with
 * the decision, when it was made and the request that made it. A decided review has both.
 */
export class MergeReviewDecisions1790000002650 implements MigrationInterface {
  name = 'MergeReviewDecisions1790000002650';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merge_reviews DROP CONSTRAINT merge_reviews_status_ck`);
    await q.query(`ALTER TABLE merge_reviews ADD CONSTRAINT merge_reviews_status_ck CHECK (status IN ('pending', 'approved', 'dismissed'))`);
    await q.query(`ALTER TABLE merge_reviews ADD COLUMN decided_at timestamptz NULL, ADD COLUMN decided_request_id text NULL`);
    await q.query(`ALTER TABLE merge_reviews ADD CONSTRAINT merge_reviews_decided_ck CHECK ((status = 'pending') = (decided_at IS NULL))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merge_reviews DROP CONSTRAINT merge_reviews_decided_ck`);
    await q.query(`ALTER TABLE merge_reviews DROP COLUMN decided_request_id, DROP COLUMN decided_at`);
    await q.query(`DELETE FROM merge_reviews WHERE status <> 'pending'`);
    await q.query(`ALTER TABLE merge_reviews DROP CONSTRAINT merge_reviews_status_ck`);
    await q.query(`ALTER TABLE merge_reviews ADD CONSTRAINT merge_reviews_status_ck CHECK (status IN ('pending'))`);
  }
}
