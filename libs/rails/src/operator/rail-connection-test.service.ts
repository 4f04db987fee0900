import { Injectable } from '@nestjs/common';
import { ApiError, Clock, type Env } from '#platform';
import { ProjectDirectory } from '#keys';
import { PURCHASE_RAILS } from '#entitlements';
import { AndroidPublisherClient, AndroidPublisherUnavailable } from '../android/android-publisher.client.js';
import type { IosStoreSettings } from '../ios/ios-store-settings.js';
import type { PurchaseRail } from '../model/rail-model.js';
import { RailSettingsRepository } from '../model/rail-settings.repository.js';
import { AppStoreServerApiClient } from '../reading/app-store-server-api.client.js';
import { CardPaymentsApiClient } from '../reading/card-payments-api.client.js';
import { RailReadUnavailable } from '../reading/rail-read-errors.js';
import { RailSecrets } from '../secrets/rail-secrets.service.js';
import { type RailConnectionCheck, RailConnectionChecksRepository } from './rail-connection-checks.repository.js';

/** Ids no store holds: a "not found" answer proves the credentials were accepted. */
export const CONNECTION_TEST_IDS = { card: 'cus_connection_test', ios: '0', android: 'connection-test-token' } as const;

class NotConfigured extends Error {}

/**
 * "Test connection": one harmless authenticated read with the rail's credentials through the
 * same official library the service reads purchases with, for an id no store holds, so that
 * "not found" means the store accepted the credentials. The outcome is stored (last worked).
 */
@Injectable()
export class RailConnectionTest {
  constructor(
    private readonly clock: Clock,
    private readonly projects: ProjectDirectory,
    private readonly secrets: RailSecrets,
    private readonly settings: RailSettingsRepository,
    private readonly checks: RailConnectionChecksRepository,
    private readonly card: CardPaymentsApiClient,
    private readonly appStore: AppStoreServerApiClient,
    private readonly publisher: AndroidPublisherClient,
  ) {}

  async test(projectId: string, env: Env, rawRail: string): Promise<RailConnectionCheck> {
    if (!(PURCHASE_RAILS as readonly string[]).includes(rawRail)) throw ApiError.invalidParam(`rail must be one of ${PURCHASE_RAILS.join(', ')}`);
    const rail = rawRail as PurchaseRail;
    await this.projects.assertExists(projectId);
    let ok = true;
    let message: string;
    try {
      message = await this.read(projectId, rail);
    } catch (err) {
      ok = false;
      message =
        err instanceof NotConfigured || err instanceof RailReadUnavailable || err instanceof AndroidPublisherUnavailable
          ? err.message
          : 'the read failed (unexpected error)';
    }
    return this.checks.record({ projectId }, { rail, env, checkedAtMs: this.clock.nowMs(), ok, message });
  }

  private async read(projectId: string, rail: PurchaseRail): Promise<string> {
    switch (rail) {
      case 'card_payments': {
        const apiKey = this.secrets.cardPayments(projectId)?.apiKey;
        if (!apiKey) throw new NotConfigured('no card_payments.apiKey in the rail secrets file');
        await this.card.customerSubscriptions(apiKey, CONNECTION_TEST_IDS.card);
        return 'the card processor accepted the API key (customers.retrieve)';
      }
      case 'ios_store': {
        const secrets = this.secrets.iosStore(projectId);
        if (!secrets) throw new NotConfigured('no ios_store API key (issuerId, keyId, privateKey) in the rail secrets file');
        const settings = await this.settings.find<IosStoreSettings>({ projectId }, 'ios_store');
        if (!settings?.enabled || !settings.settings.bundleId) throw new NotConfigured('the iOS rail has no bundle id: save its settings first');
        await this.appStore.allSubscriptionStatuses(secrets, settings.settings.bundleId, CONNECTION_TEST_IDS.ios);
        return 'the App Store Server API accepted the API key (Get All Subscription Statuses)';
      }
      case 'android_store': {
        const account = this.secrets.androidStore(projectId)?.serviceAccount;
        if (!account) throw new NotConfigured('no android_store.serviceAccount in the rail secrets file');
        const settings = await this.settings.find<{ packageName?: string }>({ projectId }, 'android_store');
        const packageName = settings?.enabled ? settings.settings.packageName : undefined;
        if (!packageName) throw new NotConfigured('the Android rail has no package name: save its settings first');
        try {
          await this.publisher.getSubscription(account, packageName, CONNECTION_TEST_IDS.android);
        } catch (err) {
          // The token endpoint issued a token and the API looked the purchase up: the account works.
          if (!(err instanceof AndroidPublisherUnavailable && (err.status === 404 || err.status === 410))) throw err;
        }
        return 'the Android Publisher API accepted the service account (purchases.subscriptionsv2.get)';
      }
    }
  }
}
