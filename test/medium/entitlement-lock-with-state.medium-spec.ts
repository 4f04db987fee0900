import pg from 'pg';
import type { TenantScope } from '#platform';
import { EntitlementRepository } from '../../libs/entitlements/src/domain/entitlement.repository.js';
import { ManualEntitlementService } from '../../libs/entitlements/src/grants/manual-entitlements.service.js';
import { queuedBehind } from '../support/lock-queue.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';

/**
 * A tracked manual change locks its row and reads the customer's state before in one statement,
 * whose snapshot is taken before the lock. The statement tells when the row moved on between
 * the two (the change feed then reads the state again, holding the row).
 */
describe('medium: the lock of a row with the state before, in one statement', () => {
  let m: MediumContext;
  let holder: pg.Client;
  let scope: TenantScope;
  let customerId: string;

  beforeAll(async () => {
    m = await createMediumContext({});
    holder = new pg.Client({ connectionString: m.config.databaseUrl });
    await holder.connect();
    scope = testScope(await m.newProject(), 'sandbox');
    customerId = await m.newCustomer(scope);
    const grants = m.get(ManualEntitlementService);
    for (const key of ['pro', 'cloud_sync']) {
      await grants.grant(scope, customerId, { entitlementKey: key, duration: 'P30D', reason: 'lock with state' }, { actor: 'operator', requestId: null });
    }
  });
  afterAll(async () => {
    await holder?.end();
    await m?.close();
  });

  const lockPro = () => m.sql.transaction(() => m.get(EntitlementRepository).lockWithActiveSnapshot(scope, customerId, 'pro', 'manual', m.clock.now()));
  const rowOf = (key: string) => ({
    text: `SELECT 1 FROM entitlements WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND entitlement_key = $4 AND rail = 'manual' FOR UPDATE`,
    values: [scope.projectId, scope.env, customerId, key],
  });

  it('answers the locked row, the active rows and their snapshot; nothing moved on', async () => {
    const { locked, records, snapshot, movedOn } = await lockPro();
    expect(locked).toMatchObject({ key: 'pro', rail: 'manual', state: 'active' });
    expect(records.map((r) => r.key)).toEqual(['cloud_sync', 'pro']);
    expect(snapshot).toMatch(/^\d+:\d+:/);
    expect(movedOn).toBe(false);
  });

  it('a lock that only waited for another lock of the row: nothing moved on', async () => {
    const [{ locked, movedOn }] = await queuedBehind(holder, m.dataSource, rowOf('pro'), [lockPro]);
    expect(locked).toMatchObject({ key: 'pro' });
    expect(movedOn).toBe(false);
  });

  it('a lock that waited for a change of the row: the row as changed, the state from before it, moved on', async () => {
    const before = (await lockPro()).locked!;
    const revoke = {
      text: `UPDATE entitlements SET state = 'revoked', version = version + 1
              WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND entitlement_key = $4 AND rail = 'manual'`,
      values: [scope.projectId, scope.env, customerId, 'pro'],
    };
    const [{ locked, records, movedOn }] = await queuedBehind(holder, m.dataSource, revoke, [lockPro]);
    expect(locked).toMatchObject({ key: 'pro', state: 'revoked', version: before.version + 1 });
    // The statement's snapshot predates the revoke: `pro` is still active in it.
    expect(records.map((r) => r.key)).toEqual(['cloud_sync', 'pro']);
    expect(movedOn).toBe(true);
  });
});
