import type { Statement } from '../../libs/platform/src/database/sql.js';
import { EventsRepository } from '../../libs/telemetry/src/storage/events.repository.js';
import { type EventRow, encodeBatch } from '../../libs/telemetry/src/storage/event-insert.sql.js';
import { testScope } from '../support/scopes.js';

function repository(failures: { code: string }[]) {
  const calls: string[] = [];
  const sql = {
    run: jest.fn(async (statement: Statement) => {
      calls.push(typeof statement === 'string' ? statement : statement.text);
      const failure = failures.shift();
      if (failure) throw Object.assign(new Error('query failed'), failure);
      return { rows: [], affected: 0 };
    }),
    detached: <T>(work: () => Promise<T>) => work(),
  };
  const repo = new EventsRepository(sql as never, { eventsWriteSlots: 2 } as never);
  return { repo, calls };
}

const scope = testScope('proj_1', 'sandbox');
const meta = { appId: 'app_1', receivedAtMs: 1_700_000_000_000, sdkName: null, sdkVersion: null };
const row: EventRow = {
  eventId: 'evt_1',
  clientDay: 19_000,
  name: 'page.viewed',
  timestampMs: 1_700_000_000_000,
  clientTimestampMs: 1_700_000_000_000,
  level: null,
  fingerprint: null,
  propertiesJson: '{}',
  tagsJson: null,
  categoryTagsJson: null,
  developerUserId: null,
  anonymousId: 'anon_1',
  serviceCustomerId: null,
};

/** The batch as the ingestion service hands it over: encoded once. */
const encoded = () => encodeBatch([row], meta.receivedAtMs);

describe('EventsRepository.writeEncoded', () => {
  it('runs the idempotent batch statement once more when it lost a deadlock', async () => {
    const { repo, calls } = repository([{ code: '40P01' }]);
    await expect(repo.writeEncoded(scope, meta, encoded())).resolves.toBe(1);
    expect(calls).toHaveLength(2);
    expect(calls[1]).toBe(calls[0]);
  });

  it('writes new events with a plain INSERT and, when one is already stored, runs the upsert instead', async () => {
    const fresh = repository([]);
    await expect(fresh.repo.writeEncoded(scope, meta, encoded())).resolves.toBe(1);
    expect(fresh.calls).toHaveLength(1);
    expect(fresh.calls[0]).not.toContain('ON CONFLICT (project_id, env, event_id, client_day)');
    const retried = repository([{ code: '23505' }]);
    await expect(retried.repo.writeEncoded(scope, meta, encoded())).resolves.toBe(1);
    expect(retried.calls).toHaveLength(2);
    expect(retried.calls[1]).toContain('ON CONFLICT (project_id, env, event_id, client_day) DO UPDATE');
  });

  it('does not retry other failures, nor a second deadlock', async () => {
    const other = repository([{ code: '23503' }]);
    await expect(other.repo.writeEncoded(scope, meta, encoded())).rejects.toMatchObject({ code: '23503' });
    expect(other.calls).toHaveLength(1);
    const twice = repository([{ code: '40P01' }, { code: '40P01' }]);
    await expect(twice.repo.writeEncoded(scope, meta, encoded())).rejects.toMatchObject({ code: '40P01' });
    expect(twice.calls).toHaveLength(2);
  });
});
