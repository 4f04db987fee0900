// Phase 3 of bench/run.mjs: the hot reads, api against the bare baseline replaying the API's own
// statements (captured from a throw-away API copy preloaded with bench/capture-sql.mjs).
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_ENTRY as apiEntry, ROOT as root, freePort, stop, waitForHttp, startNode as start, apiEnv } from '../lib/common.mjs';
import { ORIGIN, readRoutes, seedReaders, selectRoutes } from '../lib/read-routes.mjs';
import { bodySource } from '../lib/event-bodies.mjs';
import { DURATION, PHASES, coreShare, cpuMsPerRequest, drive, generatorLine, leastStolen, log, mean, paced, settle, withCpu } from '../lib/harness.mjs';

// ---- reads ----------------------------------------------------------------------------------

export const READ_USERS = Number(process.env.BENCH_READ_USERS ?? 2000);
export const READ_DURATION = Number(process.env.BENCH_READ_DURATION ?? Math.min(DURATION, 10));
export const READ_CONNECTIONS = Number(process.env.BENCH_READ_CONNECTIONS ?? 16);
/**
 * Seconds of unmeasured closed-loop load on each server before a route's measured runs (its
 * code compiled, its rows cached). 5: after 2 s the API's first round of the first route still
 * ran at 1,050 – 1,261 req/s and its second at 1,532 – 1,572; after 5 s both agreed.
 */
export const READ_WARMUP = Number(process.env.BENCH_READ_WARMUP ?? 5);
/**
 * Closed-loop rounds per route, in the order api, bare, then bare, api (and so on): the same
 * process served the same route at 0.51 and 0.83 ms of CPU per request in runs minutes apart,
 * so one run of each is at the mercy of whatever the machine's neighbours do in those seconds;
 * alternating and averaging cancels a drift over the phase (phase 1 rotates its rounds too).
 */
export const READ_ROUNDS = Math.max(1, Number(process.env.BENCH_READ_ROUNDS ?? 2));

/**
 * Records, in a throw-away copy of the API started with bench/capture-sql.mjs, the statements
 * one warmed-up request of each read route issues; the bare baseline replays them.
 */
export async function captureReads(routes, capture) {
  const out = [];
  for (const route of routes) {
    const request = route.next();
    const send = (extra = {}) =>
      fetch(capture.base + request.path, {
        method: request.method,
        headers: { ...route.headers, 'content-type': 'application/json', ...extra },
        body: request.body,
      });
    await send(); // warms the key cache: the captured request is a steady-state one
    const id = randomBytes(6).toString('hex');
    const res = await send({ 'x-bench-capture': id });
    const response = await res.json();
    if (res.status >= 300) throw new Error(`${route.name}: ${res.status} ${JSON.stringify(response)}`);
    const statements = await (await fetch(`${capture.base}/__bench/captured?id=${id}`)).json();
    out.push({ method: request.method, prefix: route.prefix, statements, status: res.status, response });
    log(
      `  ${route.name.padEnd(34)} ${statements.length} statement(s), ${statements.filter((s) => s.name).length} prepared: ${statements.map((s) => s.sql.replace(/\s+/g, ' ').trim().slice(0, 40)).join(' | ')}`,
    );
  }
  return out;
}

