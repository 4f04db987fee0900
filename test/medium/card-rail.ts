import Stripe from 'stripe';
import type { TenantScope } from '#platform';
import { type AuditEntryData, AuditJournal } from '#audit';
import { EntitlementHistory, EntitlementReadService, type PublicEntitlement } from '#entitlements';
import { IdentifyService } from '#identity';
import { RailSecrets, StoreNotificationsModule } from '#rails';
import { CardWebhookService } from '../../libs/rails/src/card/card-webhook.service.js';
import type { RailNotificationView } from '../../libs/rails/src/notifications/rail-notification.view.js';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { createMediumContext, unique, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';
import { cardEventBuilders } from '../support/card-events.js';

const SECRET = 'whsec_medium_0123456789abcdefghijkl';

/**
 * The card-payments rail on the store-notifications module alone, over the test database: a
 * project with its webhook secret (a temporary RAIL_SECRETS_FILE) and catalogue, and events
 * signed as the processor signs them, handed to the card notification entry (no HTTP, no gate).
 */
export async function cardRail() {
  const file = new RailSecretsFile();
  let m: MediumContext;
  try {
    m = await createMediumContext({ modules: [StoreNotificationsModule], env: { RAIL_SECRETS_FILE: file.path } });
  } catch (err) {
    file.remove();
    throw err;
  }
  const projectId = await m.newProject();
  const sandbox = testScope(projectId, 'sandbox');
  file.write({ projects: { [projectId]: { card_payments: { webhookSecrets: [SECRET] } } } });
  m.get(RailSecrets).reloadIfChanged();
  await m.newCatalogue(sandbox, [
    { rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro', 'cloud_sync'] },
    { rail: 'card_payments', productId: 'prod_basic', entitlementKeys: ['basic'] },
    { rail: 'card_payments', productId: 'prod_team', entitlementKeys: ['pro', 'team'] },
  ]);
  const card = m.get(CardWebhookService);
  const now = () => m.clock.nowSeconds();

  const { subscription, event } = cardEventBuilders(now, unique);
  /** A delivery of the signed event, as the webhook route hands it over once its gate let it through. */
  const send = (body: unknown): Promise<RailNotificationView> => {
    const payload = JSON.stringify(body);
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: now() });
    return card.receive(projectId, Buffer.from(payload), header, unique('req_medium'));
  };
  const entitlements = (customerId: string, scope: TenantScope = sandbox): Promise<PublicEntitlement[]> =>
    m.get(EntitlementReadService).listActive(scope, customerId);
  const activeKeys = async (customerId: string, scope: TenantScope = sandbox): Promise<string[]> =>
    (await entitlements(customerId, scope))
      .filter((e) => e.isActive)
      .map((e) => e.key)
      .sort();
  const audit = (eventId: string, scope: TenantScope = sandbox): Promise<AuditEntryData | null> => m.get(AuditJournal).find(scope, eventId);
  /** The state of each card entitlement row of the customer, ended ones included (the entitlements read leaves those out). */
  const states = async (customerId: string, scope: TenantScope = sandbox): Promise<Record<string, string>> =>
    Object.fromEntries(
      (await m.get(EntitlementHistory).of(scope, customerId)).filter((row) => row.rail === 'card_payments').map((row) => [row.key, row.state]),
    );
  /** Identify of a developer user id from a new device: answers its customer. */
  const identify = async (userId: string): Promise<string> =>
    (await m.get(IdentifyService).identify(m.newAuth(sandbox), { userId, anonymousId: unique('anon') } as Parameters<IdentifyService['identify']>[1]))
      .serviceCustomerId;
  const close = async () => {
    try {
      await m.close();
    } finally {
      file.remove();
    }
  };
  return { m, projectId, sandbox, now, subscription, event, send, entitlements, activeKeys, audit, states, identify, close };
}

export type CardRail = Awaited<ReturnType<typeof cardRail>>;
