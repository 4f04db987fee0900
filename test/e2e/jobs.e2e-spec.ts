import { Injectable, Module } from '@nestjs/common';
import { Clock, type Job, JobQueue, JobWorker, OnJob, Sql, backoffMs } from '#platform';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expireJobLease, jobLeasedBy } from '../support/factories/time.js';

const FLAKY = 'test.flaky';
const COUNTED = 'test.counted';
const REPEAT_FROM_END = 'test.repeat_from_end';
const REPEAT_FROM_START = 'test.repeat_from_start';
/** How long (service clock, seconds) the next run of a recurring probe takes; each run resets it to 0. */
const recurringRun = { seconds: 0 };

/** Test-only handlers: one that fails a chosen number of times, one that records each execution. */
@Injectable()
class ProbeJobs {
  constructor(private readonly sql: Sql) {}

  @OnJob({ type: FLAKY, maxAttempts: 3, backoff: { baseMs: 10_000, maxMs: 60_000 } })
  async flaky(job: Job<{ label: string; failures: number }>): Promise<void> {
    // Recorded outside the job's transaction, which a failure rolls back.
    await this.sql.detached(() =>
      this.sql.run('INSERT INTO probe_job_runs (job_id, label, attempt) VALUES ($1, $2, $3)', [job.id, job.payload.label, job.attempt]),
    );
    if (job.attempt <= job.payload.failures) throw new Error(`planned failure ${job.attempt}`);
  }

  @OnJob({ type: COUNTED })
  async counted(job: Job<{ label: string }>): Promise<void> {
    await this.sql.run('INSERT INTO probe_job_runs (job_id, label, attempt) VALUES ($1, $2, $3)', [job.id, job.payload.label, job.attempt]);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Recurring probes that take `recurringRun.seconds` of the service clock: one counted from a run's end, one from its start. */
@Injectable()
class RecurringProbeJobs {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
  ) {}

  @OnJob({ type: REPEAT_FROM_END, everyMs: 60_000 })
  fromEnd(job: Job): Promise<void> {
    return this.record(job, REPEAT_FROM_END);
  }

  @OnJob({ type: REPEAT_FROM_START, everyMs: 60_000, repeatFrom: 'start' })
  fromStart(job: Job): Promise<void> {
    return this.record(job, REPEAT_FROM_START);
  }

  private async record(job: Job, label: string): Promise<void> {
    await this.sql.run('INSERT INTO probe_job_runs (job_id, label, attempt) VALUES ($1, $2, $3)', [job.id, label, job.attempt]);
    this.clock.advance(recurringRun.seconds);
    recurringRun.seconds = 0;
  }
}

@Module({ providers: [ProbeJobs, RecurringProbeJobs] })
class ProbeJobsModule {}

describe('durable jobs (platform primitive)', () => {
  let t: TestApp;
  const advance = (seconds: number) => t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds });
  const runs = async (label: string): Promise<{ job_id: string; attempt: number }[]> =>
    t.dataSource.query('SELECT job_id, attempt FROM probe_job_runs WHERE label = $1 ORDER BY attempt', [label]);
  const job = async (id: string) =>
    (await t.dataSource.query('SELECT status, attempts, run_at_ms::float8 AS "runAtMs", last_error FROM jobs WHERE id = $1', [id]))[0];

  beforeAll(async () => {
    // Claims, leases and dead letters follow this app's clock: no other suite's queue rows share its table.
    t = await createTestApp({}, { extraModules: [ProbeJobsModule], ownDatabase: true });
    await t.dataSource.query('CREATE TABLE IF NOT EXISTS probe_job_runs (job_id text NOT NULL, label text NOT NULL, attempt int NOT NULL)');
  });
  afterAll(async () => t.close());

  it('a job runs once and is done', async () => {
    const id = (await t.app.get(JobQueue).enqueue(COUNTED, { label: 'once' }))!;
    expect(await t.app.get(JobWorker).runDue({ types: [COUNTED] })).toBeGreaterThanOrEqual(1);
    expect(await runs('once')).toEqual([{ job_id: id, attempt: 1 }]);
    expect((await job(id)).status).toBe('done');
    expect(await t.app.get(JobWorker).runDue({ types: [COUNTED] })).toBe(0);
  });

