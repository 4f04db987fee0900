import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, type AppLogger, Clock } from '#platform';
import { ProjectsRepository } from '../domain/projects.repository.js';
import { originsToLearn } from '../domain/origin-allowlist.js';
import { KeyLookupService } from '../auth/key-lookup.service.js';

/** Onboarding rule: the first heartbeat of a web app with an empty allowlist teaches it its origin. */
@Injectable()
export class OriginLearningService {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly lookup: KeyLookupService,
    private readonly clock: Clock,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /** Returns the allowlist now in force, or undefined when nothing could be learned. */
  async learnFirstOrigin(appId: string, origin: string | undefined): Promise<string[] | undefined> {
    const origins = originsToLearn(origin);
    if (origins.length === 0) return undefined;
    const learned = await this.projects.learnOrigins(appId, origins, this.clock.now());
    this.lookup.invalidateAll();
    if (learned) {
      this.logger.info({ appId, origins }, 'allowlist learned from first heartbeat');
      return origins;
    }
    // Another request learned first: use whatever is stored now.
    return (await this.projects.findApp(appId))?.allowedOrigins;
  }
}
