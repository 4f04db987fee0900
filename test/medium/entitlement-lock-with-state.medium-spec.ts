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
  const proRow = () => ({
    text: `SELECT 1 FROM entitlements WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND entitlement_key = 'pro' AND rail = 'manual' FOR UPDATE`,
    values: [scope.projectId, scope.env, customerId],
  });

  it('answers the locked row, the active rows and their snapshot; nothing moved on', async () => {
    const { locked, records, snapshot, movedOn } = await lockPro();
    expect(locked).toMatchObject({ key: 'pro', rail: 'manual', state: 'active' });
    expect(records.map((r) => r.key)).toEqual(['cloud_sync', 'pro']);
    expect(snapshot).toMatch(/^\d+:\d+:/);
    expect(movedOn).toBe(false);
  });

  it('a row never written: none locked, nothing moved on', async () => {
    const repository = m.get(EntitlementRepository);
    const { locked, records, movedOn } = await m.sql.transaction(() => repository.lockWithActiveSnapshot(scope, customerId, 'never', 'manual', m.clock.now()));
    expect(locked).toBeNull();
    expect(records.map((r) => r.key)).toEqual(['cloud_sync', 'pro']);
    expect(movedOn).toBe(false);
  });

  it('a customer with no active row: the row is still locked and answered', async () => {
    const other = await m.newCustomer(scope);
    const grants = m.get(ManualEntitlementService);
    const actor = { actor: 'operator', requestId: null };
    await grants.grant(scope, other, { entitlementKey: 'pro', duration: 'P30D', reason: 'lock with state' }, actor);
    await grants.revoke(scope, other, { entitlementKey: 'pro', reason: 'lock with state' }, actor);
    const repository = m.get(EntitlementRepository);
    const { locked, records, movedOn } = await m.sql.transaction(async () => {
      const answer = await repository.lockWithActiveSnapshot(scope, other, 'pro', 'manual', m.clock.now());
      // Held until this transaction ends: another session cannot take it.
      await expect(
        holder.query(`SELECT 1 FROM entitlements WHERE customer_id = $1 AND entitlement_key = 'pro' AND rail = 'manual' FOR UPDATE NOWAIT`, [other]),
      ).rejects.toThrow(/could not obtain lock/);
      return answer;
    });
    expect(locked).toMatchObject({ key: 'pro', state: 'revoked' });
    expect(records).toEqual([]);
    expect(movedOn).toBe(false);
  });

  it('a lock that only waited for another lock of the row: nothing moved on', async () => {
    const [{ locked, movedOn }] = await queuedBehind(holder, m.dataSource, proRow(), [lockPro]);
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

  it('a lock that waited for the row to be deleted: none locked, moved on', async () => {
    const erase = {
      text: `DELETE FROM entitlements WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND entitlement_key = $4 AND rail = 'manual'`,
      values: [scope.projectId, scope.env, customerId, 'cloud_sync'],
    };
    const lockCloudSync = () =>
      m.sql.transaction(() => m.get(EntitlementRepository).lockWithActiveSnapshot(scope, customerId, 'cloud_sync', 'manual', m.clock.now()));
    const [{ locked, records, movedOn }] = await queuedBehind(holder, m.dataSource, erase, [lockCloudSync]);
    expect(locked).toBeNull();
    expect(records.map((r) => r.key)).toContain('cloud_sync');
    expect(movedOn).toBe(true);
  });
});
