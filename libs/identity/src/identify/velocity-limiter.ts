import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG, APP_LOGGER, type AppConfig, type AppLogger, Clock, type RedisLease, leaseRedis, type TenantScope, FailOpenStorage } from '#platform';

/** Identify velocity cap: more than 30 calls for one userId within 60 s is refused. */
export const VELOCITY_LIMIT = 30;
export const VELOCITY_WINDOW_MS = 60_000;

export interface VelocityDecision {
  allowed: boolean;
  /** When the oldest call in the window leaves it (0 when allowed). */
  retryAfterMs: number;
}

/**
 * Sliding-window log (pure): `hits` are the accepted call times, oldest first. A call is
 * accepted when fewer than `limit` accepted calls lie in the last `windowMs`; refused calls
 * are not recorded, so a client that backs off gets through once the window has room.
 */
export function slidingWindowDecision(
  hits: number[],
  nowMs: number,
  limit = VELOCITY_LIMIT,
  windowMs = VELOCITY_WINDOW_MS,
): { decision: VelocityDecision; hits: number[] } {
  const live = hits.filter((t) => t > nowMs - windowMs);
  if (live.length >= limit) {
    return { decision: { allowed: false, retryAfterMs: Math.max(1, live[live.length - limit] + windowMs - nowMs) }, hits: live };
  }
  live.push(nowMs);
  return { decision: { allowed: true, retryAfterMs: 0 }, hits: live };
}

interface VelocityStore {
  hit(key: string, nowMs: number): Promise<VelocityDecision>;
  close(): Promise<void>;
}

class InProcessVelocityStore implements VelocityStore {
  private readonly windows = new Map<string, number[]>();

  async hit(key: string, nowMs: number): Promise<VelocityDecision> {
    const { decision, hits } = slidingWindowDecision(this.windows.get(key) ?? [], nowMs);
    this.windows.delete(key);
    this.windows.set(key, hits);
    if (this.windows.size > 100_000) this.evict(nowMs);
    return decision;
  }

  private evict(nowMs: number): void {
    for (const [key, hits] of this.windows) {
      if (hits.length === 0 || hits[hits.length - 1] <= nowMs - VELOCITY_WINDOW_MS) this.windows.delete(key);
    }
  }

  async close(): Promise<void> {}
}

// A sorted set of accepted call times per key; the caller's clock is passed in (test clock, replicas agree).
const HIT_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local member = ARGV[4]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  return {0, tostring(tonumber(oldest[2]) + window - now)}
end
redis.call('ZADD', KEYS[1], now, member)
redis.call('PEXPIRE', KEYS[1], window + 1000)
return {1, '0'}
`;

type RedisWithHit = Redis & { velocityHit(key: string, ...args: (string | number)[]): Promise<[number, string]> };

class RedisVelocityStore implements VelocityStore {
  private readonly lease: RedisLease;
  private readonly redis: RedisWithHit;
  private seq = 0;

  constructor(url: string, timeoutMs: number, onError: (err: Error) => void) {
    this.lease = leaseRedis(url, timeoutMs, onError);
    this.redis = this.lease.client as RedisWithHit;
    this.redis.defineCommand('velocityHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
  }

  async hit(key: string, nowMs: number): Promise<VelocityDecision> {
    this.seq = (this.seq + 1) % 1_000_000;
    const member = `${nowMs}:${process.pid}:${this.seq}:${Math.random().toString(36).slice(2, 8)}`;
    const [allowed, retry] = await this.redis.velocityHit(key, nowMs, VELOCITY_WINDOW_MS, VELOCITY_LIMIT, member);
    return { allowed: Number(allowed) === 1, retryAfterMs: Math.max(0, Math.ceil(Number(retry))) };
  }

  async close(): Promise<void> {
    await this.lease.release();
  }
}

/**
 * Per-(project, env, userId) velocity cap of identify. Redis when REDIS_URL is set (shared by
 * replicas), in-process otherwise. Fails open: a storage error lets the call through.
 */
@Injectable()
export class IdentifyVelocityLimiter implements OnModuleDestroy {
  private readonly store: VelocityStore;
  private readonly failOpen: FailOpenStorage;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly clock: Clock,
    @Inject(APP_LOGGER) logger: AppLogger,
  ) {
    this.failOpen = new FailOpenStorage(logger, 'identify velocity storage unavailable; failing open');
    this.store = config.redisUrl
      ? new RedisVelocityStore(config.redisUrl, config.redisCommandTimeoutMs, (err) => this.failOpen.warn(err))
      : new InProcessVelocityStore();
  }

  async hit(scope: TenantScope, userId: string): Promise<VelocityDecision> {
    return this.failOpen.run(
      () => this.store.hit(`idv:${scope.projectId}:${scope.env}:${userId}`, this.clock.nowMs()),
      () => ({ allowed: true, retryAfterMs: 0 }),
    );
  }

  async onModuleDestroy(): Promise<void> {
    await this.store.close();
  }
}
