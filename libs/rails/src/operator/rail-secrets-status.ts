import { Injectable } from '@nestjs/common';
import type { PurchaseRail } from '../model/rail-model.js';

/**
 * The webhook secret verifies the store's notifications (card: signing secrets; Android: the
 * push token; iOS notifications are signed by the store, so none); the read secret calls the
 * store's API (iOS: the API key; Android: the service account; card: the API key).
 */
export interface RailSecretKinds {
  webhook: boolean | null;
  read: boolean | null;
}

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

  /** Which of the rail's secrets the file holds (booleans only; null: the rail needs no such secret). */
  secretKinds(_projectId: string, _rail: PurchaseRail): RailSecretKinds {
    return { webhook: null, read: null };
  }
}
