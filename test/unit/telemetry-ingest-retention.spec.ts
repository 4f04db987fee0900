import type { AppLogger, Clock, RateLimitDecision, SdkVersionPolicy } from '#platform';
import type { AuthContext } from '#keys';
import type { EventBuffer } from '../../libs/telemetry/src/buffer/event-buffer.service.js';
import { IngestEventsService } from '../../libs/telemetry/src/ingest/ingest-events.service.js';
import type { EncodedRows } from '../../libs/telemetry/src/storage/event-insert.sql.js';
import type { EventsRepository } from '../../libs/telemetry/src/storage/events.repository.js';
import type { ErrorAllowanceService } from '../../libs/telemetry/src/throttle/error-allowance.service.js';

const auth = { projectId: 'prj_1', env: 'sandbox', appId: 'app_1', requestId: 'req_1' } as AuthContext;
const granted: RateLimitDecision = { granted: 100 } as RateLimitDecision;

/** The service with a write that stays pending until released, so the test can look at the request meanwhile. */
function serviceWithPendingWrite() {
  const writes: { rows: EncodedRows; release: () => void }[] = [];
  const events = {
    writeEncoded: (_scope: unknown, _meta: unknown, rows: EncodedRows) =>
      new Promise<number>((resolve) => writes.push({ rows, release: () => resolve(rows.rowCount) })),
  } as unknown as EventsRepository;
  const service = new IngestEventsService(
    { nowMs: () => 1_795_000_000_000 } as Clock,
    { assertSupported: () => undefined } as unknown as SdkVersionPolicy,
    {} as ErrorAllowanceService,
    events,
    { enabled: false } as EventBuffer,
    { debug: () => undefined } as unknown as AppLogger,
  );
  return { service, writes };
}

describe('telemetry: what a batch holds while it waits for its write', () => {
  it('the parsed events leave the request body before the wait; the write gets them encoded, one row per event id', async () => {
    const { service, writes } = serviceWithPendingWrite();
    const body: Record<string, unknown> = {
      environment: 'sandbox',
      events: [
        { name: 'page.viewed', eventId: 'e1', anonymousId: 'anon_1' },
        { name: 'page.viewed', eventId: 'e2', anonymousId: 'anon_1' },
        { name: 'page.viewed', eventId: 'e1', anonymousId: 'anon_1' },
      ],
    };
    const answer = service.ingest(auth, body, granted, undefined);
    await new Promise((resolve) => setImmediate(resolve));

    expect(writes).toHaveLength(1);
    expect(body.events).toBeUndefined();
    expect(writes[0].rows.rowCount).toBe(2);

    writes[0].release();
    await expect(answer).resolves.toEqual({ object: 'list', received: 3, env: 'sandbox' });
  });

  it('an invalid batch is answered 400 and its body left as it came', async () => {
    const { service, writes } = serviceWithPendingWrite();
    const body: Record<string, unknown> = { events: [{ eventId: 'e1' }] };
    await expect(service.ingest(auth, body, granted, undefined)).rejects.toMatchObject({ status: 400 });
    expect(body.events).toEqual([{ eventId: 'e1' }]);
    expect(writes).toHaveLength(0);
  });
});
