import { DEFAULT_BUCKET_RULES, take } from '#platform';
import { InProcessErrorAllowanceStore, RedisErrorAllowanceStore } from '../../libs/telemetry/src/throttle/error-allowance.store.js';
import { ErrorAllowanceService } from '../../libs/telemetry/src/throttle/error-allowance.service.js';
import { ERROR_ALLOWANCE_WINDOW_MS, allowanceCandidates, landedIndexes, throttledSummary } from '../../libs/telemetry/src/throttle/throttle-plan.js';
import { testScope } from '../support/scopes.js';

const plain = { isError: false, fingerprint: null };
const err = (fingerprint: string | null) => ({ isError: true, fingerprint });

describe('telemetry: throttling maths', () => {
  it('one token per event: a 100-event batch on a full default bucket lands whole, the 11th such batch lands nothing', () => {
    let state;
    const rule = DEFAULT_BUCKET_RULES.events;
    const now = 1_000_000;
    for (let i = 0; i < 10; i++) {
      const outcome = take(state, now, rule, 100, true);
      expect(outcome.granted).toBe(100);
      state = outcome.state;
    }
    expect(take(state, now, rule, 100, true).granted).toBe(0);
    // 100 tokens per second come back.
    expect(take(state, now + 500, rule, 100, true).granted).toBe(50);
  });

  it('candidates: the first error event per fingerprint beyond the granted prefix', () => {
    const events = [err('aaaaaaaa'), plain, err('aaaaaaaa'), err('bbbbbbbb'), err('aaaaaaaa'), err(null), plain, err('bbbbbbbb'), err('cccccccc')];
    expect(allowanceCandidates(events, 2)).toEqual([
      { index: 2, fingerprint: 'aaaaaaaa' },
      { index: 3, fingerprint: 'bbbbbbbb' },
      { index: 8, fingerprint: 'cccccccc' },
    ]);
    expect(allowanceCandidates(events, 0)[0]).toEqual({ index: 0, fingerprint: 'aaaaaaaa' });
    expect(allowanceCandidates(events, events.length)).toEqual([]);
    expect(allowanceCandidates([plain, plain], 0)).toEqual([]);
  });

  it('landed: the granted prefix plus the claimed candidates', () => {
    const candidates = [
      { index: 5, fingerprint: 'aaaaaaaa' },
      { index: 7, fingerprint: 'bbbbbbbb' },
    ];
    expect(landedIndexes(10, 3, candidates, new Set(['bbbbbbbb']))).toEqual([0, 1, 2, 7]);
    expect(landedIndexes(10, 0, candidates, new Set())).toEqual([]);
    expect(landedIndexes(4, 9, [], new Set())).toEqual([0, 1, 2, 3]);
  });

  it('throttled summary only when something was dropped', () => {
    expect(throttledSummary(100, 100, { sampleRate: 1, retryAfterMs: 0 })).toBeUndefined();
    expect(throttledSummary(100, 40, { sampleRate: 0.4, retryAfterMs: 600.2 })).toEqual({ dropped: 60, sampleRate: 0.4, retryAfterMs: 601 });
    expect(throttledSummary(3, 1, { sampleRate: 1 / 3, retryAfterMs: 2000 })!.sampleRate).toBe(0.3333);
    expect(throttledSummary(3, 1, { sampleRate: 7, retryAfterMs: -5 })).toEqual({ dropped: 2, sampleRate: 1, retryAfterMs: 0 });
  });

  it('the in-process allowance: one claim per key per window, by the caller clock', async () => {
    const store = new InProcessErrorAllowanceStore();
    const t0 = 5_000_000;
    expect(await store.claim(['a', 'b'], t0, ERROR_ALLOWANCE_WINDOW_MS)).toEqual(new Set(['a', 'b']));
    expect(await store.claim(['a', 'c'], t0 + 1000, ERROR_ALLOWANCE_WINDOW_MS)).toEqual(new Set(['c']));
    expect(await store.claim(['a'], t0 + ERROR_ALLOWANCE_WINDOW_MS - 1, ERROR_ALLOWANCE_WINDOW_MS)).toEqual(new Set());
    expect(await store.claim(['a'], t0 + ERROR_ALLOWANCE_WINDOW_MS, ERROR_ALLOWANCE_WINDOW_MS)).toEqual(new Set(['a']));
  });

  it('the in-process allowance forgets expired claims when it grows', async () => {
    const store = new InProcessErrorAllowanceStore(10);
    await store.claim(
      Array.from({ length: 10 }, (_, i) => `k${i}`),
      0,
      1000,
    );
    await store.claim(['late'], 5000, 1000);
    expect(store.size).toBe(1);
  });

  it('the service claims per (project, env, fingerprint) and fails open when the storage errs', async () => {
    const clock = { nowMs: () => 1_000 } as any;
    const logger = { warn: jest.fn() } as any;
    const config = { redisUrl: undefined } as any;
    const ok = new ErrorAllowanceService(config, clock, logger, new InProcessErrorAllowanceStore());
    const scope = testScope('proj_1', 'sandbox');
    expect(await ok.claim(scope, ['aaaaaaaa', 'bbbbbbbb'])).toEqual(new Set(['aaaaaaaa', 'bbbbbbbb']));
    expect(await ok.claim(scope, ['aaaaaaaa'])).toEqual(new Set());
    expect(await ok.claim(testScope(scope.projectId, 'production'), ['aaaaaaaa'])).toEqual(new Set(['aaaaaaaa']));
    const broken = new ErrorAllowanceService(config, clock, logger, {
      claim: async () => {
        throw new Error('down');
      },
      close: async () => undefined,
    });
    expect(await broken.claim(scope, ['aaaaaaaa'])).toEqual(new Set(['aaaaaaaa']));
    expect(broken.failOpenCount).toBe(1);
    expect(logger.warn).toHaveBeenCalledTimes(1);
  });

  const redisUrl = process.env.REDIS_URL;
  (redisUrl ? it : it.skip)('the Redis allowance behaves like the in-process one (REDIS_URL)', async () => {
    const store = new RedisErrorAllowanceStore(redisUrl!, 1000, () => undefined);
    try {
      const prefix = `ea:{unit-${process.pid}-${Date.now()}}:`;
      // The store connects in the background and refuses commands until ready (no offline queue):
      // wait for a warm-up claim on a key of its own instead of a fixed delay.
      for (const deadline = Date.now() + 5000; ; await new Promise((r) => setTimeout(r, 25))) {
        const ready = await store.claim([`${prefix}warmup`], 0, 1).then(
          () => true,
          (err: Error) => {
            if (Date.now() > deadline) throw err;
            return false;
          },
        );
        if (ready) break;
      }
      const t0 = 7_000_000;
      expect(await store.claim([`${prefix}a`, `${prefix}b`], t0, ERROR_ALLOWANCE_WINDOW_MS)).toEqual(new Set([`${prefix}a`, `${prefix}b`]));
      expect(await store.claim([`${prefix}a`, `${prefix}c`], t0 + 1000, ERROR_ALLOWANCE_WINDOW_MS)).toEqual(new Set([`${prefix}c`]));
      expect(await store.claim([`${prefix}a`], t0 + ERROR_ALLOWANCE_WINDOW_MS, ERROR_ALLOWANCE_WINDOW_MS)).toEqual(new Set([`${prefix}a`]));
    } finally {
      await store.close();
    }
  });
});
