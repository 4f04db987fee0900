// Open-loop load at a steady rate, generated in a worker thread of its own.
//
// Request i is due at start + i / rate, whatever happened before; its latency is measured
// from that due time, so waiting for one of the `connections` keep-alive sockets counts (no
// coordinated omission). autocannon's own overallRate is not used: it releases each
// connection's per-second quota at the start of every second, i.e. it sends in bursts.
// Because latency counts from the due time, a stall of the generator itself (its event loop
// busy, its garbage collector running) is counted as the server's latency. The generator
// therefore runs on a fresh heap in a worker that does nothing else: in the bench's main
// thread, which also holds the closed-loop runs' results, the database clients and the
// servers' pipes, its scavenges took 4 - 13 ms every 160 - 250 ms (2.5 MB promoted per
// scavenge at 4,000 requests/s), each one a cluster of late requests on whichever server was
// being measured. It keeps nothing per request but its latency in a typed array.
//
// The result names the generator's own longest event-loop delay and garbage collection in
// the measured window, so a reader can see how much of a p99 the generator could explain,
// and the machine's pressure stall time in it (Linux PSI): how long some or all runnable
// tasks waited for I/O, and some for a CPU, which no process's own figures show; and how
// much of the CPU the hypervisor gave to other guests (steal).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { bodySource } from './event-bodies.mjs';

/**
 * Runs one paced load in a worker thread and answers its result. `requests`: the requests to
 * send in order ({ method, path, body? }, as many as lead-in and measured window need; cycled
 * if fewer), or `events: true` for the realistic event batches (generated in the worker:
 * POST to the url's path). The first `leadInSeconds` run at the same rate, unmeasured.
 */
export function pacedLoad({ url, headers, connections, duration, rate, leadInSeconds, requests, events = false, debug = false }) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), {
      workerData: { pacedLoad: { url, headers, connections, duration, rate, leadInSeconds, requests, events, debug } },
    });
    let result;
    worker.once('message', (message) => (result = message));
    worker.once('error', reject);
    worker.once('exit', (code) => (result ? resolve(result) : reject(new Error(`the paced load's worker exited with ${code} and no result`))));
  });
}

/** Requests a builder gives for a paced run of `duration` s at `rate` after `leadInSeconds` (for pacedLoad's `requests`). */
export function plannedRequests(next, { rate, duration, leadInSeconds }) {
  const count = Math.floor(rate * leadInSeconds) + Math.floor(rate * duration);
  return Array.from({ length: count }, () => next());
}

async function run({ url, headers, connections, duration, rate, leadInSeconds, requests, events, debug }) {
  const target = new URL(url);
  const bodies = events ? bodySource() : null;
  const nextRequest = events ? () => ({ method: 'POST', path: target.pathname, body: bodies.next() }) : (i) => requests[i % requests.length];
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const interval = 1000 / rate;
  const leadIn = Math.floor(rate * leadInSeconds);
  const measuredCount = Math.floor(rate * duration);
  const total = leadIn + measuredCount;
  // Latency of measured request i at [i]; NaN while unanswered or when it failed.
  const latencies = new Float64Array(measuredCount).fill(NaN);
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let settled = 0;
  let allSettled;
  const done = new Promise((resolve) => (allSettled = resolve));
  const settle = () => {
    if (++settled === total) allSettled();
  };
  const stalls = generatorStalls();
  const pressure = machinePressure();
  const start = performance.now() + 20 + leadInSeconds * 1000;
  for (let n = 0; n < total; n++) {
    const i = n - leadIn;
    const due = start + i * interval;
    if (i === 0) {
      stalls.start();
      pressure.start();
    }
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const { method, path: requestPath, body } = nextRequest(n);
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: requestPath,
        method,
        agent,
        headers: { 'content-type': 'application/json', ...(body === undefined ? {} : { 'content-length': Buffer.byteLength(body) }), ...headers },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (i >= 0) {
            latencies[i] = performance.now() - due;
            if (res.statusCode >= 200 && res.statusCode < 300) ok++;
            else non2xx++;
          }
          settle();
        });
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.on('error', () => {
      if (i >= 0) errors++;
      settle();
    });
    req.end(body);
  }
  await done;
  const elapsed = (performance.now() - start) / 1000;
  const generator = { ...stalls.stop(), machine: pressure.stop() };
  agent.destroy();
  const answered = latencies.filter((l) => !Number.isNaN(l));
  let slowest;
  if (debug) {
    const order = Array.from(latencies.keys()).filter((i) => !Number.isNaN(latencies[i]));
    order.sort((a, b) => latencies[b] - latencies[a]);
    slowest = order.slice(0, 30).map((i) => [latencies[i], i * interval]);
  }
  answered.sort();
  const at = (q) => (answered.length === 0 ? NaN : Math.round(answered[Math.min(answered.length - 1, Math.floor(answered.length * q))] * 10) / 10);
  return {
    /** Requests sent, the lead-in's included (CPU per request is measured across both). */
    sent: total,
    ok,
    elapsed,
    p50: at(0.5),
    p99: at(0.99),
    max: at(1),
    non2xx,
    errors,
    generator,
    startedAt: Math.round(Date.now() - (performance.now() - start)),
    slowest,
  };
}

