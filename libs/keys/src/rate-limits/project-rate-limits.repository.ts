import { Injectable } from '@nestjs/common';
import { type BucketName, type BucketRule, Sql } from '#platform';

export interface RateLimitOverride extends BucketRule {
  bucket: BucketName;
}

/**
 * A project's rate-limit overrides (`project_rate_limits`). Project settings, not tenant data:
 * they hold for both environments, so methods take the project id.
 */
@Injectable()
export class ProjectRateLimitsRepository {
  constructor(private readonly sql: Sql) {}

  async overrides(projectId: string): Promise<RateLimitOverride[]> {
    const rows = await this.sql.rows<{ bucket: BucketName; sustained: number; burst: number }>(
      `SELECT bucket, sustained, burst FROM project_rate_limits WHERE project_id = $1`,
      [projectId],
    );
    return rows.map((row) => ({ bucket: row.bucket, sustained: Number(row.sustained), burst: Number(row.burst) }));
  }

  /** Replaces the project's whole set in one transaction. */
  async replace(projectId: string, overrides: RateLimitOverride[], at: Date): Promise<void> {
    await this.sql.transaction(async () => {
      // Serialises concurrent replacements of one project's set: without it, two PUTs both
      // delete, then the second insert hits the primary key (23505, a 500).
      await this.sql.run(`SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE`, [projectId]);
      await this.sql.run(`DELETE FROM project_rate_limits WHERE project_id = $1`, [projectId]);
      for (const rule of overrides) {
        await this.sql.run(`INSERT INTO project_rate_limits (project_id, bucket, sustained, burst, updated_at) VALUES ($1, $2, $3, $4, $5)`, [
          projectId,
          rule.bucket,
          rule.sustained,
          rule.burst,
          at,
        ]);
      }
    });
  }
}
