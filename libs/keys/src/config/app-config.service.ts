import { Injectable } from '@nestjs/common';
import { ApiError, Clock, type SdkSurface, SdkVersionPolicy } from '#platform';
import type { AppPlatform, AuthContext } from '../auth/auth-context.js';
import { ProjectsRepository } from '../domain/projects.repository.js';
import type { AppConfigView } from './app-config.view.js';

const SURFACE_OF_PLATFORM: Record<AppPlatform, SdkSurface> = { web: 'web', ios: 'swift', android: 'android' };

/** What GET /v1/config returns: the app's settings as the operator last set them. */
@Injectable()
export class AppConfigService {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly versions: SdkVersionPolicy,
    private readonly clock: Clock,
  ) {}

  async configFor(auth: AuthContext): Promise<AppConfigView> {
    const app = await this.projects.findApp(auth.appId);
    if (!app) throw ApiError.authentication('invalid_api_key', 'Invalid API key');
    return {
      object: 'config',
      env: auth.env,
      projectId: app.projectId,
      appId: app.id,
      platform: app.platform,
      allowedOrigins: app.allowedOrigins,
      sdk: {
        // Without an app-level floor, the manifest's floor for the app's surface applies.
        minVersion: app.sdkMinVersion ?? this.versions.manifest[SURFACE_OF_PLATFORM[app.platform]].minSupported,
        deprecatedVersions: app.sdkDeprecatedVersions,
      },
      verifierConfig: {
        logVerifierResults: app.verifierConfig.logVerifierResults ?? null,
        verifyContractsAtBoot: app.verifierConfig.verifyContractsAtBoot ?? null,
      },
      errorNoiseDenyList: app.errorNoiseDenyList,
      serverTime: this.clock.nowMs(),
    };
  }
}
