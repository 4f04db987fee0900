import type { Redis } from 'ioredis';
import { type RedisLease, leaseRedis } from '../redis/shared-redis.js';
import { type BucketRule, type BucketState, msUntilAvailable, take } from './token-bucket.js';

export interface BucketStore {
  /** Atomically takes up to `cost` tokens; returns what was granted and the tokens left. */
  take(key: string, rule: BucketRule, cost: number, nowMs: number, partial: boolean): Promise<{ granted: number; tokens: number }>;
  close(): Promise<void>;
}

/** One replica only: buckets live in this process. */
export class InProcessBucketStore implements BucketStore {
  private readonly buckets = new Map<string, { state: BucketState; fullAtMs: number }>();
  private nextSweepMs = Number.NEGATIVE_INFINITY;

  /** Above maxBuckets, buckets that have refilled completely are dropped (at most one sweep per 10 s). */
  constructor(private readonly maxBuckets = 100_000) {}

  async take(key: string, rule: BucketRule, cost: number, nowMs: number, partial: boolean) {
    const outcome = take(this.buckets.get(key)?.state, nowMs, rule, cost, partial);
    const { state } = outcome;
    const fullAtMs = rule.sustained > 0 ? state.updatedMs + msUntilAvailable(state.tokens, rule.burst, rule) : Number.POSITIVE_INFINITY;
    this.buckets.set(key, { state, fullAtMs });
    if (this.buckets.size > this.maxBuckets && nowMs >= this.nextSweepMs) {
      this.nextSweepMs = nowMs + 10_000;
      this.evictFull(nowMs);
    }
    return { granted: outcome.granted, tokens: state.tokens };
  }

  /** A bucket that is full again carries no information: dropping it changes no decision. */
  private evictFull(nowMs: number): void {
    for (const [key, bucket] of this.buckets) {
      if (nowMs >= bucket.fullAtMs) this.buckets.delete(key);
    }
  }

  /** Number of buckets held (observability and tests). */
  get size(): number {
    return this.buckets.size;
  }

  async close(): Promise<void> {}
}

// Mirrors token-bucket.ts take(); the caller's clock is passed in so that the test clock
// and every replica agree on refill. Floats travel as strings (Lua numbers would truncate).
const TAKE_SCRIPT = `
local sustained = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local partial = ARGV[5] == '1'
local saved = redis.call('HMGET', KEYS[1], 't', 'u')
local tokens = tonumber(saved[1])
local updated = tonumber(saved[2])
if tokens == nil or updated == nil then
  tokens = burst
  updated = now
end
if now > updated then
  tokens = math.min(burst, tokens + (now - updated) / 1000 * sustained)
  updated = now
end
local granted = 0
if partial then
  granted = math.max(0, math.min(cost, math.floor(tokens)))
elseif tokens >= cost then
  granted = cost
end
tokens = tokens - granted
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'u', tostring(updated))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / math.max(sustained, 0.001) * 1000) + 1000)
return {granted, tostring(tokens)}
`;

type RedisWithTake = Redis & {
  takeTokens(key: string, ...args: (string | number)[]): Promise<[number, string]>;
};

/** Shared by every replica; one atomic script call per decision. */
export class RedisBucketStore implements BucketStore {
  private readonly lease: RedisLease;
  private readonly redis: RedisWithTake;

  constructor(url: string, timeoutMs: number, onError: (err: Error) => void) {
    this.lease = leaseRedis(url, timeoutMs, onError);
    this.redis = this.lease.client as RedisWithTake;
    this.redis.defineCommand('takeTokens', { numberOfKeys: 1, lua: TAKE_SCRIPT });
  }

  async take(key: string, rule: BucketRule, cost: number, nowMs: number, partial: boolean) {
    const [granted, tokens] = await this.redis.takeTokens(key, rule.sustained, rule.burst, cost, nowMs, partial ? '1' : '0');
    return { granted: Number(granted), tokens: Number(tokens) };
  }

  async close(): Promise<void> {
    await this.lease.release();
  }
}