  it('enqueue joins the caller transaction: a rolled-back caller leaves no job', async () => {
    const sql = t.app.get(Sql);
    await expect(
      sql.transaction(async () => {
        await t.app.get(JobQueue).enqueue(COUNTED, { label: 'rolled-back' }, { dedupeKey: 'rolled-back' });
        throw new Error('caller fails');
      }),
    ).rejects.toThrow('caller fails');
    expect(await t.dataSource.query(`SELECT 1 FROM jobs WHERE dedupe_key = 'rolled-back'`)).toHaveLength(0);
  });

  it('a live job with the same dedupe key is not enqueued twice', async () => {
    const queue = t.app.get(JobQueue);
    const first = await queue.enqueue(COUNTED, { label: 'dedupe' }, { dedupeKey: 'dedupe-1' });
    expect(first).not.toBeNull();
    expect(await queue.enqueue(COUNTED, { label: 'dedupe' }, { dedupeKey: 'dedupe-1' })).toBeNull();
    await t.app.get(JobWorker).runDue({ types: [COUNTED] });
    expect(await runs('dedupe')).toHaveLength(1);
  });

  it('retries with exponential back-off on the service clock, then succeeds', async () => {
    const worker = t.app.get(JobWorker);
    const id = (await t.app.get(JobQueue).enqueue(FLAKY, { label: 'retry', failures: 2 }))!;
    await worker.runDue({ types: [FLAKY] });
    let state = await job(id);
    expect(state).toMatchObject({ status: 'queued', attempts: 1, last_error: 'planned failure 1' });
    expect(state.runAtMs - t.clock.nowMs()).toBeGreaterThan(backoffMs(1, { baseMs: 10_000, maxMs: 60_000 }) - 2_000);

    // Not due yet: nothing runs.
    await worker.runDue({ types: [FLAKY] });
    expect(await runs('retry')).toHaveLength(1);

    await advance(10);
    await worker.runDue({ types: [FLAKY] });
    state = await job(id);
    expect(state).toMatchObject({ status: 'queued', attempts: 2 });
    expect(state.runAtMs - t.clock.nowMs()).toBeGreaterThan(backoffMs(2, { baseMs: 10_000, maxMs: 60_000 }) - 2_000);

    await advance(20);
    await worker.runDue({ types: [FLAKY] });
    expect((await job(id)).status).toBe('done');
    expect((await runs('retry')).map((r) => r.attempt)).toEqual([1, 2, 3]);
  });

