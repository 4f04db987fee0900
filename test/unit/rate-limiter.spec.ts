import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { testScope } from '../support/scopes.js';
import {
  ApiError,
  type AppConfig,
  type AppLogger,
  type BucketRule,
  type BucketStore,
  type Clock,
  InProcessBucketStore,
  DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
  RateLimiterService,
  RedisBucketStore,
  type TenantScope,
  loadConfig,
} from '#platform';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';

/** Decided at collection time (synchronously) so that the Redis cases are reported as skipped. */
function redisAnswersPing(url: string): boolean {
  const { hostname, port } = new URL(url);
  const probe = `
    const s = require('node:net').connect(${Number(port) || 6379}, ${JSON.stringify(hostname)});
    const fail = () => process.exit(1);
    s.setTimeout(1000, fail); s.on('error', fail);
    s.on('connect', () => s.write('PING\\r\\n'));
    s.on('data', (d) => process.exit(/^(\\+PONG|-NOAUTH)/.test(String(d)) ? 0 : 1));`;
  return spawnSync(process.execPath, ['-e', probe], { timeout: 3000 }).status === 0;
}
const redisAvailable = redisAnswersPing(REDIS_URL);
const describeRedis = redisAvailable ? describe : describe.skip;

const T0 = 1_700_000_000_000;

class FakeClock {
  constructor(public ms = T0) {}
  nowMs(): number {
    return this.ms;
  }
  nowSeconds(): number {
    return Math.floor(this.ms / 1000);
  }
  now(): Date {
    return new Date(this.ms);
  }
  advanceMs(ms: number): void {
    this.ms += ms;
  }
}

function captureLogger(): { logger: AppLogger; lines: () => Array<Record<string, any>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const logger = pino({ level: 'info', base: undefined }, stream);
  return {
    logger,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
  };
}

function config(env: Record<string, string> = {}): AppConfig {
  return loadConfig({ NODE_ENV: 'test', ...env });
}

function scope(env: TenantScope['env'] = 'sandbox'): TenantScope {
  return testScope(`proj_${randomUUID()}`, env);
}

const rule: BucketRule = { sustained: 10, burst: 100 };

describe('RateLimiterService (in-process store)', () => {
  let clock: FakeClock;
  let limiter: RateLimiterService;

  beforeEach(() => {
    clock = new FakeClock();
    limiter = new RateLimiterService(config(), clock as unknown as Clock, captureLogger().logger);
  });
  afterEach(() => limiter.onModuleDestroy());

  it('allows a burst from an idle bucket, then throws 429 with Retry-After and X-Service-Sample-Rate', async () => {
    const s = scope();
    for (let i = 0; i < 100; i++) await limiter.enforce(s, 'events', rule);
    const error = await limiter.enforce(s, 'events', rule).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    const apiError = error as ApiError;
    expect(apiError.status).toBe(429);
    expect(apiError.type).toBe('rate_limit_error');
    expect(apiError.code).toBe('rate_limited');
    // One token at 10/s comes back in 100 ms; Retry-After is whole seconds, at least 1.
    expect(apiError.headers).toEqual({ 'Retry-After': '1', 'X-Service-Sample-Rate': '0.1' });
  });

  it('Retry-After covers the whole cost of an all-or-nothing call', async () => {
    const s = scope();
    await limiter.enforce(s, 'events', rule, 100);
    const error = (await limiter.enforce(s, 'events', rule, 50).catch((e: unknown) => e)) as ApiError;
    expect(error.status).toBe(429);
    expect(error.headers?.['Retry-After']).toBe('5');
  });

  it('take() reports the decision without throwing', async () => {
    const s = scope();
    const first = await limiter.take(s, 'events', rule, 60);
    expect(first).toEqual({ requested: 60, granted: 60, tokensLeft: 40, retryAfterMs: 0, sampleRate: 1, failedOpen: false });
    const second = await limiter.take(s, 'events', rule, 60);
    expect(second).toEqual({ requested: 60, granted: 0, tokensLeft: 40, retryAfterMs: 2000, sampleRate: 0.1, failedOpen: false });
  });

  it('partial take lands what fits and says when the rest can follow', async () => {
    const s = scope();
    await limiter.take(s, 'events', rule, 90);
    const decision = await limiter.take(s, 'events', rule, 25, { partial: true });
    expect(decision.granted).toBe(10);
    expect(decision.requested).toBe(25);
    expect(decision.tokensLeft).toBe(0);
    expect(decision.retryAfterMs).toBe(1500);
    expect(decision.sampleRate).toBeCloseTo(0.4, 10);
    expect(decision.failedOpen).toBe(false);
  });

  it('refills linearly as the clock advances, capped at the burst', async () => {
    const s = scope();
    await limiter.take(s, 'events', rule, 100);
    expect((await limiter.take(s, 'events', rule, 1)).granted).toBe(0);
    clock.advanceMs(500);
    expect((await limiter.take(s, 'events', rule, 5, { partial: true })).granted).toBe(5);
    expect((await limiter.take(s, 'events', rule, 1)).granted).toBe(0);
    clock.advanceMs(3_600_000);
    const after = await limiter.take(s, 'events', rule, 1000, { partial: true });
    expect(after.granted).toBe(100);
    await expect(limiter.enforce(s, 'events', rule)).rejects.toMatchObject({ status: 429 });
    clock.advanceMs(100);
    await expect(limiter.enforce(s, 'events', rule)).resolves.toBeUndefined();
  });

  it('keeps a separate bucket per (project, environment, bucket)', async () => {
    const a = scope('sandbox');
    const aLive: TenantScope = testScope(a.projectId, 'production');
    const b = scope('sandbox');
    await limiter.take(a, 'events', rule, 100);
    await expect(limiter.enforce(a, 'events', rule)).rejects.toMatchObject({ status: 429 });
    await expect(limiter.enforce(aLive, 'events', rule)).resolves.toBeUndefined();
    await expect(limiter.enforce(a, 'purchases', rule)).resolves.toBeUndefined();
    await expect(limiter.enforce(b, 'events', rule)).resolves.toBeUndefined();
    expect(limiter.failOpenCount).toBe(0);
  });
});

