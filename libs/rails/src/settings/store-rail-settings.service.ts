import { Injectable } from '@nestjs/common';
import { Clock, Sql } from '#platform';
import { ProjectDirectory } from '#keys';
import type { PurchaseRail } from '../model/rail-model.js';
import { RailSettingsRepository } from '../model/rail-settings.repository.js';
import type { RailView } from '../operator/rails-operator.dto.js';
import { RailSecrets } from '../secrets/rail-secrets.service.js';

/** Operator configuration of the card-payment and Android rails (what is not secret). */
@Injectable()
export class StoreRailSettings {
  constructor(
    private readonly sql: Sql,
    private readonly settings: RailSettingsRepository,
    private readonly projects: ProjectDirectory,
    private readonly secrets: RailSecrets,
    private readonly clock: Clock,
  ) {}

  async put(projectId: string, rail: Exclude<PurchaseRail, 'ios_store'>, settings: Record<string, unknown>): Promise<RailView> {
    const record = await this.sql.transaction(async () => {
      await this.projects.assertExists(projectId, {});
      return this.settings.put({ projectId }, rail, settings, this.clock.now());
    });
    return { rail: record.rail, enabled: record.enabled, ...record.settings, secretsConfigured: this.secrets.isConfigured(projectId, record.rail) };
  }
}
