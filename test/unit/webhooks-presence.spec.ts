import type { Clock, TenantScope } from '#platform';
import { ENDPOINT_PRESENCE_TTL_MS, EndpointPresence } from '../../libs/webhooks/src/outbox/endpoint-presence.service.js';
import type { WebhookOutboxRepository } from '../../libs/webhooks/src/outbox/webhook-outbox.repository.js';

/** The per-replica answer to "has this scope an enabled endpoint?": how long it is trusted and when it is dropped. */
describe('webhooks: endpoint presence cache', () => {
  let wallMs = 1_000_000;
  let answer = false;
  let reads = 0;
  const repository = {
    hasEnabledEndpoint: async () => {
      reads++;
      return answer;
    },
  } as unknown as WebhookOutboxRepository;
  const clock = { wallNowMs: () => wallMs } as unknown as Clock;
  const scope = (projectId: string, env: 'sandbox' | 'production' = 'sandbox') => ({ projectId, env }) as unknown as TenantScope;

  beforeEach(() => {
    reads = 0;
    answer = false;
  });

  it('an answer is reused for less than the TTL, per project and environment, then read again', async () => {
    const presence = new EndpointPresence(repository, clock);
    expect(await presence.hasEnabled(scope('p1'))).toBe(false);
    answer = true;
    wallMs += ENDPOINT_PRESENCE_TTL_MS - 1;
    expect(await presence.hasEnabled(scope('p1'))).toBe(false);
    expect(reads).toBe(1);
    expect(await presence.hasEnabled(scope('p1', 'production'))).toBe(true);
    expect(await presence.hasEnabled(scope('p2'))).toBe(true);
    expect(reads).toBe(3);
    wallMs += 1;
    expect(await presence.hasEnabled(scope('p1'))).toBe(true);
    expect(reads).toBe(4);
  });

  it('a wall clock that steps back does not extend an answer', async () => {
    const presence = new EndpointPresence(repository, clock);
    await presence.hasEnabled(scope('p3'));
    wallMs -= 5_000;
    answer = true;
    expect(await presence.hasEnabled(scope('p3'))).toBe(true);
    expect(reads).toBe(2);
  });

  it('enabling an endpoint drops this replica answer at once and returns only after the TTL', async () => {
    const presence = new EndpointPresence(repository, clock);
    await presence.hasEnabled(scope('p4'));
    answer = true;
    jest.useFakeTimers();
    try {
      let returned = false;
      const enabling = presence.enabled(scope('p4')).then(() => (returned = true));
      expect(await presence.hasEnabled(scope('p4'))).toBe(true);
      expect(reads).toBe(2);
      await jest.advanceTimersByTimeAsync(ENDPOINT_PRESENCE_TTL_MS - 1);
      expect(returned).toBe(false);
      await jest.advanceTimersByTimeAsync(10);
      await enabling;
      expect(returned).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });
});
