// The pool's pg client (libs/platform/src/database/pooled-pg-client.ts): pg's promise form with
// the query built around its callback, and the client's own read timeout with pg's behaviour.
import pg from 'pg';
import { PooledPgClient } from '../../libs/platform/src/database/pooled-pg-client.js';
import { createTestDatabase, dropTestDatabase, type TestDatabaseHandle } from '../support/test-database.js';

describe('PooledPgClient', () => {
  let database: TestDatabaseHandle;
  const clients: pg.Client[] = [];

  async function connected(readTimeoutMillis?: number): Promise<PooledPgClient> {
    const client = new PooledPgClient({ connectionString: database.url, readTimeoutMillis });
    clients.push(client);
    await client.connect();
    return client;
  }

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
    await dropTestDatabase(database);
  });

  it('answers the promise form as pg does: text, values, named (prepared) statements, results and errors', async () => {
    const client = await connected(5_000);
    const result = await client.query('SELECT $1::int AS n, $2::text AS s', [7, 'seven']);
    expect(result).toEqual(expect.objectContaining({ command: 'SELECT', rowCount: 1, rows: [{ n: 7, s: 'seven' }] }));
    const named = { name: 'pooled_client_spec', text: 'SELECT $1::int + 1 AS next' };
    expect((await client.query(named, [1])).rows).toEqual([{ next: 2 }]);
    expect((await client.query({ name: named.name, text: named.text }, [41])).rows).toEqual([{ next: 42 }]);
    const failure = await client.query('SELEC 1').catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(Error);
    expect(failure).toEqual(expect.objectContaining({ code: '42601' }));
    expect((await client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('leaves the callback form to pg', async () => {
    const client = await connected(5_000);
    const rows = await new Promise((resolve, reject) =>
      client.query('SELECT 2 AS two', (err: Error | null, res: pg.QueryResult) => (err ? reject(err) : resolve(res.rows))),
    );
    expect(rows).toEqual([{ two: 2 }]);
  });

  it('stops waiting after the read timeout, and a statement queued behind the silent one never runs', async () => {
    const setup = await connected();
    await setup.query('CREATE TABLE read_timeout_probe (n int)');
    const client = await connected(300);
    const started = Date.now();
    const slow = client.query('SELECT pg_sleep(1.5)').catch((err: Error) => err);
    const queued = client.query('INSERT INTO read_timeout_probe VALUES (1)').catch((err: Error) => err);
    expect(await slow).toEqual(expect.objectContaining({ message: 'Query read timeout' }));
    expect(await queued).toEqual(expect.objectContaining({ message: 'Query read timeout' }));
    expect(Date.now() - started).toBeLessThan(1_200);
    // Once the sleep is over the connection is usable again, and the INSERT was never sent.
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    expect((await client.query('SELECT count(*)::int AS n FROM read_timeout_probe')).rows).toEqual([{ n: 0 }]);
  });
});