export function summariseRead(result) {
  return {
    rps: Math.round(result['2xx'] / result.duration),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** Drives one closed-loop run and returns its summary with CPU per request of the server process and of PostgreSQL. */
export async function saturateRead(target, next) {
  const {
    value: run,
    serverSeconds,
    postgresSeconds,
    stolen,
  } = await withCpu(target.pid, () => drive({ url: target.url, headers: target.headers, connections: READ_CONNECTIONS, duration: READ_DURATION, next }));
  const result = summariseRead(run);
  result.stolen = stolen;
  result.cpuMs = cpuMsPerRequest(serverSeconds, result.rps * READ_DURATION);
  result.pgCpuMs = cpuMsPerRequest(postgresSeconds, result.rps * READ_DURATION);
  return result;
}

/** The mean of a route's closed-loop rounds on one server (errors summed; `stolen`, the largest steal share of its rounds, null when one round has none). */
export function meanOfReads(runs) {
  const avg = (pick, digits) => {
    const values = runs.map(pick);
    return values.some((v) => v === null || v === undefined) ? null : mean(values, digits);
  };
  return {
    rps: avg((r) => r.rps, 0),
    p99: avg((r) => r.p99, 1),
    cpuMs: avg((r) => r.cpuMs, 3),
    pgCpuMs: avg((r) => r.pgCpuMs, 3),
    stolen: runs.some((r) => r.stolen === null) ? null : Math.max(...runs.map((r) => r.stolen)),
    non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
    errors: runs.reduce((a, r) => a + r.errors, 0),
  };
}

/**
 * The bare baseline's reads come in two forms: plain statements (the goal's baseline, pg's
 * default, as it was measured at 84a29e2; the goal's) and, with this header, the statements the
 * API prepares run prepared too (printed beside it, so the API's own overhead stays visible).
 */
export const PREPARED_BARE_HEADERS = { 'x-bench-prepared': '1' };

export async function readPhase(route, api, bare) {
  if (READ_WARMUP > 0)
    for (const [url, headers] of [
      [api.base, route.headers],
      [bare.url, {}],
      [bare.url, PREPARED_BARE_HEADERS],
    ])
      await drive({ url, headers, connections: READ_CONNECTIONS, duration: READ_WARMUP, next: route.next });
  const apiSide = { label: 'api', target: { url: api.base, headers: route.headers, pid: api.proc.child.pid }, runs: [] };
  const bareSide = { label: 'bare', target: { url: bare.url, headers: {}, pid: bare.pid }, runs: [] };
  const preparedSide = { label: 'bare prepared', target: { url: bare.url, headers: PREPARED_BARE_HEADERS, pid: bare.pid }, runs: [] };
  for (let round = 0; round < READ_ROUNDS; round++)
    for (const side of round % 2 === 0 ? [apiSide, bareSide, preparedSide] : [preparedSide, bareSide, apiSide])
      side.runs.push(await leastStolen(`${route.name}, ${side.label} closed loop`, () => saturateRead(side.target, route.next)));
  const apiSat = meanOfReads(apiSide.runs);
  const bareSat = meanOfReads(bareSide.runs);
  const preparedSat = meanOfReads(preparedSide.runs);
  const rate = Math.max(1, Math.round(bareSat.rps * 0.5));
  // CPU per request at the same offered rate, where neither side's PostgreSQL backends find
  // the next statement already queued more often than the other's (as in the closed loop).
  // Measured again while the host takes the CPU (leastStolen), as the ingestion's atRate is.
  const atRate = ({ label, target: { url, headers, pid } }) =>
    leastStolen(`${route.name}, ${label} at ${rate} req/s`, async () => {
      const measured = await withCpu(pid, () =>
        paced({ url, headers, connections: READ_CONNECTIONS, duration: READ_DURATION, rate, next: route.next, perRequest: 1 }),
      );
      const { sent } = measured.value;
      return { ...measured.value, cpuMs: cpuMsPerRequest(measured.serverSeconds, sent), pgCpuMs: cpuMsPerRequest(measured.postgresSeconds, sent) };
    });
  const paced50 = await atRate(apiSide);
  // The same open-loop load on the bare baseline: what this machine's p99 is when nothing but the queries runs.
  const barePaced = await atRate(bareSide);
  const ratio = apiSat.rps / Math.max(1, bareSat.rps);
  const preparedRatio = apiSat.rps / Math.max(1, preparedSat.rps);
  const cpu = (r) => `CPU/req ${r.cpuMs ?? '?'} ms + postgres ${r.pgCpuMs ?? '?'} ms`;
  const pacedCpu = (r) => `${cpu(r)}, server ${coreShare(r.cpuMs, rate)}`;
  const each = (runs) => (runs.length > 1 ? ` [${runs.map((r) => r.rps).join(', ')}]` : '');
  log(
    `  ${route.name.padEnd(34)} api ${apiSat.rps} req/s${each(apiSide.runs)} (p99 ${apiSat.p99} ms, ${cpu(apiSat)}) | bare ${bareSat.rps} req/s${each(bareSide.runs)} (p99 ${bareSat.p99} ms, ${cpu(bareSat)}) | ` +
      `ratio ${ratio.toFixed(2)} | bare, prepared ${preparedSat.rps} req/s${each(preparedSide.runs)} (p99 ${preparedSat.p99} ms, ${cpu(preparedSat)}), ratio ${preparedRatio.toFixed(2)} | at ${rate} req/s: api p50 ${paced50.p50} ms, p99 ${paced50.p99} ms (${pacedCpu(paced50)}; ${generatorLine(paced50)}), bare p50 ${barePaced.p50} ms, p99 ${barePaced.p99} ms (${pacedCpu(barePaced)}; ${generatorLine(barePaced)}) | non-2xx/errors ${apiSat.non2xx + apiSat.errors + paced50.non2xx + paced50.errors}`,
  );
  return { name: route.name, api: apiSat, bare: bareSat, prepared: preparedSat, ratio, preparedRatio, rate, paced: paced50, barePaced };
}

/**
 * Seeds the readers, records the statements of each read route with a throw-away API copy, then
 * starts the bare baseline on the API's database with them (`procs` collects the processes).
 */
export async function prepareReads(api, apiDb, procs) {
  // Reads: seed, capture the statements with a throw-away API copy, then start the baseline with them.
  log('');
  log(`Seeding ${READ_USERS} identified users with entitlements ...`);
  const users = await seedReaders(api, READ_USERS);
  const routes = readRoutes(api, users);
  const capturePort = await freePort();
  const captureProc = start('capture', apiEntry, apiEnv(apiDb.url, capturePort, api.operatorToken), `--import=${path.join(root, 'bench/capture-sql.mjs')}`);
  procs.push(captureProc);
  await waitForHttp(captureProc, `http://127.0.0.1:${capturePort}/v1/healthz`);
  log('Statements per read (captured from the API, replayed by the bare baseline):');
  // POST /v1/events is captured too, for the record (the baseline serves events with its own statement).
  const eventsBodies = bodySource();
  const eventsRoute = {
    name: 'POST /v1/events',
    headers: { authorization: `Bearer ${api.publishable}`, origin: ORIGIN },
    prefix: '/v1/events',
    next: () => ({ method: 'POST', path: '/v1/events', body: eventsBodies.next() }),
  };
  const captured = await captureReads([...routes, eventsRoute], { base: `http://127.0.0.1:${capturePort}` });
  await stop(captureProc);
  const readsFile = path.join(os.tmpdir(), `bench-reads-${process.pid}.json`);
  writeFileSync(readsFile, JSON.stringify(captured));

  // One bare baseline on the API's database: its events go to its own project, its reads replay the API's statements (same rows, same plans).
  const basePort = await freePort();
  const baseline = start(
    'baseline',
    path.join(root, 'bench/baseline.mjs'),
    { DATABASE_URL: apiDb.url, PORT: String(basePort), HOST: '127.0.0.1', READS_FILE: readsFile },
    process.env.BENCH_BASELINE_NODE_ARGS,
  );
  procs.push(baseline);
  await waitForHttp(baseline, `http://127.0.0.1:${basePort}/`);
  const bare = { url: `http://127.0.0.1:${basePort}`, pid: baseline.child.pid };
  return { routes, readsFile, basePort, baseline, bare };
}

/** Phase 3: each selected read route (only the first when just the scale phase needs it). */
export async function readsPhase(routes, api, bare) {
  log('');
  if (PHASES.has('reads') || PHASES.has('scale')) await settle(api.dbUrl);
  log(
    `3. Reads: ${READ_CONNECTIONS} connections, ${READ_DURATION} s per run, ${READ_ROUNDS} alternating closed-loop round(s) per server (mean; each round's req/s in brackets), ` +
      `${READ_USERS} users in rotation; open loop at 50 % of the bare saturation:`,
  );
  const readResults = [];
  if (PHASES.has('reads') || PHASES.has('scale'))
    for (const route of PHASES.has('reads') ? selectRoutes(routes, process.env.BENCH_READ_ROUTES) : routes.slice(0, 1))
      readResults.push(await readPhase(route, api, bare));
  return readResults;
}
