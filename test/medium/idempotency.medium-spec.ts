import { ApiError, Clock, IdempotencyService, Sql } from '#platform';
import { IdempotencyRepository } from '../../libs/platform/src/idempotency/idempotency.repository.js';
import { createMediumContext, seedProject, unique, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';

/**
 * Idempotency's claim / complete / replay rules on the real repository and database, no HTTP
 * (the e2e proofs on purchase sync stay in test/e2e/idempotency.e2e-spec.ts).
 */
describe('medium: IdempotencyService with IdempotencyRepository', () => {
  let m: MediumContext;
  let service: IdempotencyService;
  let projectId: string;
  const scope = () => testScope(projectId, 'sandbox');
  const ENDPOINT = 'POST /medium/probe';

  beforeAll(async () => {
    // The platform alone, without Redis: nothing here uses it, and a connection closed while it connects logs after the run.
    m = await createMediumContext({ modules: [], env: { REDIS_URL: undefined } });
    service = m.get(IdempotencyService);
    ({ projectId } = await seedProject(m.dataSource));
    // A table of the test's own: the "handler's writes" that must commit with the answer.
    await m.dataSource.query(`CREATE TABLE IF NOT EXISTS medium_probe_writes (project_id text NOT NULL, key text NOT NULL, note text NOT NULL)`);
  });
  afterAll(() => m?.close());

  const writes = async (key: string): Promise<number> => {
    const [{ n }] = await m.dataSource.query(`SELECT count(*)::int AS n FROM medium_probe_writes WHERE project_id = $1 AND key = $2`, [projectId, key]);
    return n;
  };
  const stored = async (key: string) =>
    m.dataSource.query(
      `SELECT body_hash, status_code, response FROM idempotency_keys WHERE project_id = $1 AND env = 'sandbox' AND endpoint = $2 AND idempotency_key = $3`,
      [projectId, ENDPOINT, key],
    );
  /** A handler that writes one row through the ambient transaction and answers. */
  const handler = (key: string, answer: Record<string, unknown> = { ok: true }) => {
    const calls = { n: 0 };
    const work = async () => {
      calls.n += 1;
      await m.sql.run(`INSERT INTO medium_probe_writes (project_id, key, note) VALUES ($1, $2, 'written')`, [projectId, key]);
      return answer;
    };
    return { calls, work };
  };

  it('first call runs the handler and stores its answer with its writes; the same key and body replays without running it', async () => {
    const key = unique('idem');
    const h = handler(key, { object: 'probe', value: 1 });
    expect(await service.execute(scope(), ENDPOINT, key, 'hash_a', 200, h.work)).toEqual({
      replayed: false,
      statusCode: 200,
      body: { object: 'probe', value: 1 },
    });
    expect(await service.execute(scope(), ENDPOINT, key, 'hash_a', 200, h.work)).toEqual({
      replayed: true,
      statusCode: 200,
      body: { object: 'probe', value: 1, idempotent_replay: true },
    });
    expect(h.calls.n).toBe(1);
    expect(await writes(key)).toBe(1);
    expect(await stored(key)).toEqual([{ body_hash: 'hash_a', status_code: 200, response: { object: 'probe', value: 1 } }]);
  });

  it('the same key with another body is idempotency_key_in_use and runs nothing', async () => {
    const key = unique('idem');
    const h = handler(key);
    await service.execute(scope(), ENDPOINT, key, 'hash_a', 200, h.work);
    const refused = await service.execute(scope(), ENDPOINT, key, 'hash_b', 200, h.work).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('idempotency_key_in_use');
    expect(h.calls.n).toBe(1);
  });

  it('a failing handler leaves nothing half-stored: no answer, no writes, and the key is free for the retry', async () => {
    const key = unique('idem');
    const failing = async () => {
      await m.sql.run(`INSERT INTO medium_probe_writes (project_id, key, note) VALUES ($1, $2, 'half')`, [projectId, key]);
      throw new Error('crash between the write and the answer');
    };
    await expect(service.execute(scope(), ENDPOINT, key, 'hash_a', 200, failing)).rejects.toThrow('crash between the write and the answer');
    expect(await stored(key)).toEqual([]);
    expect(await writes(key)).toBe(0);
    const h = handler(key);
    expect((await service.execute(scope(), ENDPOINT, key, 'hash_a', 200, h.work)).replayed).toBe(false);
    expect(await writes(key)).toBe(1);
  });

  it('keys are scoped by project, environment and endpoint', async () => {
    const key = unique('idem');
    const other = await seedProject(m.dataSource);
    const h = handler(key);
    const scopes = [scope(), testScope(projectId, 'production'), testScope(other.projectId, 'sandbox')];
    for (const s of scopes) expect((await service.execute(s, ENDPOINT, key, 'hash_a', 200, h.work)).replayed).toBe(false);
    expect((await service.execute(scope(), 'POST /medium/other', key, 'hash_a', 200, h.work)).replayed).toBe(false);
    expect(h.calls.n).toBe(4);
  });

  it('past 24 hours on the service clock the key is claimed afresh (the expired row is taken over)', async () => {
    const key = unique('idem');
    const h = handler(key);
    await service.execute(scope(), ENDPOINT, key, 'hash_a', 200, h.work);
    m.get(Clock).advance(24 * 3600 + 1);
    const again = await service.execute(scope(), ENDPOINT, key, 'hash_b', 201, h.work);
    expect(again).toEqual({ replayed: false, statusCode: 201, body: { ok: true } });
    expect(h.calls.n).toBe(2);
    expect(await stored(key)).toEqual([{ body_hash: 'hash_b', status_code: 201, response: { ok: true } }]);
  });

  it('concurrent duplicates on one replica and across replicas (a second service on the same table) execute once', async () => {
    const key = unique('idem');
    const h = handler(key);
    const slow = async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return h.work();
    };
    // A second replica: its own in-memory map, the same repository and database.
    const replica = new IdempotencyService(m.get(IdempotencyRepository), m.get(Sql), m.get(Clock));
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? service : replica).execute(scope(), ENDPOINT, key, 'hash_a', 200, slow)),
    );
    expect(h.calls.n).toBe(1);
    expect(await writes(key)).toBe(1);
    expect(answers.filter((a) => !a.replayed)).toHaveLength(1);
    expect(answers.filter((a) => a.replayed).every((a) => (a.body as Record<string, unknown>).idempotent_replay === true)).toBe(true);
  });
});
