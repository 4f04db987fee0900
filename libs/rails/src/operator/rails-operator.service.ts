import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ApiError, Clock } from '#platform';
import { ProjectDirectory } from '#keys';
import type { IosStoreSettings } from '../ios/ios-store-settings.js';
import { parsePemCertificates } from '../ios/ios-store-settings.js';
import { type RailSettingsRecord, RailSettingsRepository } from '../model/rail-settings.repository.js';
import type { PutIosStoreRailDto, RailList, RailView } from './rails-operator.dto.js';
import { RailSecretsStatus } from './rail-secrets-status.js';

/** Operator: the non-secret rail settings of a project. */
@Injectable()
export class RailsOperatorService {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    private readonly clock: Clock,
    private readonly settings: RailSettingsRepository,
    private readonly projects: ProjectDirectory,
    private readonly secrets: RailSecretsStatus,
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
    };
    const saved = await this.dataSource.transaction(async (manager) => {
      await this.projects.assertExists(projectId, { manager });
      return this.settings.put({ projectId }, 'ios_store', settings, this.clock.now(), manager);
    });
    return this.view(projectId, saved);
  }

  async list(projectId: string): Promise<RailList> {
    await this.projects.assertExists(projectId, { manager: this.dataSource.manager });
    const rails = await this.settings.list({ projectId });
    return { object: 'list', data: rails.filter((rail) => rail.enabled).map((rail) => this.view(projectId, rail)) };
  }

  private view(projectId: string, rail: RailSettingsRecord): RailView {
    return { rail: rail.rail, enabled: rail.enabled, ...rail.settings, secretsConfigured: this.secrets.isConfigured(projectId, rail.rail) };
  }
}
