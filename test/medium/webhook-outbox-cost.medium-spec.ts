import Stripe from 'stripe';
import { Sql, type Statement, type TenantScope } from '#platform';
import { RailSecrets } from '#rails';
import { ManualEntitlementService } from '../../libs/entitlements/src/grants/manual-entitlements.service.js';
import { CardWebhookService } from '../../libs/rails/src/card/card-webhook.service.js';
import { cardEventBuilders } from '../support/card-events.js';
import { createMediumContext, unique, type MediumContext } from '../support/medium.js';
import { RailSecretsFile } from '../support/rail-secrets-file.js';
import { testScope } from '../support/scopes.js';
import { customerWithUserId } from '../support/factories/identity.js';
import { WEBHOOK_MEDIUM_ENV, newEndpoints } from '../support/factories/webhooks.js';

const SECRET = 'whsec_medium_0123456789abcdefghijkl';
const ACTOR = { actor: 'operator', requestId: null };
/** The per-replica "has an enabled endpoint?" read: cached for 100 ms, so whether a call pays it depends on timing. */
const isPresenceRead = (text: string): boolean =>
  text.startsWith('SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE project_id = $1 AND env = $2 AND status');
const isOutboxWrite = (text: string): boolean => text.startsWith('WITH seq AS') && text.includes('INSERT INTO webhook_deliveries');
const isActiveRead = (text: string): boolean => text.includes('FROM entitlements') && text.includes("state = 'active' AND (valid_until IS NULL");
const isProfileRead = (text: string): boolean => text.startsWith('SELECT c.id, c.email, c.first_name,');

/**
 * What the outbox adds to a write where endpoints listen, in statements: the customers'
 * entitlements before the change (for a manual grant, read by the statement that locks its row)
 * and the one outbox write. The state after is derived from the rows written; the grant reads
 * the customer's profile in place of its existence check, and the card rail knows the customer
 * it created has no developer user id.
 */
describe('medium: the outbox cost of a change, in statements', () => {
  let m: MediumContext;
  const file = new RailSecretsFile();

  beforeAll(async () => {
    m = await createMediumContext({ env: { RAIL_SECRETS_FILE: file.path, ...WEBHOOK_MEDIUM_ENV } });
  });
  afterAll(async () => {
    await m?.close();
    file.remove();
  });

  /** A project with a customer (with a developer user id), the card rail and a catalogue, and `endpoints` enabled endpoints. */
  async function project(endpoints: number): Promise<{ scope: TenantScope; customerId: string }> {
    const projectId = await m.newProject();
    const scope = testScope(projectId, 'sandbox');
    const { customerId } = await customerWithUserId(m, scope);
    await m.newCatalogue(scope, [{ rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro', 'cloud_sync'] }]);
    await newEndpoints(m, scope, endpoints);
    return { scope, customerId };
  }

  /** The statements `work` ran through Sql (the presence read left out), in order. */
  async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
    const sql = m.get(Sql);
    const texts: string[] = [];
    const run = sql.run.bind(sql);
    const spy = jest.spyOn(sql, 'run').mockImplementation((statement: Statement, params?: unknown[]) => {
      texts.push((typeof statement === 'string' ? statement : statement.text).replace(/\s+/g, ' ').trim());
      return run(statement, params);
    });
    try {
      await work();
    } finally {
      spy.mockRestore();
    }
    return texts.filter((text) => !isPresenceRead(text));
  }

  it('a manual grant or revoke: the outbox write, nothing else; the state before comes with the lock', async () => {
    const grants = m.get(ManualEntitlementService);
    const [quiet, heard] = [await project(0), await project(4)];
    const grant = (p: { scope: TenantScope; customerId: string }, key: string, duration: 'P30D' | 'P90D' = 'P30D') =>
      grants.grant(p.scope, p.customerId, { entitlementKey: key, duration, reason: 'outbox cost of a grant' }, ACTOR);
    // Warm: the first tracked change of the process asks the database's text order once.
    await grant(heard, 'warm');
    await grant(quiet, 'warm');
    // A first grant, one that extends it, and a key beside it.
    for (const [key, duration] of [
      ['pro', 'P30D'],
      ['pro', 'P90D'],
      ['cloud_sync', 'P30D'],
    ] as const) {
      const without = await statementsOf(() => grant(quiet, key, duration));
      const withEndpoints = await statementsOf(() => grant(heard, key, duration));
      expect(withEndpoints.length - without.length).toBe(1);
      expect(withEndpoints.filter(isOutboxWrite)).toHaveLength(1);
      expect(withEndpoints.filter(isActiveRead)).toEqual([expect.stringContaining('FOR UPDATE')]);
      expect(without.filter(isActiveRead)).toHaveLength(0);
      expect(without.filter((text) => text.includes('FOR UPDATE'))).toHaveLength(1);
    }
    const [{ n }] = await m.dataSource.query(`SELECT count(*)::int AS n FROM webhook_events WHERE customer_id = $1`, [heard.customerId]);
    expect(n).toBe(8); // an update and a granted_manually event per grant
    // A revoke: the same one statement more.
    const revoke = (p: { scope: TenantScope; customerId: string }) =>
      grants.revoke(p.scope, p.customerId, { entitlementKey: 'cloud_sync', reason: 'outbox cost of a revoke' }, ACTOR);
    const without = await statementsOf(() => revoke(quiet));
    const withEndpoints = await statementsOf(() => revoke(heard));
    expect(withEndpoints.length - without.length).toBe(1);
    expect(withEndpoints.filter(isOutboxWrite)).toHaveLength(1);
    expect(withEndpoints.filter(isActiveRead)).toEqual([expect.stringContaining('FOR UPDATE')]);
  });

  it('a card notification of a new card customer: the state before and the outbox write, nothing else', async () => {
    const [quiet, heard] = [await project(0), await project(4)];
    file.write({ projects: Object.fromEntries([quiet, heard].map((p) => [p.scope.projectId, { card_payments: { webhookSecrets: [SECRET] } }])) });
    m.get(RailSecrets).reloadIfChanged();
    const card = m.get(CardWebhookService);
    const now = () => m.clock.nowSeconds();
    const { subscription, event } = cardEventBuilders(now, unique);
    const notify = async (projectId: string) => {
      const payload = JSON.stringify(event('customer.subscription.created', subscription({ product: 'prod_pro' })));
      const header = Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET, timestamp: now() });
      expect((await card.receive(projectId, Buffer.from(payload), header, unique('req_medium'))).decision).toBe('applied');
    };
    await notify(heard.scope.projectId);
    await notify(quiet.scope.projectId);
    const without = await statementsOf(() => notify(quiet.scope.projectId));
    const withEndpoints = await statementsOf(() => notify(heard.scope.projectId));
    expect(withEndpoints.length - without.length).toBe(2);
    expect(withEndpoints.filter(isOutboxWrite)).toHaveLength(1);
    expect(withEndpoints.filter(isActiveRead)).toHaveLength(1);
    expect(withEndpoints.filter(isProfileRead)).toHaveLength(0);
    // The events still name the customer's developer user id: none, for a rail-only customer.
    const rows: { body: string }[] = await m.dataSource.query(`SELECT body FROM webhook_events WHERE project_id = $1`, [heard.scope.projectId]);
    const bodies = rows.map((row) => JSON.parse(row.body) as { type: string; data: Record<string, unknown> });
    expect(bodies.map((body) => body.type).sort()).toEqual([
      'customer.entitlements.updated',
      'customer.entitlements.updated',
      'subscription.started',
      'subscription.started',
    ]);
    for (const body of bodies) expect(body.data).toHaveProperty('developerUserId', null);
  });
});
