import { slidingWindowDecision, VELOCITY_LIMIT, VELOCITY_WINDOW_MS } from '#identity';

describe('identity: identify velocity cap (sliding window)', () => {
  it('accepts 30 calls within 60 s and refuses the 31st with the time until the oldest leaves', () => {
    let hits: number[] = [];
    const start = 1_000_000;
    for (let i = 0; i < VELOCITY_LIMIT; i++) {
      const out = slidingWindowDecision(hits, start + i * 100);
      expect(out.decision.allowed).toBe(true);
      hits = out.hits;
    }
    const refused = slidingWindowDecision(hits, start + 3_000);
    expect(refused.decision).toEqual({ allowed: false, retryAfterMs: VELOCITY_WINDOW_MS - 3_000 });
    expect(refused.hits).toHaveLength(VELOCITY_LIMIT);
  });

  it('refused calls are not recorded; the window slides', () => {
    let hits = Array.from({ length: VELOCITY_LIMIT }, (_, i) => i * 1000);
    expect(slidingWindowDecision(hits, 59_999).decision.allowed).toBe(false);
    // At 60 000 the call at 0 has left the window.
    const out = slidingWindowDecision(hits, 60_000);
    expect(out.decision.allowed).toBe(true);
    hits = out.hits;
    expect(hits).toHaveLength(VELOCITY_LIMIT);
    expect(slidingWindowDecision(hits, 60_500).decision).toEqual({ allowed: false, retryAfterMs: 500 });
  });
});
