import { randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { Metrics } from '#platform';
import { EventBuffer } from '../../libs/telemetry/src/buffer/event-buffer.service.js';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { createTestDatabase, dropTestDatabase, type TestDatabaseHandle } from '../support/test-database.js';
import { GENEROUS } from '../support/harness/telemetry.js';
import { natsGreets, until } from '../support/nats.js';
import { freePort } from '../support/ports.js';

/**
 * The optional JetStream buffer in front of PostgreSQL (EVENTS_BUFFER_URL,
 * docs/decisions/the-optional-jetstream-events-buffer.md).
 * Runs against the machine's NATS server (TEST_NATS_URL, default nats://127.0.0.1:4222) on a
 * stream of its own, deleted afterwards; skipped where no NATS server answers (a fresh machine
 * without one: the buffer is optional and off by default).
 */
const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

const natsAnswers = natsGreets(NATS_URL);
if (!natsAnswers) console.warn(`telemetry-buffer: no NATS server at ${NATS_URL}; the buffered-ingestion suite is skipped`);

(natsAnswers ? describe : describe.skip)('telemetry: the JetStream events buffer (EVENTS_BUFFER_URL)', () => {
  // Holds an exclusive lock on events in one test: the suite has a database of its own.
  let db: TestDatabaseHandle;
  let t: TestApp;
  let p: ProjectFixture;
  const stream = `EVENTS_test_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const bufferEnv = () => ({ DATABASE_URL: db.url, EVENTS_BUFFER_URL: NATS_URL, EVENTS_BUFFER_STREAM: stream, DB_STATEMENT_TIMEOUT_MS: '1000' });

  const ev = (overrides: Record<string, unknown> = {}) => ({
    name: 'page.viewed',
    eventId: `evt_${randomUUID()}`,
    timestamp: t.clock.nowMs() - 1000,
    anonymousId: 'anon_buffer',
    properties: { path: '/pricing' },
    ...overrides,
  });
  const send = (app: TestApp, body: object) => app.http.post('/v1/events').set(keyHeaders(p, p.keys.pubTest)).send(body);
  const rows = (ids: string[]) =>
    t.dataSource.query(
      `SELECT event_id, name, app_id, properties, anonymous_id, deliveries, sdk_name, sdk_version, received_at_ms::float8 AS received_at_ms
         FROM events WHERE project_id = $1 AND event_id = ANY($2::text[]) ORDER BY event_id`,
      [p.projectId, ids],
    );
  // Up to 30 s: a batch JetStream delivered to a replica that was stopping comes back after the 10 s ack wait.
  const landed = (ids: string[], deliveries = 1) =>
    until(
      `${ids.length} events stored`,
      async () => {
        const found = await rows(ids);
        return found.length === ids.length && found.every((r: { deliveries: number }) => r.deliveries >= deliveries) && found;
      },
      30_000,
    );
  const ready = (app: TestApp) => until('the events buffer', async () => app.app.get(EventBuffer).ready);
  const buffered = async (app: TestApp, outcome: string) =>
    ((await app.app.get(Metrics).eventsBuffered.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0) as number;

  beforeAll(async () => {
    db = await createTestDatabase();
    t = await createTestApp(bufferEnv());
    p = await createProjectWithApp(t);
    await setRateLimits(t, p.projectId, GENEROUS);
    await ready(t);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    const nc = await connect({ servers: NATS_URL });
    await (await jetstreamManager(nc)).streams.delete(stream).catch(() => undefined);
    await nc.close();
    if (db) await dropTestDatabase(db);
  });

  it('acknowledges after the append; the consumer stores the batch as the direct path would, error issues included', async () => {
    const before = await buffered(t, 'appended');
    const events = [ev(), ev({ name: 'checkout.failed', level: 'error', properties: { fingerprint: 'abcd0123', message: 'boom' } })];
    const sentAt = t.clock.nowMs();
    const res = await send(t, { events, appId: p.appId, sdk: { name: 'web', version: '2.1.0' } }).expect(202);
    const answeredAt = t.clock.nowMs();
    expect(res.body).toEqual({ object: 'list', received: 2, env: 'sandbox' });
    expect(await buffered(t, 'appended')).toBe(before + 1);

    const stored = await landed(events.map((e) => e.eventId));
    expect(stored).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ event_id: events[0].eventId, name: 'page.viewed', app_id: p.appId, properties: { path: '/pricing' } }),
        expect.objectContaining({ event_id: events[1].eventId, anonymous_id: 'anon_buffer', sdk_name: 'web', sdk_version: '2.1.0', deliveries: 1 }),
      ]),
    );
    // The receive time is the request's, not the consumer's.
    expect(stored[0].received_at_ms).toBeGreaterThanOrEqual(sentAt);
    expect(stored[0].received_at_ms).toBeLessThanOrEqual(answeredAt);
    expect(stored[1].received_at_ms).toBe(stored[0].received_at_ms);
    const issues = await until('the error issue', async () => {
      const found = await t.dataSource.query(`SELECT event_count::int AS event_count FROM error_issues WHERE project_id = $1 AND fingerprint = 'abcd0123'`, [
        p.projectId,
      ]);
      return found.length > 0 && found;
    });
    expect(issues).toEqual([{ event_count: 1 }]);
  });

  it('a retry with the same eventId lands on its own row; invalid batches are still refused before anything is appended', async () => {
    const first = ev();
    await send(t, { events: [first] }).expect(202);
    await landed([first.eventId]);
    await send(t, { events: [{ ...first, properties: { path: '/again' } }] }).expect(202);
    const [row] = await landed([first.eventId], 2);
    expect(row).toEqual(expect.objectContaining({ deliveries: 2, properties: { path: '/again' } }));

    const appended = await buffered(t, 'appended');
    const res = await send(t, { events: [ev(), { name: '' }] }).expect(400);
    expect(res.body.error.code).toBe('invalid_param_value');
    expect(await buffered(t, 'appended')).toBe(appended);
  });

  it('acknowledges while PostgreSQL cannot take the write; a replica that stops mid-write loses nothing: another one stores the batches', async () => {
    // A connection of its own: the lock must outlive the first replica's pool.
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    let second: TestApp | undefined;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
      // Three batches, acknowledged one after the other while the consumer cannot write.
      const events = [ev(), ev(), ev()];
      const windows: [number, number][] = [];
      for (const event of events) {
        const sentAt = t.clock.nowMs();
        const started = Date.now();
        await send(t, { events: [event] }).expect(202);
        expect(Date.now() - started).toBeLessThan(1000);
        windows.push([sentAt, t.clock.nowMs()]);
      }
      // The consumer's write waits on the lock until its statement times out, and the batch is handed out again.
      await until('a failed write', async () => (await buffered(t, 'retried')) > 0);
      await t.close();
      await locker.query('COMMIT');

      second = await createTestApp(bufferEnv());
      t = second;
      await ready(second);
      const stored = await landed(events.map((e) => e.eventId));
      expect(stored).toHaveLength(3);
      // Written together or not, each event keeps the receive time of its own request.
      const byId = new Map(stored.map((r: { event_id: string; received_at_ms: number }) => [r.event_id, r.received_at_ms]));
      events.forEach((e, i) => {
        expect(byId.get(e.eventId)).toBeGreaterThanOrEqual(windows[i][0]);
        expect(byId.get(e.eventId)).toBeLessThanOrEqual(windows[i][1]);
      });
    } finally {
      await locker.end();
    }
  }, 60_000);

  it('batches that cannot share a statement (an event and its retry) are written one by one, none lost', async () => {
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
      // The consumer's write of the first filler waits on the lock; the rest, the event and its retry among them, pile up behind it.
      const fillers = [ev(), ev()];
      for (const filler of fillers) await send(t, { events: [filler] }).expect(202);
      const original = ev();
      await send(t, { events: [original] }).expect(202);
      await send(t, { events: [{ ...original, properties: { path: '/retried' } }] }).expect(202);
      await new Promise((resolve) => setTimeout(resolve, 300));
      // Taken together, they make one statement that would touch one row twice: it fails, and they go one by one, in order.
      await locker.query('COMMIT');
      await landed(fillers.map((f) => f.eventId));
      const [row] = await landed([original.eventId], 2);
      expect(row).toEqual(expect.objectContaining({ deliveries: 2, properties: { path: '/retried' } }));
    } finally {
      await locker.end();
    }
  }, 60_000);
});

describe('telemetry: the events buffer fails open to the direct write', () => {
  let t: TestApp;
  let p: ProjectFixture;
  beforeAll(async () => {
    t = await createTestApp({ EVENTS_BUFFER_URL: `nats://127.0.0.1:${await freePort()}` });
    p = await createProjectWithApp(t);
    await setRateLimits(t, p.projectId, GENEROUS);
  }, 60_000);
  afterAll(() => t?.close());

  it('with no NATS server answering, a batch is written to PostgreSQL before the 202', async () => {
    expect(t.app.get(EventBuffer).enabled).toBe(true);
    expect(t.app.get(EventBuffer).ready).toBe(false);
    const eventId = `evt_${randomUUID()}`;
    await t.http
      .post('/v1/events')
      .set(keyHeaders(p, p.keys.pubTest))
      .send({ events: [{ name: 'app.opened', eventId, anonymousId: 'anon_direct' }] })
      .expect(202);
    const found = await t.dataSource.query(`SELECT name FROM events WHERE project_id = $1 AND event_id = $2`, [p.projectId, eventId]);
    expect(found).toEqual([{ name: 'app.opened' }]);
  });
});
