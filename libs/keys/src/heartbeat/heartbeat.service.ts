import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { APP_LOGGER, type AppLogger, Clock, SdkVersionPolicy, parseSdkHeader } from '../../../platform/src/index.js';
import type { AuthContext } from '../auth/auth-context.js';
import { ProjectRateLimits } from '../rate-limits/project-rate-limits.service.js';
import type { HeartbeatView } from './heartbeat.view.js';

/** Client install check: per-app, per-surface liveness, best effort. */
@Injectable()
export class HeartbeatService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly rateLimits: ProjectRateLimits,
    private readonly versions: SdkVersionPolicy,
    private readonly clock: Clock,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  async beat(auth: AuthContext, sdkHeader: string | undefined): Promise<HeartbeatView> {
    await this.rateLimits.enforce(auth, 'heartbeat');
    await this.recordLiveness(auth, sdkHeader);
    return { object: 'heartbeat', ok: true, projectId: auth.projectId, appId: auth.appId, platform: auth.platform, env: auth.env, serverTime: this.clock.nowMs() };
  }

  /** The surface comes from Service-Sdk-Version, never from the key. A failure is logged, not returned. */
  private async recordLiveness(auth: AuthContext, sdkHeader: string | undefined): Promise<void> {
    const sdk = parseSdkHeader(sdkHeader);
    const surface = this.versions.surfaceOf(sdk) ?? 'unknown';
    try {
      const now = this.clock.now();
      await this.dataSource.query(
        `INSERT INTO sdk_liveness (project_id, env, app_id, surface, sdk_name, sdk_version, first_seen_at, last_seen_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
         ON CONFLICT (project_id, env, app_id, surface)
         DO UPDATE SET sdk_name = EXCLUDED.sdk_name, sdk_version = EXCLUDED.sdk_version, last_seen_at = EXCLUDED.last_seen_at`,
        [auth.projectId, auth.env, auth.appId, surface, sdk?.name?.slice(0, 128) ?? null, sdk?.version?.slice(0, 64) ?? null, now],
      );
    } catch (err) {
      this.logger.warn({ requestId: auth.requestId, err: { message: (err as Error).message } }, 'heartbeat liveness write failed');
    }
  }
}
