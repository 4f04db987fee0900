import { Sql, type Statement, type TenantScope } from '#platform';
import { ManualEntitlementService } from '../../libs/entitlements/src/grants/manual-entitlements.service.js';
import { createMediumContext, unique, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';

const ACTOR = { actor: 'operator', requestId: null };

/**
 * Every statement of a manual grant and a manual revoke runs as a named prepared statement
 * (parsed and planned once per connection), in a scope without endpoints and in one where the
 * outbox records the change, on each branch: a first grant, one that extends it, a revoke and
 * the revokes refused. Transaction control (BEGIN, COMMIT) is TypeORM's and not counted.
 */
describe('medium: the manual grant path runs prepared statements only', () => {
  let m: MediumContext;

  beforeAll(async () => {
    m = await createMediumContext();
  });
  afterAll(() => m?.close());

  async function project(endpoints: number): Promise<{ scope: TenantScope; customerId: string }> {
    const scope = testScope(await m.newProject(), 'sandbox');
    const customerId = await m.newCustomer(scope);
    for (let i = 0; i < endpoints; i++) {
      await m.dataSource.query(
        `INSERT INTO webhook_endpoints (id, project_id, env, url, status, created_at_ms, updated_at_ms) VALUES ($1, $2, 'sandbox', 'https://hooks.example.com/in', 'enabled', 0, 0)`,
        [unique('we'), scope.projectId],
      );
    }
    return { scope, customerId };
  }

  /** What `work` ran through Sql: each statement's text and whether it went named. */
  async function statementsOf(work: () => Promise<unknown>): Promise<{ text: string; named: boolean }[]> {
    const sql = m.get(Sql);
    const seen: { text: string; named: boolean }[] = [];
    const run = sql.run.bind(sql);
    const spy = jest.spyOn(sql, 'run').mockImplementation((statement: Statement, params?: unknown[]) => {
      const named = typeof statement !== 'string' && /^q_[0-9a-f]{24}$/.test(statement.name);
      seen.push({ text: (typeof statement === 'string' ? statement : statement.text).replace(/\s+/g, ' ').trim(), named });
      return run(statement, params);
    });
    try {
      await work();
    } finally {
      spy.mockRestore();
    }
    return seen;
  }

  const unnamed = (statements: { text: string; named: boolean }[]): string[] => statements.filter((s) => !s.named).map((s) => s.text);

  it.each([
    ['without endpoints', 0],
    ['with 4 endpoints (the outbox records the change)', 4],
  ])('%s: grant, extend, another key, revoke and the refused revokes', async (_label, endpoints) => {
    const { scope, customerId } = await project(endpoints);
    const grants = m.get(ManualEntitlementService);
    const grant = (key: string, duration: 'P30D' | 'P90D') =>
      grants.grant(scope, customerId, { entitlementKey: key, duration, reason: 'prepared path' }, ACTOR);
    const revoke = (key: string) => grants.revoke(scope, customerId, { entitlementKey: key, reason: 'prepared path' }, ACTOR);
    // A key a card subscription holds: its revoke is refused naming the rail.
    await m.dataSource.query(
      `INSERT INTO entitlements (project_id, env, customer_id, entitlement_key, rail, product_id, subscription_id, state, valid_until, version, created_at, updated_at)
       VALUES ($1, 'sandbox', $2, 'card_key', 'card_payments', 'prod_pro', 'sub_1', 'active', now() + interval '30 days', 1, now(), now())`,
      [scope.projectId, customerId],
    );

    const all = await statementsOf(async () => {
      await grant('pro', 'P30D');
      await grant('pro', 'P90D');
      await grant('cloud_sync', 'P30D');
      await revoke('cloud_sync');
      await expect(revoke('cloud_sync')).rejects.toThrow(/already revoked/);
      await expect(revoke('never')).rejects.toThrow(/never granted/);
      await expect(revoke('card_key')).rejects.toThrow(/card_payments rail/);
    });

    expect(unnamed(all)).toEqual([]);
    // The branches ran: the first row's insert, the locked row's update, the audit entries, the other rails' read.
    const texts = all.map((s) => s.text);
    expect(texts).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^INSERT INTO entitlements .* ON CONFLICT ON CONSTRAINT entitlements_customer_key_rail_uq DO NOTHING/),
        expect.stringMatching(/^UPDATE entitlements SET product_id = \$6/),
        expect.stringMatching(/^INSERT INTO audit_entries/),
        expect.stringMatching(/^INSERT INTO entitlement_keys/),
        expect.stringMatching(/AND rail <> \$5/),
      ]),
    );
    if (endpoints > 0) expect(texts.filter((t) => t.includes('INSERT INTO webhook_events'))).toHaveLength(4);
  });

  it('a grant of a key found registered before: the customer check, the lock, the write and the audit entry, nothing else', async () => {
    const { scope, customerId } = await project(0);
    const grants = m.get(ManualEntitlementService);
    const grant = () => grants.grant(scope, customerId, { entitlementKey: 'pro', duration: 'P30D', reason: 'prepared path' }, ACTOR);
    await grant(); // registers the key
    await grant(); // finds it registered
    const texts = (await statementsOf(grant)).map((s) => s.text);
    expect(texts).toEqual([
      expect.stringMatching(/^SELECT id FROM customers/),
      expect.stringMatching(/^SELECT .* FROM entitlements .* FOR UPDATE$/),
      expect.stringMatching(/^UPDATE entitlements/),
      expect.stringMatching(/^INSERT INTO audit_entries/),
    ]);
  });

  it('the prepared statements are kept on the connection: a second grant sends no text to parse again', async () => {
    const single = await createMediumContext({ env: { DB_POOL_SIZE: '1' } });
    try {
      const scope = testScope(await single.newProject(), 'sandbox');
      const customerId = await single.newCustomer(scope);
      const grants = single.get(ManualEntitlementService);
      const grant = () => grants.grant(scope, customerId, { entitlementKey: 'pro', duration: 'P30D', reason: 'prepared path' }, ACTOR);
      await grant();
      await grant();
      const kept: { statement: string }[] = await single.dataSource.query(`SELECT statement FROM pg_prepared_statements`);
      const texts = kept.map((p) => p.statement.replace(/\s+/g, ' ').trim());
      expect(texts).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^INSERT INTO entitlement_keys/),
          expect.stringMatching(/^INSERT INTO entitlements /),
          expect.stringMatching(/^UPDATE entitlements SET product_id = \$6/),
          expect.stringMatching(/^INSERT INTO audit_entries/),
        ]),
      );
    } finally {
      await single.close();
    }
  });
});
