import { AuditJournal, AuditRetentionJob } from '#audit';
import { Sql, type TenantScope } from '#platform';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { testScope } from '../support/scopes.js';

const DAY = 86_400;

describe('audit journal: read endpoint, isolation, append-only trigger, retention', () => {
  let t: TestApp;
  let p: ProjectFixture;
  let other: ProjectFixture;
  let journal: AuditJournal;

  const sandbox = (): TenantScope => testScope(p.projectId, 'sandbox');
  const production = (): TenantScope => testScope(p.projectId, 'production');

  async function append(scope: TenantScope, extra: Partial<Parameters<AuditJournal['append']>[1]> = {}): Promise<string> {
    const { eventId } = await t.app.get(Sql).transaction(() =>
      journal.append(scope, {
        rail: 'manual',
        eventType: 'entitlement.revoked_manually',
        customerId: 'cdcust_test0000000000000000001',
        decision: 'applied',
        reason: 'Customer asked to cancel the trial early',
        actor: 'api_key:key_test',
        requestId: 'req_000000000000000000000001',
        details: { entitlementKey: 'pro' },
        ...extra,
      }),
    );
    return eventId;
  }

  const read = (key: string, eventId: string) => t.http.get(`/v1/server/audit/${encodeURIComponent(eventId)}`).set(keyHeaders(p, key));

  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
    other = await createProjectWithApp(t);
    journal = t.app.get(AuditJournal);
  });
  afterAll(async () => t.close());

  describe('append', () => {
    it('generates evt_ ids, or prefix + 24 random chars', async () => {
      expect(await append(sandbox())).toMatch(/^evt_[a-z0-9]{24}$/);
      expect(await append(sandbox(), { eventIdPrefix: 'srv_revoke_' })).toMatch(/^srv_revoke_[a-z0-9]{24}$/);
      expect(await append(sandbox(), { eventId: 'custom_event_1' })).toBe('custom_event_1');
    });

    it('writes inside the caller transaction: a rollback leaves no entry', async () => {
      let eventId = '';
      await expect(
        t.app.get(Sql).transaction(async () => {
          ({ eventId } = await journal.append(sandbox(), {
            rail: 'manual',
            eventType: 'entitlement.granted_manually',
            customerId: null,
            decision: 'applied',
            reason: 'rolled back',
            actor: 'test',
            requestId: null,
          }));
          throw new Error('rollback');
        }),
      ).rejects.toThrow('rollback');
      expect(eventId).not.toBe('');
      expect(await journal.find(sandbox(), eventId)).toBeNull();
    });

    it('an event id is unique within (project, env)', async () => {
      await append(sandbox(), { eventId: 'dup_event' });
      await expect(append(sandbox(), { eventId: 'dup_event' })).rejects.toMatchObject({ code: '23505' });
      await expect(append(production(), { eventId: 'dup_event' })).resolves.toBe('dup_event');
    });
  });

  describe('GET /v1/server/audit/{eventId}', () => {
    it('returns the entry with a secret key: 200, private no-store', async () => {
      const before = t.clock.nowSeconds();
      const eventId = await append(sandbox(), { eventIdPrefix: 'srv_revoke_' });
      const res = await read(p.keys.skTest, eventId);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.body).toEqual({
        object: 'audit_entry',
        data: {
          eventId,
          rail: 'manual',
          env: 'sandbox',
          eventType: 'entitlement.revoked_manually',
          projectId: p.projectId,
          customerId: 'cdcust_test0000000000000000001',
          decision: 'applied',
          reason: 'Customer asked to cancel the trial early',
          requestId: 'req_000000000000000000000001',
          actor: 'api_key:key_test',
          createdAt: expect.any(Number),
        },
      });
      expect(res.body.data.createdAt).toBeGreaterThanOrEqual(before - 1);
      expect(res.body.data.createdAt).toBeLessThanOrEqual(t.clock.nowSeconds() + 1);
      expect(JSON.stringify(res.body)).not.toContain('entitlementKey');
    });

    it('is also served without the /v1 prefix', async () => {
      const eventId = await append(sandbox());
      const res = await t.http.get(`/server/audit/${eventId}`).set(keyHeaders(p, p.keys.skTest));
      expect(res.status).toBe(200);
      expect(res.body.data.eventId).toBe(eventId);
    });

    it('unknown id: 400 invalid_param_value', async () => {
      const res = await read(p.keys.skTest, 'evt_doesnotexist000000000000');
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_param_value' });
      const long = await read(p.keys.skTest, 'x'.repeat(300));
      expect(long.status).toBe(400);
      expect(long.body.error.code).toBe('invalid_param_value');
      // A NUL (%00) in the path cannot be stored or compared by PostgreSQL: still the client's 400.
      const nul = await read(p.keys.skTest, 'evt_\u0000');
      expect(nul.status).toBe(400);
      expect(nul.body.error.code).toBe('invalid_param_value');
    });

    it('environment isolation: a sandbox key cannot read a production entry and vice versa', async () => {
      const prodEvent = await append(production());
      const sandboxEvent = await append(sandbox());
      expect((await read(p.keys.skTest, prodEvent)).status).toBe(400);
      expect((await read(p.keys.skLive, sandboxEvent)).status).toBe(400);
      const ok = await read(p.keys.skLive, prodEvent);
      expect(ok.status).toBe(200);
      expect(ok.body.data.env).toBe('production');
    });

    it("project isolation: another project's secret key gets 400", async () => {
      const eventId = await append(sandbox());
      const res = await t.http.get(`/v1/server/audit/${eventId}`).set(keyHeaders(other, other.keys.skTest));
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_param_value');
    });

    it('a publishable key is refused with 401 invalid_api_key', async () => {
      const eventId = await append(sandbox());
      const res = await read(p.keys.pubTest, eventId);
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    });

    it('no key: 401 missing_api_key', async () => {
      const res = await t.http.get('/v1/server/audit/evt_x');
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('missing_api_key');
    });
  });

  describe('append-only in the database', () => {
    it('refuses UPDATE', async () => {
      const eventId = await append(sandbox());
      await expect(t.dataSource.query(`UPDATE audit_entries SET decision = 'tampered' WHERE event_id = $1`, [eventId])).rejects.toThrow(/append-only/);
      expect((await journal.find(sandbox(), eventId))?.decision).toBe('applied');
    });

    it('refuses DELETE and TRUNCATE', async () => {
      const eventId = await append(sandbox());
      await expect(t.dataSource.query(`DELETE FROM audit_entries WHERE event_id = $1`, [eventId])).rejects.toThrow(/append-only/);
      await expect(t.dataSource.query(`TRUNCATE audit_entries`)).rejects.toThrow(/append-only/);
      expect(await journal.find(sandbox(), eventId)).not.toBeNull();
    });

    it('the purge setting lets DELETE through but never UPDATE', async () => {
      const eventId = await append(sandbox());
      await expect(
        t.dataSource.transaction(async (manager) => {
          await manager.query(`SET LOCAL audit.retention_purge = 'on'`);
          await manager.query(`UPDATE audit_entries SET reason = 'x' WHERE event_id = $1`, [eventId]);
        }),
      ).rejects.toThrow(/append-only/);
      // The setting is transaction-local: it does not leak to later statements on the connection.
      await expect(t.dataSource.query(`DELETE FROM audit_entries WHERE event_id = $1`, [eventId])).rejects.toThrow(/append-only/);
    });
  });

  describe('retention: 24 months', () => {
    it('the scheduled purge removes entries older than 24 months and keeps newer ones', async () => {
      const purger = t.app.get(AuditRetentionJob);
      const old = await append(sandbox(), { eventIdPrefix: 'old_' });
      const oldProd = await append(production(), { eventIdPrefix: 'old_' });
      const oldOther = await t.app.get(Sql).transaction(() =>
        journal.append(testScope(other.projectId, 'sandbox'), {
          rail: 'manual',
          eventType: 'entitlement.granted_manually',
          customerId: null,
          decision: 'applied',
          reason: 'other project',
          actor: 'test',
          requestId: null,
        }),
      );
      // 23 months later: nothing is old enough yet.
      let res = await t.http
        .post('/admin/v1/test-clock/advance')
        .set(operatorAuth())
        .send({ seconds: 700 * DAY });
      expect(res.status).toBe(200);
      // Scoped to this file's projects: the test database is shared with other suites.
      const purge = async () => (await purger.purgeOnce({ projectId: p.projectId })) + (await purger.purgeOnce({ projectId: other.projectId }));
      expect(await purge()).toBe(0);
      const middle = await append(sandbox(), { eventIdPrefix: 'middle_' });
      expect((await read(p.keys.skTest, old)).status).toBe(200);

      // Past 24 months for the first entries; "middle" is only 40 days old.
      res = await t.http
        .post('/admin/v1/test-clock/advance')
        .set(operatorAuth())
        .send({ seconds: 40 * DAY });
      expect(res.status).toBe(200);
      const fresh = await append(sandbox(), { eventIdPrefix: 'fresh_' });
      // Two replicas at once: the advisory lock lets one purge; together they purge everything due.
      const [purgedA, purgedB] = await Promise.all([purger.purgeOnce({ projectId: p.projectId }), purger.purgeOnce({ projectId: p.projectId })]);
      expect(purgedA + purgedB).toBeGreaterThanOrEqual(2);
      expect(await purger.purgeOnce({ projectId: other.projectId })).toBe(1);

      expect((await read(p.keys.skTest, old)).status).toBe(400);
      expect((await read(p.keys.skLive, oldProd)).status).toBe(400);
      expect(await journal.find(testScope(other.projectId, 'sandbox'), oldOther.eventId)).toBeNull();
      expect((await read(p.keys.skTest, middle)).status).toBe(200);
      expect((await read(p.keys.skTest, fresh)).status).toBe(200);
      expect(await purge()).toBe(0);
    });
  });
});
