import { Injectable } from '@nestjs/common';
import type { PurchaseRail } from '../model/rail-model.js';

/**
 * Whether RAIL_SECRETS_FILE holds secrets for a project's rail (`secretsConfigured` of the
 * rail list). The secrets file reader (store-notification work) replaces this answer; until
 * then no rail has secrets.
 */
@Injectable()
export class RailSecretsStatus {
  isConfigured(_projectId: string, _rail: PurchaseRail): boolean {
    return false;
  }
}