/** The generator's longest event-loop delay and garbage collections while the window is measured. */
function generatorStalls() {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  let gcMax = 0;
  let gcTotal = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcMax = Math.max(gcMax, entry.duration);
      gcTotal += entry.duration;
    }
  });
  return {
    start() {
      delay.enable();
      gc.observe({ entryTypes: ['gc'] });
    },
    stop() {
      delay.disable();
      gc.disconnect();
      const ms = (ns) => Math.round(ns / 1e5) / 10;
      return { loopDelayMax: ms(delay.max), loopDelayP99: ms(delay.percentile(99)), gcMax: Math.round(gcMax * 10) / 10, gcTotal: Math.round(gcTotal) };
    },
  };
}

/**
 * The share of the machine's CPU time its hypervisor gave to other guests (steal, in
 * /proc/stat) from now until `stop()`, as a fraction (null without /proc/stat). No process's
 * own figures show it: on the reference machine the host once took 36 % of this machine's CPU
 * over one minute and up to 72 % in single seconds, and the windows it fell in missed their
 * millisecond goals, the bare baselines' included.
 */
export function cpuSteal() {
  const read = () => {
    try {
      // user nice system idle iowait irq softirq steal (guest time is already in user)
      const ticks = readFileSync('/proc/stat', 'utf8')
        .match(/^cpu +(.*)$/m)[1]
        .trim()
        .split(/\s+/)
        .slice(0, 8)
        .map(Number);
      return { steal: ticks[7], total: ticks.reduce((a, b) => a + b, 0) };
    } catch {
      return null;
    }
  };
  const before = read();
  return {
    stop() {
      const after = read();
      if (!before || !after || after.total <= before.total) return null;
      return (after.steal - before.steal) / (after.total - before.total);
    },
  };
}

/** A steal share (cpuSteal) for a log line. */
export const stealPercent = (share) => `${share < 0.1 ? (share * 100).toFixed(1) : Math.round(share * 100)} %`;

/**
 * The machine's pressure stall time during the window, in ms (null without /proc/pressure):
 * ioSome, some runnable task waited for I/O; ioFull, every one did; cpuSome, some waited for
 * a CPU (on two cores under this load, most of the time); and `stolen`, the share of the
 * CPU the hypervisor took (cpuSteal).
 */
function machinePressure() {
  const read = () => {
    try {
      const io = readFileSync('/proc/pressure/io', 'utf8');
      const cpu = readFileSync('/proc/pressure/cpu', 'utf8');
      const total = (text, kind) => Number(text.match(new RegExp(`^${kind} .*total=(\\d+)`, 'm'))[1]);
      return { ioSome: total(io, 'some'), ioFull: total(io, 'full'), cpuSome: total(cpu, 'some') };
    } catch {
      return null;
    }
  };
  let before = null;
  let steal = null;
  return {
    start() {
      before = read();
      steal = cpuSteal();
    },
    stop() {
      const after = read();
      if (!before || !after) return null;
      const ms = (key) => Math.round((after[key] - before[key]) / 1000);
      return { ioSome: ms('ioSome'), ioFull: ms('ioFull'), cpuSome: ms('cpuSome'), stolen: steal.stop() };
    },
  };
}

if (!isMainThread && workerData?.pacedLoad) parentPort.postMessage(await run(workerData.pacedLoad));
