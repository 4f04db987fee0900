import type { Redis } from 'ioredis';
import { type RedisLease, leaseRedis } from '#platform';

/**
 * Who may still send one error event per fingerprint per minute while throttled. Claims
 * are atomic per key; the caller's clock decides (so the operator test clock applies).
 */
export interface ErrorAllowanceStore {
  /** Claims each key for `windowMs`; returns the keys whose claim succeeded. */
  claim(keys: readonly string[], nowMs: number, windowMs: number): Promise<Set<string>>;
  close(): Promise<void>;
}

/** One replica: claims live in this process. */
export class InProcessErrorAllowanceStore implements ErrorAllowanceStore {
  private readonly claims = new Map<string, number>();
  private nextSweepMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly maxKeys = 100_000) {}

  async claim(keys: readonly string[], nowMs: number, windowMs: number): Promise<Set<string>> {
    const claimed = new Set<string>();
    for (const key of keys) {
      const until = this.claims.get(key);
      if (until !== undefined && until > nowMs) continue;
      this.claims.set(key, nowMs + windowMs);
      claimed.add(key);
    }
    if (this.claims.size > this.maxKeys && nowMs >= this.nextSweepMs) {
      this.nextSweepMs = nowMs + 10_000;
      for (const [key, until] of this.claims) if (until <= nowMs) this.claims.delete(key);
    }
    return claimed;
  }

  get size(): number {
    return this.claims.size;
  }

  async close(): Promise<void> {}
}

// Each key holds the clock time until which it is claimed; PX only collects garbage.
const CLAIM_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local result = {}
for i, key in ipairs(KEYS) do
  local held = tonumber(redis.call('GET', key))
  if held ~= nil and held > now then
    result[i] = 0
  else
    redis.call('SET', key, tostring(now + window), 'PX', window + 60000)
    result[i] = 1
  end
end
return result
`;

type RedisWithClaim = Redis & { claimAllowance(numKeys: number, ...args: (string | number)[]): Promise<number[]> };

/** Shared by every replica: one script call per throttled batch. */
export class RedisErrorAllowanceStore implements ErrorAllowanceStore {
  private readonly lease: RedisLease;
  private readonly redis: RedisWithClaim;

  constructor(url: string, timeoutMs: number, onError: (err: Error) => void) {
    this.lease = leaseRedis(url, timeoutMs, onError);
    this.redis = this.lease.client as RedisWithClaim;
    this.redis.defineCommand('claimAllowance', { lua: CLAIM_SCRIPT });
  }

  async claim(keys: readonly string[], nowMs: number, windowMs: number): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const results = await this.redis.claimAllowance(keys.length, ...keys, nowMs, windowMs);
    const claimed = new Set<string>();
    keys.forEach((key, i) => {
      if (Number(results[i]) === 1) claimed.add(key);
    });
    return claimed;
  }

  async close(): Promise<void> {
    await this.lease.release();
  }
}
