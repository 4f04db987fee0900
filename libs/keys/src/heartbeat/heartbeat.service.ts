import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, type AppLogger, Clock, SdkVersionPolicy, parseSdkHeader } from '#platform';
import type { AuthContext } from '../auth/auth-context.js';
import type { HeartbeatView } from './heartbeat.view.js';
import { SdkLivenessRepository } from './sdk-liveness.repository.js';

/** Client install check: per-app, per-surface liveness, best effort. */
@Injectable()
export class HeartbeatService {
  constructor(
    private readonly liveness: SdkLivenessRepository,
    private readonly versions: SdkVersionPolicy,
    private readonly clock: Clock,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  async beat(auth: AuthContext, sdkHeader: string | undefined): Promise<HeartbeatView> {
    await this.recordLiveness(auth, sdkHeader);
    return {
      object: 'heartbeat',
      ok: true,
      projectId: auth.projectId,
      appId: auth.appId,
      platform: auth.platform,
      env: auth.env,
      serverTime: this.clock.nowMs(),
    };
  }

  /** The surface comes from the client-version header (Service-Sdk-Version or Crossdeck-Sdk-Version), never from the key. A failure is logged, not returned. */
  private async recordLiveness(auth: AuthContext, sdkHeader: string | undefined): Promise<void> {
    const sdk = parseSdkHeader(sdkHeader);
    const surface = this.versions.surfaceOf(sdk) ?? 'unknown';
    try {
      const now = this.clock.now();
      await this.liveness.record(
        auth,
        { appId: auth.appId, surface, sdkName: sdk?.name?.slice(0, 128) ?? null, sdkVersion: sdk?.version?.slice(0, 64) ?? null },
        now,
      );
    } catch (err) {
      this.logger.warn({ requestId: auth.requestId, err: { message: (err as Error).message } }, 'heartbeat liveness write failed');
    }
  }
}
