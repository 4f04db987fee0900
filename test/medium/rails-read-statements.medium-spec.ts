import Stripe from 'stripe';
import { AuditJournal } from '#audit';
import { RailReader, RailSecrets } from '#rails';
import { CardWebhookService } from '../../libs/rails/src/card/card-webhook.service.js';
import { RailSubscriptionsRepository } from '../../libs/rails/src/model/rail-subscriptions.repository.js';
import { cardEventBuilders } from '../support/card-events.js';
import { CardProcessorStandIn } from '../support/card-processor-standin.js';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { createMediumContext, unique, type MediumContext } from '../support/medium.js';
import { statementRecorder } from '../support/statement-recorder.js';
import { testScope } from '../support/scopes.js';

const SECRET = 'whsec_medium_statements_0123456789';
const API_KEY = 'sk_test_medium_statements';
const DAY = 86_400;

/**
 * Statements one read of the card rail issues (the whole application: revenue ledger and
 * outbound webhooks attached), so that the apply path of the reads at expiry cannot grow
 * silently. A renewal read: its transaction (begin, the card customer's holder, the
 * subscription's lock, the catalogue, the locked record with its customer's lock, the record
 * with the customer's records, the revenue ledger's locked row moving the period end (a renewal
 * changes no customer row or total), the entitlement rows, the audit entry, commit), and at most
 * one endpoint-presence check of the outbound webhooks (cached 100 ms). A read that finds
 * the stored state stops at the locked record and rolls back, having written nothing.
 */
describe('medium: statements of one card read', () => {
  let m: MediumContext;
  let file: RailSecretsFile;
  const processor = new CardProcessorStandIn(API_KEY);
  let projectId: string;
  const recorder = statementRecorder();
  const statements = recorder.statements;

  beforeAll(async () => {
    await processor.start();
    file = new RailSecretsFile();
    m = await createMediumContext({ env: { RAIL_SECRETS_FILE: file.path, CARD_PAYMENTS_API_BASE_URL: processor.baseUrl } });
    projectId = await m.newProject();
    file.write({ projects: { [projectId]: { card_payments: { webhookSecrets: [SECRET], apiKey: API_KEY } } } });
    m.get(RailSecrets).reloadIfChanged();
    // Two keys of one product: their rows are written in one statement.
    await m.newCatalogue(testScope(projectId, 'sandbox'), [{ rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro', 'cloud_sync'] }]);
    recorder.install();
  });
  afterAll(async () => {
    recorder.restore();
    await m?.close();
    file?.remove();
    await processor.stop();
  });

  const scope = () => testScope(projectId, 'sandbox');
  const now = () => m.clock.nowSeconds();

  /** A card subscription made through a signed notification, ending in a minute; answers its id and customer. */
  async function subscribed(): Promise<{ id: string; customer: string; customerId: string }> {
    const { subscription, event } = cardEventBuilders(now, unique);
    const sub = subscription({ periodEnd: now() + 60 });
    const payload = JSON.stringify(event('customer.subscription.created', sub));
    const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: now() });
    const view = await m.get(CardWebhookService).receive(projectId, Buffer.from(payload), header, unique('req_medium'));
    expect(view.decision).toBe('applied');
    return { id: sub.id, customer: sub.customer, customerId: view.serviceCustomerId! };
  }

  /** Reads the subscription from the processor as the reads at expiry do, recording every statement of the read. */
  async function read(id: string) {
    return recorder.during(() => m.get(RailReader).readRailId(scope(), 'card_payments', id, 'expiry'));
  }

  /** The statements when there are more than `most` (a failure names them), else `within`. */
  const atMost = (most: number) => (statements.length <= most ? 'within' : statements.map((s) => s.text.slice(0, 120)));
  const repeated = () => {
    const seen = statements.map((s) => JSON.stringify([s.text, s.params]));
    return seen.filter((key, index) => seen.indexOf(key) !== index);
  };
  const writes = () => statements.filter((s) => /^(INSERT|UPDATE|DELETE)\b/i.test(s.text)).map((s) => s.text.slice(0, 60));

  it('a renewal read issues at most 11 statements, none twice, and applies the renewal with its audit entry', async () => {
    // A first read fills the per-project caches (read rates) the reads share.
    const warm = await subscribed();
    processor.subscription(warm.id, warm.customer, { productId: 'prod_pro', periodEnd: now() + 30 * DAY, livemode: false });
    expect((await read(warm.id)).decision).toBe('applied');

    const sub = await subscribed();
    const renewedEnd = now() + 30 * DAY;
    processor.subscription(sub.id, sub.customer, { productId: 'prod_pro', periodEnd: renewedEnd, livemode: false });
    const result = await read(sub.id);
    expect(result).toMatchObject({ found: 'live', decision: 'applied' });
    expect(atMost(11)).toBe('within');
    expect(repeated()).toEqual([]);
    expect(statements.filter((s) => s.text.includes('pg_advisory_xact_lock'))).toHaveLength(2);
    expect(statements.filter((s) => s.text.startsWith('INSERT INTO entitlements'))).toHaveLength(1);

    const entry = await m.get(AuditJournal).find(scope(), result.auditEventId!);
    expect(entry).toMatchObject({ eventType: 'reconciliation', decision: 'applied', customerId: sub.customerId, reconciledWithProvider: true });
    expect((await m.get(RailSubscriptionsRepository).find(scope(), 'card_payments', sub.id))?.validUntil).toBe(renewedEnd);
  });

  it('a read that finds the stored state issues at most 6 statements and writes nothing', async () => {
    const sub = await subscribed();
    processor.subscription(sub.id, sub.customer, { productId: 'prod_pro', periodEnd: now() + 30 * DAY, livemode: false });
    expect((await read(sub.id)).decision).toBe('applied');

    const again = await read(sub.id);
    expect(again).toMatchObject({ found: 'live', decision: 'no_change', auditEventId: null });
    expect(atMost(6)).toBe('within');
    expect(writes()).toEqual([]);
  });
});
