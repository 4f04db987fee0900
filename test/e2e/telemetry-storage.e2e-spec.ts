import { EventPartitionMaintenance } from '#telemetry';
import { type ProjectFixture } from '../support/fixtures.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { telemetryHarness, DAY_MS } from '../support/harness/telemetry.js';

describe('telemetry: event storage (daily partitions, default partition, retention)', () => {
  // Partitions are shared by every tenant of a database, and these tests move the clock
  // months ahead and drop "old" days: they get a database of their own, so that suites
  // running in parallel never lose the partition they are writing to.
  const h = telemetryHarness({ ownDatabase: true });
  let t: TestApp;
  let p: ProjectFixture;
  beforeAll(() => {
    ({ t, p } = h);
  });
  const { eid, ev, send, rows } = h;

  describe('storage: daily partitions, default partition, retention', () => {
    it('events land in the partition of their client day; far-off clocks in the default partition, moved out when their day is created; old days dropped', async () => {
      const maintenance = t.app.get(EventPartitionMaintenance);
      const now = t.clock.nowMs();
      const today = ev();
      const farFuture = ev({ timestamp: now + 20 * DAY_MS });
      await send({ events: [today, farFuture] });
      const before = new Map<string, any>((await rows([today.eventId as string, farFuture.eventId as string])).map((r: any) => [r.event_id, r]));
      expect(before.get(today.eventId as string).partition).toBe(
        `events_p${new Date(today.timestamp as number).toISOString().slice(0, 10).replaceAll('-', '')}`,
      );
      expect(before.get(farFuture.eventId as string).partition).toBe('events_default');
      expect(before.get(farFuture.eventId as string).timestamp_ms).toBeLessThan(now + DAY_MS);

      const first = await maintenance.runOnce();
      expect(first.ran).toBe(true);
      await t.http
        .post('/admin/v1/test-clock/advance')
        .set(operatorAuth())
        .send({ seconds: 15 * 86_400 });
      const second = await maintenance.runOnce();
      const futureDay = `events_p${new Date(farFuture.timestamp as number).toISOString().slice(0, 10).replaceAll('-', '')}`;
      expect(second.created).toContain(futureDay);
      const moved = (await rows([farFuture.eventId as string]))[0];
      expect(moved.partition).toBe(futureDay);
      // The moved row is still de-duplicated in its new partition.
      await send({ events: [{ ...farFuture, properties: { again: true } }] });
      expect(await rows([farFuture.eventId as string])).toEqual([
        expect.objectContaining({ partition: futureDay, deliveries: 2, properties: { again: true } }),
      ]);

      await t.http
        .post('/admin/v1/test-clock/advance')
        .set(operatorAuth())
        .send({ seconds: 100 * 86_400 });
      const third = await maintenance.runOnce();
      expect(third.dropped.length).toBeGreaterThan(0);
      expect(await rows([today.eventId as string])).toHaveLength(0);
      const partitions = await maintenance.partitions();
      expect(partitions).toContain('events_default');
      expect(
        partitions.every(
          (name) => name === 'events_default' || name >= `events_p${new Date(t.clock.nowMs() - 90 * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '')}`,
        ),
      ).toBe(true);
    });

    it("a new day's partition is attached even when an insert of that day lands in the default partition meanwhile", async () => {
      const maintenance = t.app.get(EventPartitionMaintenance);
      await maintenance.runOnce();
      // The first day past the partitions kept ahead: its events go to the default partition.
      const day = Math.floor(t.clock.nowMs() / DAY_MS) + 8;
      const name = `events_p${new Date(day * DAY_MS).toISOString().slice(0, 10).replaceAll('-', '')}`;
      expect(await maintenance.partitions()).not.toContain(name);
      const eventId = eid();
      const writer = t.dataSource.createQueryRunner();
      await writer.connect();
      await writer.startTransaction();
      try {
        // An ingestion still in flight when the job creates the day.
        await writer.query(
          `INSERT INTO events (project_id, env, event_id, client_day, app_id, name, timestamp_ms, received_at_ms)
           VALUES ($1, 'sandbox', $2, DATE '1970-01-01' + $3::int, $4, 'late.write', $5, $5)`,
          [p.projectId, eventId, day, p.appId, t.clock.nowMs()],
        );
        await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 86_400 });
        const run = maintenance.runOnce();
        for (let waited = 0; ; waited += 20) {
          const [{ n }] = await t.dataSource.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          if (n > 0) break;
          if (waited > 4000) throw new Error('the maintenance never waited on the in-flight insert');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await writer.commitTransaction();
        expect((await run).created).toContain(name);
      } finally {
        if (writer.isTransactionActive) await writer.rollbackTransaction();
        await writer.release();
      }
      expect((await rows([eventId]))[0]).toMatchObject({ partition: name, name: 'late.write' });
    });

    it('a busy events table postpones a partition drop a little, and inserts keep flowing meanwhile', async () => {
      const maintenance = t.app.get(EventPartitionMaintenance);
      await maintenance.runOnce();
      const inFlight = t.dataSource.createQueryRunner();
      await inFlight.connect();
      await inFlight.startTransaction();
      try {
        // What an insert in flight holds on the parent table.
        await inFlight.query('LOCK TABLE events IN ROW EXCLUSIVE MODE');
        const run = maintenance.runOnce(1); // a one-day retention: there are days to drop
        for (let waited = 0; ; waited += 20) {
          const [{ n }] = await t.dataSource.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'DROP TABLE%'`,
          );
          if (n > 0) break;
          if (waited > 4000) throw new Error('the maintenance never tried to drop');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const sent = await send({ events: [ev()] });
        expect(sent.status).toBe(202);
        await inFlight.commitTransaction();
        const summary = await run;
        expect(summary.dropped.length).toBeGreaterThan(0);
      } finally {
        if (inFlight.isTransactionActive) await inFlight.rollbackTransaction();
        await inFlight.release();
      }
    });
  });
});
