import { Injectable } from '@nestjs/common';
import { type TenantScope, Sql } from '#platform';

/** What one client install reported about itself. */
export interface LivenessBeat {
  appId: string;
  surface: string;
  sdkName: string | null;
  sdkVersion: string | null;
}

/** Per-app, per-surface liveness (`sdk_liveness`). */
@Injectable()
export class SdkLivenessRepository {
  constructor(private readonly sql: Sql) {}

  /** First sight inserts; later beats move `last_seen_at` and the reported SDK. */
  async record(scope: TenantScope, beat: LivenessBeat, at: Date): Promise<void> {
    await this.sql.run(
      `INSERT INTO sdk_liveness (project_id, env, app_id, surface, sdk_name, sdk_version, first_seen_at, last_seen_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
       ON CONFLICT (project_id, env, app_id, surface)
       DO UPDATE SET sdk_name = EXCLUDED.sdk_name, sdk_version = EXCLUDED.sdk_version, last_seen_at = EXCLUDED.last_seen_at`,
      [scope.projectId, scope.env, beat.appId, beat.surface, beat.sdkName, beat.sdkVersion, at],
    );
  }
}
