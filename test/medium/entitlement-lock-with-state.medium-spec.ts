import pg from 'pg';
import type { TenantScope } from '#platform';
import { EntitlementRepository } from '../../libs/entitlements/src/domain/entitlement.repository.js';
import { ManualEntitlementService } from '../../libs/entitlements/src/grants/manual-entitlements.service.js';
import { ManualEntitlementRefused } from '../../libs/entitlements/src/grants/entitlement-change.js';
import { EntitlementReadService, type EntitlementMutation } from '#entitlements';
import { queuedBehind } from '../support/lock-queue.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';

/**
 * A tracked manual change locks its row and reads the customer's state before in one statement,
 * whose snapshot is taken before the lock. The statement tells when the row moved on between
 * the two (the change feed then reads the state again, holding the row). Concurrent grants and
 * revokes of one key therefore run one after the other: the journal's versions count them all.
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

  describe('concurrent manual changes of one key are serialised by the row lock', () => {
    const actor = { actor: 'operator', requestId: null };
    const REASON = 'Goodwill credit after the March outage';
    /** The key's audit entries in version order (the version each change gave the row). */
    const journal = async (customer: string, key: string) =>
      (await m.dataSource.query(
        `SELECT event_id, event_type, (details->>'version')::int AS version
           FROM audit_entries WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND details->>'entitlementKey' = $4
          ORDER BY (details->>'version')::int`,
        [scope.projectId, scope.env, customer, key],
      )) as { event_id: string; event_type: string; version: number }[];
    const manualRow = async (customer: string, key: string) =>
      (await m.dataSource.query(
        `SELECT state, version, last_event_id FROM entitlements WHERE project_id = $1 AND env = $2 AND customer_id = $3 AND entitlement_key = $4 AND rail = 'manual'`,
        [scope.projectId, scope.env, customer, key],
      )) as { state: string; version: number; last_event_id: string }[];

    it('10 grants and 10 revokes fired together: consistent state, exactly one audit entry per successful call', async () => {
      const customer = await m.newCustomer(scope);
      const grants = m.get(ManualEntitlementService);
      const first = await grants.grant(scope, customer, { entitlementKey: 'raced', duration: 'P30D', reason: REASON }, actor);
      const calls = Array.from({ length: 20 }, (_, i) =>
        i % 2 === 0
          ? grants.grant(scope, customer, { entitlementKey: 'raced', duration: i % 4 === 0 ? 'P90D' : 'P30D', reason: REASON }, actor)
          : grants.revoke(scope, customer, { entitlementKey: 'raced', reason: `race ${i}` }, actor),
      );
      const results = await Promise.allSettled(calls);
      const grantResults = results.filter((_, i) => i % 2 === 0);
      const revokeResults = results.filter((_, i) => i % 2 === 1);
      expect(grantResults.map((r) => r.status)).toEqual(Array(10).fill('fulfilled'));
      for (const r of revokeResults) {
        if (r.status === 'rejected') {
          expect(r.reason).toBeInstanceOf(ManualEntitlementRefused);
          expect(r.reason).toMatchObject({ refusal: 'not_revocable', message: expect.stringMatching(/already revoked/) });
        }
      }
      const applied = (list: PromiseSettledResult<EntitlementMutation>[]) => list.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const okRevokes = applied(revokeResults);
      expect(okRevokes.length).toBeGreaterThanOrEqual(1);

      const entries = await journal(customer, 'raced');
      const successfulIds = [first, ...applied(grantResults), ...okRevokes].map((r) => r.auditEventId);
      expect(entries).toHaveLength(successfulIds.length);
      expect(entries.map((e) => e.event_id).sort()).toEqual([...successfulIds].sort());
      // versions 1..N: every change serialised, none lost
      expect(entries.map((e) => e.version)).toEqual(entries.map((_, i) => i + 1));
      // replay the journal: a revoke only ever followed an active state
      let active = false;
      for (const entry of entries) {
        if (entry.event_type === 'entitlement.revoked_manually') {
          expect(active).toBe(true);
          active = false;
        } else {
          expect(entry.event_type).toBe('entitlement.granted_manually');
          active = true;
        }
      }
      const last = entries[entries.length - 1];
      expect(await manualRow(customer, 'raced')).toEqual([{ state: active ? 'active' : 'revoked', version: entries.length, last_event_id: last.event_id }]);
      const read = await m.get(EntitlementReadService).listActive(scope, customer);
      expect(read.filter((e) => e.isActive).map((e) => e.key)).toEqual(active ? ['raced'] : []);
    });

    it('concurrent first grants of one key create one row', async () => {
      const customer = await m.newCustomer(scope);
      const grants = m.get(ManualEntitlementService);
      const results = await Promise.all(
        Array.from({ length: 8 }, () => grants.grant(scope, customer, { entitlementKey: 'first_race', duration: 'P30D', reason: REASON }, actor)),
      );
      expect(new Set(results.map((r) => r.auditEventId)).size).toBe(8);
      expect((await manualRow(customer, 'first_race')).map((r) => r.version)).toEqual([8]);
      expect(await journal(customer, 'first_race')).toHaveLength(8);
    });
  });
});