describe('RateLimiterService fail-open', () => {
  it('allows and counts when the store rejects', async () => {
    const log = captureLogger();
    const failing: BucketStore = {
      take: () => Promise.reject(new Error('storage exploded')),
      close: async () => undefined,
    };
    const limiter = new RateLimiterService(config(), new FakeClock() as unknown as Clock, log.logger, failing);
    const s = scope();
    const decision = await limiter.take(s, 'events', rule, 7);
    expect(decision).toEqual(expect.objectContaining({ requested: 7, granted: 7, retryAfterMs: 0, sampleRate: 1, failedOpen: true }));
    await expect(limiter.enforce(s, 'events', rule, 1000)).resolves.toBeUndefined();
    expect(limiter.failOpenCount).toBe(2);
    const warnings = log.lines().filter((l) => l.msg.includes('failing open'));
    // Logged, but rate-limited: one line for the two failures.
    expect(warnings).toHaveLength(1);
    expect(warnings[0].err.message).toBe('storage exploded');
    await limiter.onModuleDestroy();
  });

  it('an explicit null override falls back to the configured store', async () => {
    const limiter = new RateLimiterService(config(), new FakeClock() as unknown as Clock, captureLogger().logger, null);
    expect((await limiter.take(scope(), 'events', rule, 1)).failedOpen).toBe(false);
    await limiter.onModuleDestroy();
  });

  it('allows and counts when REDIS_URL points at a closed port', async () => {
    const limiter = new RateLimiterService(config({ REDIS_URL: 'redis://127.0.0.1:1' }), new FakeClock() as unknown as Clock, captureLogger().logger);
    try {
      const s = scope();
      const started = Date.now();
      const decision = await limiter.take(s, 'events', rule, 3);
      expect(decision.failedOpen).toBe(true);
      expect(decision.granted).toBe(3);
      await expect(limiter.enforce(s, 'events', rule, 5000)).resolves.toBeUndefined();
      expect(limiter.failOpenCount).toBe(2);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await limiter.onModuleDestroy();
    }
  });

  describe('a Redis that accepts the connection but does not answer the script', () => {
    let server: Server;
    const sockets = new Set<Socket>();
    let url: string;

    // Just enough RESP to pass ioredis's handshake; EVALSHA/EVAL never get an answer.
    beforeAll(async () => {
      server = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        let buffer = '';
        socket.on('data', (data) => {
          buffer += String(data);
          for (;;) {
            const parsed = parseCommand(buffer);
            if (!parsed) break;
            buffer = buffer.slice(parsed.length);
            const name = parsed.args[0]?.toUpperCase();
            if (name === 'INFO') {
              const info = '# Server\r\nredis_version:7.0.0\r\nloading:0\r\n';
              socket.write(`$${Buffer.byteLength(info)}\r\n${info}\r\n`);
            } else if (name !== 'EVALSHA' && name !== 'EVAL') {
              socket.write('+OK\r\n');
            }
          }
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `redis://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    });

    it('gives up after the short storage timeout and fails open', async () => {
      const store = new RedisBucketStore(url, DEFAULT_REDIS_COMMAND_TIMEOUT_MS, () => undefined);
      const limiter = new RateLimiterService(config(), new FakeClock() as unknown as Clock, captureLogger().logger, store);
      try {
        await untilHandshaken(store);
        const started = Date.now();
        const decision = await limiter.take(scope(), 'events', rule, 1);
        const elapsed = Date.now() - started;
        expect(decision.failedOpen).toBe(true);
        expect(limiter.failOpenCount).toBe(1);
        expect(elapsed).toBeGreaterThanOrEqual(DEFAULT_REDIS_COMMAND_TIMEOUT_MS - 10);
        expect(elapsed).toBeLessThan(2000);
      } finally {
        await limiter.onModuleDestroy();
      }
    });
  });
});

function parseCommand(buffer: string): { args: string[]; length: number } | undefined {
  if (!buffer.startsWith('*')) return undefined;
  let pos = buffer.indexOf('\r\n');
  if (pos < 0) return undefined;
  const count = Number(buffer.slice(1, pos));
  pos += 2;
  const args: string[] = [];
  for (let i = 0; i < count; i++) {
    const end = buffer.indexOf('\r\n', pos);
    if (end < 0 || buffer[pos] !== '$') return undefined;
    const len = Number(buffer.slice(pos + 1, end));
    const start = end + 2;
    if (buffer.length < start + len + 2) return undefined;
    args.push(buffer.slice(start, start + len));
    pos = start + len + 2;
  }
  return { args, length: pos };
}

/** Until the client has passed its handshake: commands are then sent (and time out) instead of refused. */
async function untilHandshaken(store: BucketStore): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const error = await store.take(`rl:warmup:${randomUUID()}`, rule, 1, T0, false).then(
      () => undefined,
      (err: Error) => err,
    );
    if (!error || !/writeable/.test(error.message) || Date.now() > deadline) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The store connects in the background and refuses commands until ready (no offline queue). */
async function untilConnected(store: BucketStore): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      await store.take(`rl:warmup:${randomUUID()}`, rule, 0, T0, false);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

describeRedis(`RateLimiterService on Redis (${REDIS_URL})`, () => {
  const limiters: RateLimiterService[] = [];
  let clock: FakeClock;
  // These prove sharing and atomicity, not the timeout (tested above): a generous command
  // timeout keeps a busy machine's slow answer from turning into a fail-open decision.
  const SHARING_TIMEOUT_MS = 2000;

  async function redisLimiter(): Promise<RateLimiterService> {
    const store = new RedisBucketStore(REDIS_URL, SHARING_TIMEOUT_MS, () => undefined);
    await untilConnected(store);
    const limiter = new RateLimiterService(config({ REDIS_URL }), clock as unknown as Clock, captureLogger().logger, store);
    limiters.push(limiter);
    return limiter;
  }

  beforeEach(() => {
    clock = new FakeClock(Date.now());
  });
  afterEach(async () => {
    await Promise.all(limiters.splice(0).map((l) => l.onModuleDestroy()));
  });

  it('is used when REDIS_URL is configured', async () => {
    const limiter = new RateLimiterService(
      config({ REDIS_URL, REDIS_COMMAND_TIMEOUT_MS: String(SHARING_TIMEOUT_MS) }),
      clock as unknown as Clock,
      captureLogger().logger,
    );
    limiters.push(limiter);
    const s = scope();
    const deadline = Date.now() + 5000;
    let decision = await limiter.take(s, 'events', rule, 0);
    while (decision.failedOpen && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      decision = await limiter.take(s, 'events', rule, 0);
    }
    expect(decision.failedOpen).toBe(false);
    // A second service on its own in-process store would start full; the Redis one sees the tokens taken.
    await limiter.take(s, 'events', rule, 100);
    const other = await redisLimiter();
    expect((await other.take(s, 'events', rule, 1)).granted).toBe(0);
  });

  it('two services share one bucket per key', async () => {
    const a = await redisLimiter();
    const b = await redisLimiter();
    const s = scope();
    expect((await a.take(s, 'events', rule, 60)).granted).toBe(60);
    const fromB = await b.take(s, 'events', rule, 60);
    expect(fromB.granted).toBe(0);
    expect(fromB.tokensLeft).toBeCloseTo(40, 6);
    expect((await b.take(s, 'events', rule, 40)).granted).toBe(40);
    await expect(a.enforce(s, 'events', rule)).rejects.toMatchObject({ status: 429, headers: { 'Retry-After': '1' } });
    expect(a.failOpenCount + b.failOpenCount).toBe(0);
  });

  it('20 parallel takes against a burst of 10 grant exactly 10 (atomic script)', async () => {
    const a = await redisLimiter();
    const b = await redisLimiter();
    const s = scope('production');
    const small: BucketRule = { sustained: 0.001, burst: 10 };
    const decisions = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).take(s, 'purchases', small, 1)));
    expect(decisions.filter((d) => d.failedOpen)).toHaveLength(0);
    expect(decisions.reduce((sum, d) => sum + d.granted, 0)).toBe(10);
    expect(decisions.filter((d) => d.granted === 0)).toHaveLength(10);
  });

  it('partial takes and linear refill follow the caller clock', async () => {
    const limiter = await redisLimiter();
    const s = scope();
    await limiter.take(s, 'events', rule, 90);
    const partial = await limiter.take(s, 'events', rule, 25, { partial: true });
    expect(partial).toEqual(expect.objectContaining({ requested: 25, granted: 10, retryAfterMs: 1500, failedOpen: false }));
    expect(partial.sampleRate).toBeCloseTo(0.4, 10);
    clock.advanceMs(250);
    const refilled = await limiter.take(s, 'events', rule, 25, { partial: true });
    expect(refilled.granted).toBe(2);
    expect(refilled.tokensLeft).toBeCloseTo(0.5, 6);
    clock.advanceMs(3_600_000);
    expect((await limiter.take(s, 'events', rule, 500, { partial: true })).granted).toBe(100);
  });

  it('keeps separate buckets per (project, environment, bucket)', async () => {
    const limiter = await redisLimiter();
    const s = scope('sandbox');
    await limiter.take(s, 'events', rule, 100);
    expect((await limiter.take(s, 'events', rule, 1)).granted).toBe(0);
    expect((await limiter.take({ ...s, env: 'production' }, 'events', rule, 1)).granted).toBe(1);
    expect((await limiter.take(s, 'alias', rule, 1)).granted).toBe(1);
    expect((await limiter.take(scope('sandbox'), 'events', rule, 1)).granted).toBe(1);
  });

  it('agrees with the in-process store on the same sequence', async () => {
    const redis = await redisLimiter();
    const local = new RateLimiterService(config(), clock as unknown as Clock, captureLogger().logger, new InProcessBucketStore());
    const s = scope();
    const r: BucketRule = { sustained: 3, burst: 17 };
    const steps: Array<[number, number, boolean]> = [
      [0, 5, false],
      [0, 20, true],
      [120, 1, false],
      [400, 3, true],
      [0, 2, false],
      [2_000, 9, false],
      [10, 30, true],
    ];
    for (const [advance, cost, partial] of steps) {
      clock.advanceMs(advance);
      const [fromRedis, fromLocal] = await Promise.all([redis.take(s, 'events', r, cost, { partial }), local.take(s, 'events', r, cost, { partial })]);
      expect(fromRedis.granted).toBe(fromLocal.granted);
      expect(fromRedis.tokensLeft).toBeCloseTo(fromLocal.tokensLeft, 6);
      expect(fromRedis.retryAfterMs).toBe(fromLocal.retryAfterMs);
    }
    await local.onModuleDestroy();
  });
});

describe('InProcessBucketStore memory bound', () => {
  it('above its bound drops only buckets that have refilled completely', async () => {
    const store = new InProcessBucketStore(3);
    const slow: BucketRule = { sustained: 1, burst: 3600 }; // an hour to refill from empty
    const fast: BucketRule = { sustained: 10, burst: 10 }; // one second
    await store.take('slow', slow, 3600, T0, false);
    await store.take('fast-1', fast, 10, T0, false);
    await store.take('fast-2', fast, 10, T0, false);
    expect(store.size).toBe(3);
    // 20 minutes later: the fast buckets are full again, the slow one is not.
    await store.take('new', fast, 1, T0 + 1_200_000, false);
    expect(store.size).toBe(2);
    const slowAgain = await store.take('slow', slow, 1201, T0 + 1_200_000, false);
    expect(slowAgain.granted).toBe(0);
    expect(slowAgain.tokens).toBeCloseTo(1200, 6);
  });

  it('sweeps at most once per 10 s of clock', async () => {
    const store = new InProcessBucketStore(1);
    const fast: BucketRule = { sustained: 10, burst: 10 };
    await store.take('a', fast, 10, T0, false);
    await store.take('b', fast, 10, T0 + 5_000, false); // sweeps: a is full again
    expect(store.size).toBe(1);
    await store.take('c', fast, 10, T0 + 8_000, false); // b is full, but no sweep yet
    expect(store.size).toBe(2);
    await store.take('d', fast, 10, T0 + 15_000, false);
    expect(store.size).toBe(1);
  });
});