  it('dead-letters after the last attempt: visible to the operator, who can retry it', async () => {
    const worker = t.app.get(JobWorker);
    const id = (await t.app.get(JobQueue).enqueue(FLAKY, { label: 'dead', failures: 99 }))!;
    for (let i = 0; i < 3; i++) {
      await worker.runDue({ types: [FLAKY] });
      await advance(60);
    }
    expect(await job(id)).toMatchObject({ status: 'dead', attempts: 3, last_error: 'planned failure 3' });
    await worker.runDue({ types: [FLAKY] });
    expect(await runs('dead')).toHaveLength(3);

    const dead = await t.http.get('/admin/v1/jobs?status=dead').set(operatorAuth());
    expect(dead.status).toBe(200);
    expect(dead.body.data).toContainEqual(
      expect.objectContaining({ object: 'job', id, type: FLAKY, status: 'dead', attempts: 3, lastError: 'planned failure 3' }),
    );

    const retried = await t.http.post(`/admin/v1/jobs/${id}/retry`).set(operatorAuth());
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ id, status: 'queued', attempts: 0 });
    expect((await t.http.post(`/admin/v1/jobs/${id}/retry`).set(operatorAuth())).status).toBe(400);
    expect((await t.http.post('/admin/v1/jobs/999999999/retry').set(operatorAuth())).status).toBe(404);
    expect((await t.http.get('/admin/v1/jobs?status=dead')).status).toBe(401);
  });

  it('two workers (two replicas, one database) never process one job twice', async () => {
    const replica = await createTestApp({ DATABASE_URL: t.config.databaseUrl }, { extraModules: [ProbeJobsModule] });
    try {
      const queue = t.app.get(JobQueue);
      const ids: string[] = [];
      for (let i = 0; i < 60; i++) ids.push((await queue.enqueue(COUNTED, { label: 'two-workers' }))!);
      const [a, b] = await Promise.all([t.app.get(JobWorker).runDue({ types: [COUNTED] }), replica.app.get(JobWorker).runDue({ types: [COUNTED] })]);
      expect(a + b).toBe(60);
      const executed = await runs('two-workers');
      expect(executed).toHaveLength(60);
      expect(new Set(executed.map((r) => r.job_id)).size).toBe(60);
    } finally {
      await replica.close();
    }
  });

  it('a job whose lease expired (its worker died) is taken over by another worker', async () => {
    const id = (await t.app.get(JobQueue).enqueue(COUNTED, { label: 'lease' }))!;
    // A worker that claimed it and died: running, leased until a minute from now on the database's clock.
    await jobLeasedBy(t.dataSource, id, 'dead-worker', 60_000);
    await t.app.get(JobWorker).runDue({ types: [COUNTED] });
    expect(await runs('lease')).toHaveLength(0);
    // Leases are infrastructure time: the service's test clock does not end them.
    await advance(61);
    await t.app.get(JobWorker).runDue({ types: [COUNTED] });
    expect(await runs('lease')).toHaveLength(0);
    // The minute passes on the database's clock.
    await expireJobLease(t.dataSource, id);
    await t.app.get(JobWorker).runDue({ types: [COUNTED] });
    expect(await runs('lease')).toEqual([{ job_id: id, attempt: 2 }]);
    expect((await job(id)).status).toBe('done');
  });

  it('replicas whose clocks are 62 s apart never take over a lease still held', async () => {
    const ahead = await createTestApp({ DATABASE_URL: t.config.databaseUrl }, { extraModules: [ProbeJobsModule] });
    try {
      ahead.clock.advance(Math.round((t.clock.nowMs() - ahead.clock.nowMs()) / 1000) + 62);
      const id = (await t.app.get(JobQueue).enqueue(COUNTED, { label: 'skew' }))!;
      // A replica leased it for 30 s and is still running it.
      await jobLeasedBy(t.dataSource, id, 'slow-replica', 30_000);
      await ahead.app.get(JobWorker).runDue({ types: [COUNTED] });
      expect(await runs('skew')).toHaveLength(0);
      expect(await job(id)).toMatchObject({ status: 'running', attempts: 1 });
    } finally {
      await ahead.close();
    }
  });

  it('a recurring job is due again its interval after a run ends, or after it started when it counts from the start', async () => {
    const queue = t.app.get(JobQueue);
    const worker = t.app.get(JobWorker);
    const next = async (type: string): Promise<number> =>
      Number((await t.dataSource.query(`SELECT run_at_ms::float8 AS "runAtMs" FROM jobs WHERE type = $1 AND status = 'queued'`, [type]))[0].runAtMs);
    for (const type of [REPEAT_FROM_END, REPEAT_FROM_START]) {
      await queue.enqueue(type, {}, { dedupeKey: 'recurring', runAtMs: t.clock.nowMs() });
      const startedAtMs = t.clock.nowMs();
      recurringRun.seconds = 30;
      expect(await worker.runDue({ types: [type] })).toBe(1);
      // The service clock also runs with the wall: a few ms pass between the reads of it.
      const afterStartMs = (await next(type)) - startedAtMs;
      const expectedMs = type === REPEAT_FROM_END ? 30_000 + 60_000 : 60_000;
      expect(afterStartMs).toBeGreaterThanOrEqual(expectedMs);
      expect(afterStartMs).toBeLessThan(expectedMs + 1_000);
    }

    // A run that took longer than the interval: counted from its start, the next is due at once and runs in the same poll.
    await advance(60);
    recurringRun.seconds = 70;
    expect(await worker.runDue({ types: [REPEAT_FROM_START] })).toBe(2);
    expect(await runs(REPEAT_FROM_START)).toHaveLength(3);
    expect(await next(REPEAT_FROM_START)).toBeGreaterThan(t.clock.nowMs());

    // A poll with a spent budget claims no more: the run due again at once waits for the next poll.
    await advance(60);
    recurringRun.seconds = 70;
    expect(await worker.runDue({ types: [REPEAT_FROM_START], budgetMs: 0 })).toBe(1);
    expect(await next(REPEAT_FROM_START)).toBeLessThanOrEqual(t.clock.nowMs());
    expect(await worker.runDue({ types: [REPEAT_FROM_START], budgetMs: 0 })).toBe(1);
    expect(await runs(REPEAT_FROM_START)).toHaveLength(5);
  });
});
