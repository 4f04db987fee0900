import { QueryFailedError } from 'typeorm';
import { prepared } from '#platform';
import { EntitlementRepository } from '../../libs/entitlements/src/domain/entitlement.repository.js';
import { IdentityRepository } from '../../libs/identity/src/customers/identity.repository.js';
import { encodeBatch } from '../../libs/telemetry/src/storage/event-insert.sql.js';
import { EventsRepository } from '../../libs/telemetry/src/storage/events.repository.js';
import { eventRow } from '../support/event-row.js';
import { createMediumContext, seedProject, unique, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';

/**
 * Hot reads run as named prepared statements (parsed and planned once per connection), unless
 * DB_PREPARED_STATEMENTS=false. pg_prepared_statements lists the statements of the session
 * that asks, so each check runs inside one transaction: one connection throughout.
 */
describe('medium: prepared statements through Sql', () => {
  let m: MediumContext;
  let projectId: string;
  let customerId: string;

  beforeAll(async () => {
    m = await createMediumContext();
    ({
      projectId,
      customerIds: [customerId],
    } = await seedProject(m.dataSource, ['sandbox']));
  });
  afterAll(() => m?.close());

  const preparedOnThisConnection = async (): Promise<{ name: string; statement: string }[]> =>
    m.sql.rows(`SELECT name, statement FROM pg_prepared_statements ORDER BY prepare_time`);

  it('names a statement by its text: the same text shares one name, another text gets another', () => {
    const a = prepared('SELECT 1 WHERE $1::int = 1');
    expect(prepared('SELECT 1 WHERE $1::int = 1')).toEqual(a);
    expect(prepared('SELECT 2 WHERE $1::int = 1').name).not.toBe(a.name);
    expect(a.name).toMatch(/^q_[0-9a-f]{24}$/);
  });

  it('prepares a statement once per connection and answers every run with its own parameters', async () => {
    const statement = prepared(`SELECT id FROM customers WHERE project_id = $1 AND id = $2`);
    await m.sql.transaction(async () => {
      expect(await m.sql.rows(statement, [projectId, customerId])).toEqual([{ id: customerId }]);
      expect(await m.sql.rows(statement, [projectId, 'cdcust_none'])).toEqual([]);
      expect(await m.sql.one(statement, [projectId, customerId])).toEqual({ id: customerId });
      const mine = (await preparedOnThisConnection()).filter((p) => p.name === statement.name);
      expect(mine).toEqual([{ name: statement.name, statement: statement.text }]);
    });
  });

  it('reports a failing prepared statement as any other: a QueryFailedError with the server code', async () => {
    const insert = prepared(`INSERT INTO projects (id, name, created_at) VALUES ($1, 'dup', now())`);
    const failure = await m.sql.run(insert, [projectId]).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(QueryFailedError);
    expect(failure).toMatchObject({ code: '23505' });
  });

  it('serves the entitlement and alias reads as prepared statements', async () => {
    const scope = testScope(projectId, 'sandbox');
    await m.sql.transaction(async () => {
      expect(await m.get(EntitlementRepository).findActive(scope, customerId, new Date())).toEqual([]);
      expect(await m.get(IdentityRepository).findCustomerIdByAlias(scope, 'developer', 'nobody')).toBeNull();
      expect(await m.get(IdentityRepository).findCustomerById(scope, customerId)).toBe(customerId);
      const statements = (await preparedOnThisConnection()).map((p) => p.statement.replace(/\s+/g, ' ').trim());
      expect(statements).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^SELECT customer_id, entitlement_key, rail, .* FROM entitlements WHERE project_id = \$1/),
          expect.stringMatching(/^SELECT a\.customer_id FROM customer_aliases a JOIN customers c/),
          expect.stringMatching(/^SELECT id FROM customers WHERE project_id = \$1 AND env = \$2 AND id = \$3/),
        ]),
      );
    });
  });

  it('writes event batches with the prepared insert (a pool of one connection, so the check sees it)', async () => {
    const single = await createMediumContext({ env: { DB_POOL_SIZE: '1' } });
    try {
      const meta = { appId: 'app_medium', receivedAtMs: Date.now(), sdkName: null, sdkVersion: null };
      await expect(
        single
          .get(EventsRepository)
          .writeEncoded(testScope(projectId, 'sandbox'), meta, encodeBatch([eventRow({ eventId: unique('evt') })], meta.receivedAtMs)),
      ).resolves.toBe(1);
      const statements: { statement: string }[] = await single.dataSource.query(`SELECT statement FROM pg_prepared_statements`);
      expect(statements.map((p) => p.statement)).toEqual(expect.arrayContaining([expect.stringMatching(/^\s*WITH\s+hints AS/)]));
    } finally {
      await single.close();
    }
  });

  it('outside a transaction runs statements on the pool without a TypeORM query runner, also detached from one', async () => {
    const statement = prepared(`SELECT id FROM customers WHERE project_id = $1 AND id = $2`);
    const runners = jest.spyOn(m.dataSource, 'createQueryRunner');
    try {
      expect(await m.sql.rows(statement, [projectId, customerId])).toEqual([{ id: customerId }]);
      expect(await m.sql.one(`SELECT $1::text AS echo`, ['plain text'])).toEqual({ echo: 'plain text' });
      expect(await m.sql.affected(`UPDATE projects SET name = name WHERE id = $1`, [projectId])).toBe(1);
      expect(runners).not.toHaveBeenCalled();
      // Inside a transaction statements stay on its connection (TypeORM's runner); a detached
      // statement runs outside it, on another pooled connection.
      await m.sql.transaction(async () => {
        expect(await m.sql.one(statement, [projectId, customerId])).toEqual({ id: customerId });
        const pid = `SELECT pg_backend_pid() AS pid`;
        expect(await m.sql.detached(() => m.sql.one(pid))).not.toEqual(await m.sql.one(pid));
      });
      expect(runners).toHaveBeenCalled();
    } finally {
      runners.mockRestore();
    }
  });

  it('a connection that dies under a pooled statement fails that statement only; the pool goes on with a fresh connection', async () => {
    const marker = unique('sleeper');
    const sleeping = m.sql.run(`SELECT pg_sleep(10), $1::text AS marker`, [marker]).catch((err: unknown) => err);
    let terminated = 0;
    for (let attempt = 0; attempt < 50 && terminated === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const rows = await m.dataSource.query(
        `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(10)%' AND pid <> pg_backend_pid()`,
      );
      terminated = rows.filter((row: { done: boolean }) => row.done).length;
    }
    expect(terminated).toBe(1);
    const failure = await sleeping;
    expect(failure).toBeInstanceOf(QueryFailedError);
    expect(failure).toMatchObject({ code: '57P01' });
    for (let i = 0; i < 12; i++) expect(await m.sql.one(`SELECT $1::int AS n`, [i])).toEqual({ n: i });
  });

  it('a socket error under a pooled statement fails that statement, not the process (pg emits it on the checked-out client)', async () => {
    const pool = (
      m.dataSource.driver as unknown as { master: { on(event: 'acquire', listener: (client: unknown) => void): void; removeAllListeners(event: string): void } }
    ).master;
    const acquired: Array<{ connection: { stream: { destroy(err: Error): void } } }> = [];
    pool.on('acquire', (client) => acquired.push(client as (typeof acquired)[number]));
    try {
      const sleeping = m.sql.run(`SELECT pg_sleep(10)`).catch((err: unknown) => err);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(acquired).toHaveLength(1);
      acquired[0].connection.stream.destroy(new Error('simulated connection reset'));
      const failure = await sleeping;
      expect(failure).toBeInstanceOf(QueryFailedError);
      expect((failure as Error).message).toMatch(/simulated connection reset|Connection terminated/);
    } finally {
      pool.removeAllListeners('acquire');
    }
    for (let i = 0; i < 12; i++) expect(await m.sql.one(`SELECT $1::int AS n`, [i])).toEqual({ n: i });
  });

  describe('with DB_PREPARED_STATEMENTS=false (a transaction-mode pooler in front)', () => {
    let plain: MediumContext;
    beforeAll(async () => {
      plain = await createMediumContext({ env: { DB_PREPARED_STATEMENTS: 'false' } });
    });
    afterAll(() => plain?.close());

    it('sends the same text unnamed: nothing stays prepared on the connection, the answers are the same', async () => {
      const scope = testScope(projectId, 'sandbox');
      await plain.sql.transaction(async () => {
        expect(await plain.get(IdentityRepository).findCustomerById(scope, customerId)).toBe(customerId);
        expect(await plain.get(EntitlementRepository).findActive(scope, customerId, new Date())).toEqual([]);
        expect(await plain.sql.rows(`SELECT name FROM pg_prepared_statements`)).toEqual([]);
      });
    });
  });
});
