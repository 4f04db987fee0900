import { Metrics } from '#platform';
import { type ProjectFixture } from '../support/fixtures.js';
import { type TestApp } from '../support/test-app.js';
import { telemetryHarness } from '../support/harness/telemetry.js';

/**
 * Group commit on the direct path: batches that wait for a write slot share the next
 * statement, each request answered after its own rows are committed. The first statements
 * are held on a lock so the next batches must wait (a database of its own: the lock would
 * stall every other suite's ingestion).
 */
describe('telemetry: group commit of concurrent batches', () => {
  const h = telemetryHarness({ ownDatabase: true });
  let t: TestApp;
  let p: ProjectFixture;
  beforeAll(() => {
    ({ t, p } = h);
  });
  const { eid, ev, send, rows } = h;
  /** Answers so far, for the message when the lock waits do not come. */
  const settled: unknown[] = [];
  /** Sends at once (a supertest request goes out only when awaited or then-ed). */
  const start = (body: unknown) =>
    send(body).then((res) => {
      settled.push({ status: res.status, body: res.body as unknown });
      return res;
    });

  async function waitForLockWaits(n: number): Promise<void> {
    for (let waited = 0; ; waited += 20) {
      const [{ waiting }] = await t.dataSource.query(
        `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (waiting >= n) return;
      if (waited > 5000) {
        throw new Error(`expected ${n} statements waiting on the lock, saw ${waiting}; answers so far: ${JSON.stringify(settled)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Statements so far, the batches they held, and how many held a single batch. */
  async function statementsSoFar(): Promise<{ count: number; batches: number; single: number }> {
    const metric = await t.app.get(Metrics).eventsBatchesPerStatement.get();
    const value = (name: string, le?: number) => metric.values.find((v) => v.metricName === name && (le === undefined || v.labels.le === le))?.value ?? 0;
    return {
      count: value('events_batches_per_statement_count'),
      batches: value('events_batches_per_statement_sum'),
      single: value('events_batches_per_statement_bucket', 1),
    };
  }

  it('waiting batches go out in one statement; an event in two of them, or already stored, is still written once per delivery', async () => {
    const fingerprint = 'c0ffee77';
    const error = (overrides: Record<string, unknown> = {}) =>
      ev({ name: 'error.unhandled', level: 'error', properties: { fingerprint, message: 'boom' }, ...overrides });
    const before = await statementsSoFar();

    const blocker = t.dataSource.createQueryRunner();
    await blocker.connect();
    await blocker.startTransaction();
    let responses: { status: number }[];
    const early = [ev(), ev()];
    const shared = error();
    const lone = Array.from({ length: 6 }, () => ev());
    try {
      // Every batch statement upserts its hint sets first: this lock holds the two write slots.
      await blocker.query('LOCK TABLE event_identity_hints IN SHARE MODE');
      // One after the other: two batches that reach the group commit in the same turn share a statement.
      const first = [start({ events: [early[0]] })];
      await waitForLockWaits(1);
      first.push(start({ events: [early[1]] }));
      await waitForLockWaits(2);
      // These wait for a slot: the same error event in two batches, a retry of a batch in
      // flight, and six plain batches.
      const waiting = [
        start({ events: [shared, ev()] }),
        start({ events: [{ ...shared, properties: { fingerprint, message: 'boom again' } }] }),
        start({ events: [{ ...early[0], properties: { path: '/retried' } }] }),
        ...lone.map((e) => start({ events: [e] })),
      ];
      await new Promise((resolve) => setTimeout(resolve, 200));
      await blocker.commitTransaction();
      responses = await Promise.all([...first, ...waiting]);
    } finally {
      if (blocker.isTransactionActive) await blocker.rollbackTransaction();
      await blocker.release();
    }

    expect(responses.map((r) => r.status)).toEqual(Array(11).fill(202));
    const stored = await rows([...early, shared, ...lone].map((e) => e.eventId as string));
    expect(stored).toHaveLength(9);
    const byId = new Map(stored.map((r: { event_id: string }) => [r.event_id, r]));
    expect(byId.get(early[0].eventId as string)).toMatchObject({ deliveries: 2, properties: { path: '/retried' } });
    expect(byId.get(early[1].eventId as string)).toMatchObject({ deliveries: 1 });
    expect(byId.get(shared.eventId as string)).toMatchObject({ deliveries: 2 });
    for (const e of lone) expect(byId.get(e.eventId as string)).toMatchObject({ deliveries: 1, anonymous_id: 'anon_1' });

    // The error event counts once in its issue, however many times it was delivered.
    const [issue] = await t.dataSource.query(`SELECT event_count::int AS event_count FROM error_issues WHERE project_id = $1 AND fingerprint = $2`, [
      p.projectId,
      fingerprint,
    ]);
    expect(issue).toEqual({ event_count: 1 });

    // The nine that waited went out merged: at least one statement held several batches (the
    // one holding the shared event failed on it and was retried batch by batch).
    const after = await statementsSoFar();
    expect(after.count - before.count - (after.single - before.single)).toBeGreaterThan(0);
  });

  it('a lone batch on an idle service is written at once, in a statement of its own', async () => {
    const before = await statementsSoFar();
    const e = ev({ eventId: eid() });
    const res = await send({ events: [e] });
    expect(res.status).toBe(202);
    expect(await rows([e.eventId as string])).toHaveLength(1);
    const after = await statementsSoFar();
    expect(after.count - before.count).toBe(1);
    expect(after.batches - before.batches).toBe(1);
  });
});
