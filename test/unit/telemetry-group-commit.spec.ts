import { TenantScopes } from '#platform';
import { buildInsertStatement, encodeRows, insertStatementOf } from '../../libs/telemetry/src/storage/event-insert.sql.js';
import { type BatchWriteMeta, GroupCommit, type WriteUnit, mergeUnits } from '../../libs/telemetry/src/storage/group-commit.js';
import { eventRow as row } from '../support/event-row.js';

const meta = (overrides: Partial<BatchWriteMeta> = {}): BatchWriteMeta => ({
  appId: 'app_1',
  receivedAtMs: 100,
  sdkName: 'web',
  sdkVersion: '1.0.0',
  ...overrides,
});
const unit = (eventId: string, projectId = 'prj_1', m: Partial<BatchWriteMeta> = {}): WriteUnit => ({
  scope: TenantScopes.ofAcknowledgedBatch(projectId, 'sandbox'),
  meta: meta(m),
  rows: encodeRows([row({ eventId, receivedAtMs: m.receivedAtMs ?? 100 })]),
});
const manyRows = (n: number, prefix: string): WriteUnit => ({
  scope: TenantScopes.ofAcknowledgedBatch('prj_1', 'sandbox'),
  meta: meta(),
  rows: encodeRows(Array.from({ length: n }, (_, i) => row({ eventId: `${prefix}${i}`, receivedAtMs: 100 }))),
});
const tick = () => new Promise((resolve) => setImmediate(resolve));
/** Polls until the writer has been called `n` times. */
async function untilCalls(calls: readonly unknown[], n: number): Promise<void> {
  while (calls.length < n) await new Promise((resolve) => setTimeout(resolve, 2));
}

/** A writer whose calls are recorded (with when each began, performance.now()) and finish when the test says so. */
function recordingWriter() {
  const calls: { unit: WriteUnit; at: number; finish: (err?: unknown) => void }[] = [];
  const write = (u: WriteUnit) =>
    new Promise<void>((resolve, reject) =>
      calls.push({ unit: u, at: performance.now(), finish: (err?: unknown) => (err === undefined ? resolve() : reject(err)) }),
    );
  return { calls, write };
}

const limits = { slots: 1, spareAfterMs: 0, maxUnits: 50, maxRows: 5000 };

