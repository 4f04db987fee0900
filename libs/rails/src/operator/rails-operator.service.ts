import { Injectable } from '@nestjs/common';
import { ApiError, Clock, type Env, Sql } from '#platform';
import { ProjectDirectory } from '#keys';
import type { IosStoreSettings } from '../ios/ios-store-settings.js';
import { parsePemCertificates } from '../ios/ios-store-settings.js';
import { type RailSettingsRecord, RailSettingsRepository } from '../model/rail-settings.repository.js';
import type { PutIosStoreRailDto, RailList, RailView } from './rails-operator.dto.js';
import { RailSecretsStatus } from './rail-secrets-status.js';
import { RailsConsole } from './rails-console.service.js';
import { consumptionSettingsOf } from '../refunds/consumption.js';

/** Operator: the non-secret rail settings of a project. */
@Injectable()
export class RailsOperatorService {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly settings: RailSettingsRepository,
    private readonly projects: ProjectDirectory,
    private readonly secrets: RailSecretsStatus,
    private readonly console: RailsConsole,
  ) {}

  async putIosStore(projectId: string, dto: PutIosStoreRailDto): Promise<RailView> {
    const roots = dto.trustedRootCertificates;
    roots?.forEach((pem, index) => {
      try {
        parsePemCertificates(pem);
      } catch (err) {
        throw ApiError.invalidParam(`trustedRootCertificates[${index}]: ${(err as Error).message}`);
      }
    });
    const settings: IosStoreSettings = {
      bundleId: dto.bundleId,
      ...(dto.appAppleId !== undefined ? { appAppleId: dto.appAppleId } : {}),
      ...(roots && roots.length > 0 ? { trustedRootCertificates: roots } : {}),
      consumption: consumptionSettingsOf({ consumption: dto.consumption }),
    };
    const saved = await this.sql.transaction(async () => {
      await this.projects.assertExists(projectId, {});
      return this.settings.put({ projectId }, 'ios_store', settings, this.clock.now());
    });
    return this.view(projectId, saved);
  }

  /** The configured rails (data) and, additively, every rail's console panel for `env` (rails). */
  async list(projectId: string, env: Env, baseUrl: string): Promise<RailList> {
    await this.projects.assertExists(projectId, {});
    const [rails, panels] = await Promise.all([this.settings.list({ projectId }), this.console.panels(projectId, env, baseUrl)]);
    return { object: 'list', data: rails.filter((rail) => rail.enabled).map((rail) => this.view(projectId, rail)), env, rails: panels };
  }

  private view(projectId: string, rail: RailSettingsRecord): RailView {
    const consumption = rail.rail === 'ios_store' ? { consumption: consumptionSettingsOf(rail.settings) } : {};
    return { rail: rail.rail, enabled: rail.enabled, ...rail.settings, ...consumption, secretsConfigured: this.secrets.isConfigured(projectId, rail.rail) };
  }
}
