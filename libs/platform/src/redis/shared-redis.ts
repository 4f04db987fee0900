import { Redis } from 'ioredis';

export interface RedisLease {
  readonly client: Redis;
  /** Resolves once this lease is given up and, for the last one, the connection is closed. */
  release(): Promise<void>;
}

/** How long the last release waits for the connection to close before it resolves anyway. */
const CLOSE_WAIT_MS = 2000;

const connections = new Map<string, { client: Redis; users: number }>();

/**
 * One fail-fast Redis connection per (URL, command timeout) in this process, shared by the
 * limiter stores (rate-limit buckets, identify velocity, error allowance): a short command
 * timeout, no offline queue and no retries, so a Redis outage surfaces at once and the
 * callers fail open. Each lease adds its own error listener; the last release disconnects and
 * resolves when the socket is closed, so a closed application leaves no connection behind (a
 * test worker or a stopping process that still holds one cannot exit at once).
 */
export function leaseRedis(url: string, commandTimeoutMs: number, onError: (err: Error) => void): RedisLease {
  const key = `${commandTimeoutMs}|${url}`;
  let entry = connections.get(key);
  if (!entry) {
    const client = new Redis(url, {
      commandTimeout: commandTimeoutMs,
      connectTimeout: 2000,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    entry = { client, users: 0 };
    connections.set(key, entry);
  }
  const shared = entry;
  shared.users += 1;
  shared.client.on('error', onError);
  let released = false;
  return {
    client: shared.client,
    release: async () => {
      if (released) return;
      released = true;
      shared.client.off('error', onError);
      shared.users -= 1;
      if (shared.users === 0) {
        connections.delete(key);
        // An error the closing connection still reports (a ready check cut short) has no lease to
        // go to; without a listener ioredis would print it as an unhandled error event.
        shared.client.on('error', () => undefined);
        if (shared.client.status === 'end') return;
        const closed = new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, CLOSE_WAIT_MS);
          timer.unref();
          shared.client.once('end', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        shared.client.disconnect();
        await closed;
      }
    },
  };
}
