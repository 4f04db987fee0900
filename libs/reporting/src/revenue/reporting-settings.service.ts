import { Injectable } from '@nestjs/common';
import { Clock } from '#platform';
import { ProjectDirectory } from '#keys';
import { RevenueLedgerRepository } from './revenue-ledger.repository.js';
import type { ReportingSettingsView } from './revenue.dto.js';

/** The operator's reporting settings of a project (its reporting currency). */
@Injectable()
export class ReportingSettingsService {
  constructor(
    private readonly projects: ProjectDirectory,
    private readonly ledger: RevenueLedgerRepository,
    private readonly clock: Clock,
  ) {}

  async put(projectId: string, currency: string): Promise<ReportingSettingsView> {
    await this.projects.assertExists(projectId);
    await this.ledger.setReportingCurrency({ projectId }, currency, this.clock.now());
    return { object: 'reporting_settings', projectId, currency };
  }
}
