import { Injectable } from '@nestjs/common';
import { Sql } from '#platform';
import { type BlockKind, type TrustSettings, EMPTY_TRUST_SETTINGS } from './trust-rules.js';

/**
 * The trust gate's settings (`trust_settings`, `trust_blocks`). Project settings, not tenant
 * data: they hold for both environments, so methods take the project id.
 */
@Injectable()
export class TrustSettingsRepository {
  constructor(private readonly sql: Sql) {}

  async projectExists(projectId: string): Promise<boolean> {
    return (await this.sql.one(`SELECT 1 FROM projects WHERE id = $1`, [projectId])) !== null;
  }

  /** The settings' version (0 when the project has none stored). */
  async version(projectId: string): Promise<number> {
    const row = await this.sql.one<{ version: string }>(`SELECT version FROM trust_settings WHERE project_id = $1`, [projectId]);
    return row ? Number(row.version) : 0;
  }

  async load(projectId: string): Promise<TrustSettings> {
    const [settings, blocks] = await Promise.all([
      this.sql.one<{ support_email: string | null; review_email_domains: string[] }>(
        `SELECT support_email, review_email_domains FROM trust_settings WHERE project_id = $1`,
        [projectId],
      ),
      this.sql.rows<{ kind: BlockKind; value: string; reason: string }>(
        `SELECT kind, value, reason FROM trust_blocks WHERE project_id = $1 ORDER BY kind, value`,
        [projectId],
      ),
    ]);
    if (!settings && blocks.length === 0) return EMPTY_TRUST_SETTINGS;
    return {
      supportEmail: settings?.support_email ?? null,
      blocks: blocks.map((b) => ({ kind: b.kind, value: b.value, reason: b.reason })),
      review: { emailDomains: settings?.review_email_domains ?? [] },
    };
  }

  /** Replaces the project's whole settings in one transaction (serialised per project). */
  async replace(projectId: string, settings: TrustSettings, at: Date): Promise<void> {
    await this.sql.transaction(async () => {
      await this.sql.run(`SELECT 1 FROM projects WHERE id = $1 FOR NO KEY UPDATE`, [projectId]);
      await this.sql.run(
        `INSERT INTO trust_settings (project_id, support_email, review_email_domains, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (project_id) DO UPDATE SET support_email = EXCLUDED.support_email,
           review_email_domains = EXCLUDED.review_email_domains, updated_at = EXCLUDED.updated_at,
           version = trust_settings.version + 1`,
        [projectId, settings.supportEmail, settings.review.emailDomains, at],
      );
      await this.sql.run(`DELETE FROM trust_blocks WHERE project_id = $1`, [projectId]);
      if (settings.blocks.length > 0) {
        await this.sql.run(
          `INSERT INTO trust_blocks (project_id, kind, value, reason, created_at)
           SELECT $1, kind, value, reason, $5 FROM unnest($2::text[], $3::text[], $4::text[]) AS b(kind, value, reason)`,
          [projectId, settings.blocks.map((b) => b.kind), settings.blocks.map((b) => b.value), settings.blocks.map((b) => b.reason), at],
        );
      }
    });
  }
}