describe('telemetry: group commit of event batches', () => {
  it('writes a lone batch at once and answers after its commit', async () => {
    const { calls, write } = recordingWriter();
    const commits = new GroupCommit(limits, write);
    let done = false;
    const submitted = commits.submit(unit('a')).then(() => (done = true));
    await tick();
    expect(calls).toHaveLength(1);
    expect(calls[0].unit.rows.rowCount).toBe(1);
    expect(done).toBe(false);
    calls[0].finish();
    await submitted;
    await tick();
    expect(commits.inFlight).toBe(0);
  });

  it('batches that wait for the slot share the next statement; other tenants, apps and SDKs keep their own, in order', async () => {
    const { calls, write } = recordingWriter();
    const commits = new GroupCommit(limits, write);
    const first = commits.submit(unit('a'));
    await tick();
    const waiting = [
      commits.submit(unit('b')),
      commits.submit(unit('x', 'prj_2')),
      commits.submit(unit('c', 'prj_1', { receivedAtMs: 103 })),
      commits.submit(unit('d', 'prj_1', { appId: 'app_2' })),
      commits.submit(unit('e', 'prj_1', { sdkVersion: '2.0.0' })),
    ];
    await tick();
    expect(commits.queued).toBe(5);
    expect(calls).toHaveLength(1);
    calls[0].finish();
    await first;
    await tick();
    expect(calls).toHaveLength(2);
    expect(calls[1].unit.rows.rowCount).toBe(2);
    expect(calls[1].unit.meta.receivedAtMs).toBe(103);
    for (let i = 1; i <= 4; i++) {
      calls[i].finish();
      await tick();
    }
    await Promise.all(waiting);
    expect(calls.map((c) => [c.unit.scope.projectId, c.unit.meta.appId, c.unit.meta.sdkVersion, c.unit.rows.rowCount])).toEqual([
      ['prj_1', 'app_1', '1.0.0', 1],
      ['prj_1', 'app_1', '1.0.0', 2],
      ['prj_2', 'app_1', '1.0.0', 1],
      ['prj_1', 'app_2', '1.0.0', 1],
      ['prj_1', 'app_1', '2.0.0', 1],
    ]);
  });

  it('batches submitted in one turn of the event loop go out together, and never more than the slots at once', async () => {
    const { calls, write } = recordingWriter();
    const commits = new GroupCommit({ ...limits, slots: 2 }, write);
    const all = [commits.submit(unit('a')), commits.submit(unit('b')), commits.submit(unit('x', 'prj_2')), commits.submit(unit('y', 'prj_3'))];
    await tick();
    expect(calls.map((c) => c.unit.rows.rowCount)).toEqual([2, 1]);
    expect(commits.inFlight).toBe(2);
    calls[0].finish();
    await tick();
    expect(calls).toHaveLength(3);
    calls[1].finish();
    calls[2].finish();
    await Promise.all(all);
    await tick();
    expect(commits.inFlight).toBe(0);
  });

  it('a second slot opens only once the running statement has taken spareAfterMs', async () => {
    const { calls, write } = recordingWriter();
    const commits = new GroupCommit({ ...limits, slots: 2, spareAfterMs: 40 }, write);
    const started = performance.now();
    const first = commits.submit(unit('a'));
    await tick();
    const second = commits.submit(unit('x', 'prj_2'));
    const third = commits.submit(unit('b'));
    await tick();
    expect(calls).toHaveLength(1);
    await untilCalls(calls, 2);
    expect(performance.now() - started).toBeGreaterThanOrEqual(35);
    expect(calls[1].unit.scope.projectId).toBe('prj_2');
    expect(commits.inFlight).toBe(2);
    calls[0].finish();
    calls[1].finish();
    await Promise.all([first, second]);
    await tick();
    expect(calls).toHaveLength(3);
    calls[2].finish();
    await third;
  });

  it('while the running statements wait (a stalled commit), one more slot opens spareAfterMs after the newest, up to the slots', async () => {
    const { calls, write } = recordingWriter();
    const commits = new GroupCommit({ ...limits, slots: 3, spareAfterMs: 20 }, write);
    const all = [commits.submit(unit('a'))];
    await untilCalls(calls, 1);
    all.push(commits.submit(unit('b')));
    await untilCalls(calls, 2);
    // Measured when the writer was called, not when the polling saw it: a busy machine delays the poll, not the slot.
    expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(15);
    all.push(commits.submit(unit('c')));
    await untilCalls(calls, 3);
    expect(calls[2].at - calls[1].at).toBeGreaterThanOrEqual(15);
    all.push(commits.submit(unit('d')));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(calls).toHaveLength(3);
    expect(commits.queued).toBe(1);
    calls[0].finish();
    await untilCalls(calls, 4);
    for (const call of calls.slice(1)) call.finish();
    await Promise.all(all);
    expect(calls.map((c) => c.unit.rows.rowCount)).toEqual([1, 1, 1, 1]);
  });

  it('a statement holds at most maxUnits batches and maxRows rows, in the order they came', async () => {
    const { calls, write } = recordingWriter();
    const commits = new GroupCommit({ ...limits, maxUnits: 2, maxRows: 100 }, write);
    const all = [
      commits.submit(manyRows(60, 'a')),
      commits.submit(manyRows(60, 'b')),
      commits.submit(manyRows(30, 'c')),
      commits.submit(unit('d')),
      commits.submit(unit('e')),
    ];
    for (let i = 0; i < 3; i++) {
      await tick();
      calls[i].finish();
    }
    await Promise.all(all);
    expect(calls.map((c) => c.unit.rows.rowCount)).toEqual([60, 90, 2]);
  });

  it('a merged statement that fails on its rows is retried batch by batch: only the bad batch fails', async () => {
    const written: string[] = [];
    const commits = new GroupCommit(limits, async (u) => {
      if (u.rows.rowCount > 1) throw Object.assign(new Error('ON CONFLICT DO UPDATE command cannot affect row a second time'), { code: '21000' });
      const id = insertStatementOf({ projectId: 'p', env: 'sandbox', ...u.meta }, u.rows).params[7] as Buffer;
      if (id.includes(Buffer.from('bad'))) throw Object.assign(new Error('invalid input syntax for type json'), { code: '22P02' });
      written.push(u.scope.projectId);
    });
    const outcomes = await Promise.allSettled([commits.submit(unit('a')), commits.submit(unit('bad')), commits.submit(unit('c'))]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toMatchObject({ code: '22P02' });
    expect(written).toHaveLength(2);
  });

  it.each([
    ['the connection is lost (no SQLSTATE)', {}],
    ['the statement times out', { code: '57014' }],
    ['the server shuts down', { code: '57P01' }],
    ['the server refuses connections', { code: '08006' }],
  ])('when %s, every batch of the statement fails at once and the slot is freed', async (_what, fields) => {
    let calls = 0;
    const commits = new GroupCommit(limits, async () => {
      calls++;
      if (calls === 1) throw Object.assign(new Error('database unavailable'), fields);
    });
    const outcomes = await Promise.allSettled([commits.submit(unit('a')), commits.submit(unit('b'))]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toBe(1);
    await expect(commits.submit(unit('c'))).resolves.toBeUndefined();
    await tick();
    expect(commits.inFlight).toBe(0);
    expect(commits.queued).toBe(0);
  });

  it('merged batches make the statement their rows would make together, each row keeping its receive time', () => {
    const a = [row({ eventId: 'a', receivedAtMs: 100 })];
    const c = [
      row({ eventId: 'c', fingerprint: 'abcdef01', level: 'error', receivedAtMs: 103 }),
      row({ eventId: 'b', anonymousId: 'anon_2', receivedAtMs: 103 }),
    ];
    const scope = TenantScopes.ofAcknowledgedBatch('prj_1', 'sandbox');
    const merged = mergeUnits([
      { scope, meta: meta({ receivedAtMs: 100 }), rows: encodeRows(a) },
      { scope, meta: meta({ receivedAtMs: 103 }), rows: encodeRows(c) },
    ]);
    expect(merged.meta).toEqual(meta({ receivedAtMs: 103 }));
    const statementMeta = { projectId: 'prj_1', env: 'sandbox', ...merged.meta };
    const together = buildInsertStatement(statementMeta, [...a, ...c]);
    const statement = insertStatementOf(statementMeta, merged.rows);
    expect(statement.sql).toBe(together.sql);
    expect(statement.params.map((p) => (p instanceof Uint8Array ? Buffer.from(p) : p))).toEqual(together.params);
  });
});
