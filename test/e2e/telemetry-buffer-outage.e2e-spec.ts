import { type ChildProcess, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metrics } from '#platform';
import { EventBuffer } from '../../libs/telemetry/src/buffer/event-buffer.service.js';
import { createProjectWithApp, keyHeaders, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { GENEROUS } from '../support/harness/telemetry.js';
import { ProcessGuard } from '../support/processes.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { until } from '../support/nats.js';
import { freePort } from '../support/ports.js';

/**
 * The events buffer across a NATS outage in the middle of a run: batches are appended while
 * NATS answers, written to PostgreSQL before the 202 while it is down, and appended again once
 * the client has reconnected. Runs a nats-server of its own (it is killed and restarted), so it
 * is skipped where the binary is missing.
 */
function natsServerBinary(): string | undefined {
  const which = spawnSync('which', ['nats-server'], { encoding: 'utf8' });
  const found = which.status === 0 ? which.stdout.trim() : '';
  if (found) return found;
  return existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : undefined;
}

/** Resolves true once a connection to the port is greeted with the INFO line every NATS server sends first. */
function greets(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.on('error', () => done(false));
    socket.once('data', (data) => done(String(data).startsWith('INFO ')));
  });
}

/** A nats-server with JetStream on a fixed port and store directory, so a restart finds the stream again. */
class NatsServer {
  private child: ChildProcess | undefined;
  private output = '';

  constructor(
    private readonly guard: ProcessGuard,
    private readonly binary: string,
    readonly port: number,
    private readonly storeDir: string,
  ) {}

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    // Its own process group, stopped by group; the guard's reaper stops it if this process dies first.
    const child = this.guard.spawn(this.binary, ['-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.storeDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const keep = (chunk: Buffer) => (this.output = (this.output + String(chunk)).slice(-4000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    try {
      await until('nats-server to greet', async () => child.exitCode === null && child.signalCode === null && (await greets(this.port)), 10_000);
    } catch (err) {
      throw new Error(`${(err as Error).message} on port ${this.port}; its output:\n${this.output}`, { cause: err });
    }
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    this.child = undefined;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    this.guard.killGroup(child);
    await exited;
  }
}

const binary = natsServerBinary();
if (!binary) console.warn('telemetry-buffer-outage: no nats-server binary; the NATS outage suite is skipped');

(binary ? describe : describe.skip)('telemetry: the events buffer across a NATS outage mid-run', () => {
  let storeDir: string;
  let nats: NatsServer;
  let guard: ProcessGuard | undefined;
  let t: TestApp;
  let p: ProjectFixture;
  const sent: string[] = [];
  const stream = `EVENTS_outage_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

  const buffer = () => t.app.get(EventBuffer);
  const buffered = async (outcome: string) =>
    ((await t.app.get(Metrics).eventsBuffered.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0) as number;
  const batch = (size: number) => Array.from({ length: size }, () => ({ name: 'page.viewed', eventId: `evt_${randomUUID()}`, anonymousId: 'anon_outage' }));
  const send = async (events: { eventId: string }[]) => {
    sent.push(...events.map((e) => e.eventId));
    const res = await t.http.post('/v1/events').set(keyHeaders(p, p.keys.pubTest)).send({ events }).expect(202);
    expect(res.body).toEqual(expect.objectContaining({ received: events.length }));
  };
  const stored = async (ids: string[]): Promise<string[]> =>
    (await t.dataSource.query(`SELECT event_id FROM events WHERE project_id = $1 AND event_id = ANY($2::text[])`, [p.projectId, ids])).map(
      (r: { event_id: string }) => r.event_id,
    );
  const landed = (ids: string[]) => until(`${ids.length} events stored`, async () => (await stored(ids)).length === ids.length);

  beforeAll(async () => {
    guard = new ProcessGuard();
    storeDir = mkdtempSync(join(tmpdir(), 'nats-outage-'));
    guard.removeAtEnd(storeDir);
    nats = new NatsServer(guard, binary!, await freePort(), storeDir);
    await nats.start();
    t = await createTestApp({ EVENTS_BUFFER_URL: nats.url, EVENTS_BUFFER_STREAM: stream });
    p = await createProjectWithApp(t);
    await setRateLimits(t, p.projectId, GENEROUS);
    await until('the events buffer to be ready', () => buffer().ready);
  }, 60_000);

  afterAll(async () => {
    // Closing the app while NATS is down leaves its client reconnecting (the drain fails and nothing
    // closes the connection), which keeps jest from exiting: after a failure mid-outage, bring NATS back first.
    if (t && nats && !nats.running) {
      await nats.start();
      await until('the buffer to reconnect', () => t.app.get(EventBuffer).ready).catch(() => undefined);
    }
    await t?.close();
    await nats?.kill();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
    await guard?.finish();
  }, 60_000);

  it('while NATS answers, a batch is appended to the stream and the consumer stores it', async () => {
    const appended = await buffered('appended');
    const events = batch(2);
    await send(events);
    expect(await buffered('appended')).toBe(appended + 1);
    await landed(events.map((e) => e.eventId));
  });

  it('once NATS is gone, the buffer stops appending and a batch is in PostgreSQL by the time the 202 is sent', async () => {
    await nats.kill();
    await until('the buffer to notice the disconnect', () => !buffer().ready);
    const appended = await buffered('appended');
    const events = batch(3);
    await send(events);
    // No polling: the direct write happens before the answer.
    expect((await stored(events.map((e) => e.eventId))).sort()).toEqual(events.map((e) => e.eventId).sort());
    expect(await buffered('appended')).toBe(appended);
  });

  it('after NATS comes back on the same port and store, the client reconnects and batches are appended again', async () => {
    await nats.start();
    await until('the buffer to be ready again', () => buffer().ready, 15_000);
    const appended = await buffered('appended');
    const events = batch(2);
    await send(events);
    expect(await buffered('appended')).toBe(appended + 1);
    await landed(events.map((e) => e.eventId));
  }, 60_000);

  it('no batch was lost or written twice across the outage: every event sent is stored exactly once', async () => {
    expect(sent).toHaveLength(7);
    const rows: { event_id: string; copies: number; deliveries: number }[] = await t.dataSource.query(
      `SELECT event_id, count(*)::int AS copies, max(deliveries)::int AS deliveries
         FROM events WHERE project_id = $1 AND event_id = ANY($2::text[]) GROUP BY event_id`,
      [p.projectId, sent],
    );
    expect(rows.map((r) => r.event_id).sort()).toEqual([...sent].sort());
    expect(rows.every((r) => r.copies === 1 && r.deliveries === 1)).toBe(true);
  });
});
