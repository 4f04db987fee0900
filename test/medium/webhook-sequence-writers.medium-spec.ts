import { Sql, type TenantScope } from '#platform';
import { announcedSetText } from '#webhooks';
import { type CustomerOutboxEvent, WebhookOutboxRepository } from '../../libs/webhooks/src/outbox/webhook-outbox.repository.js';
import { createMediumContext, unique, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';
import {
  WEBHOOK_MEDIUM_ENV,
  backdateEndpointEnabled,
  deleteEndpoint,
  disableEndpoint,
  enableEndpoint,
  endpointEnabledSince,
  newEndpoint,
  numberedWithoutKeptSet,
} from '../support/factories/webhooks.js';

const NO_TRACE = { traceparent: null, tracestate: null };

/**
 * The outbox write tells which customers' events were read before another transaction numbered
 * a change of theirs: the state such an event carries may lack that change (the outbox reads it
 * again). It keeps the set each update announced and answers it where a change read another.
 * Two transactions through the same repository, the second one's commit between the
 * first one's reads.
 */
describe('medium: the sequence counter names the transaction numbered before', () => {
  let m: MediumContext;
  let sql: Sql;
  let outbox: WebhookOutboxRepository;

  beforeAll(async () => {
    m = await createMediumContext({ env: WEBHOOK_MEDIUM_ENV });
    sql = m.get(Sql);
    outbox = m.get(WebhookOutboxRepository);
  });
  afterAll(async () => {
    await m?.close();
  });

  async function customer(): Promise<{ scope: TenantScope; customerId: string }> {
    const scope = testScope(await m.newProject(), 'sandbox');
    return { scope, customerId: await m.newCustomer(scope) };
  }

  /** An endpoint of the scope, enabled `secondsAgo` (the kept set is trusted only while one has been enabled since). */
  const endpointEnabled = (scope: TenantScope, secondsAgo: number): Promise<string> => endpointEnabledSince(m, scope, secondsAgo);

  const snapshotNow = async (): Promise<string> => (await sql.one<{ s: string }>(`SELECT pg_current_snapshot()::text AS s`, []))!.s;

  const NONE = announcedSetText([]);
  const PRO = announcedSetText([{ key: 'pro', validUntil: 1_900_000_000, rail: 'manual' }]);

  /** An update of the customer from `heard` (the set it read before) to `announced`. */
  const update = (customerId: string, stateSnapshot: string, heard = NONE, announced = NONE): CustomerOutboxEvent => {
    const id = unique('evt');
    const body = `{"id":"${id}","data":{"sequence":0}}`;
    return { id, type: 'customer.entitlements.updated', body, customerId, sequenced: true, stateSnapshot, heardSet: heard, announcedSet: announced };
  };

  /** Numbers the customer in a transaction of its own (outside any open one), with a state read just before. */
  const numberIn = ({ scope, customerId }: { scope: TenantScope; customerId: string }, heard = NONE, announced = NONE) =>
    sql.detached(() => sql.transaction(async () => outbox.record(scope, [update(customerId, await snapshotNow(), heard, announced)], NO_TRACE, 0)));

  const counterOf = async ({ scope, customerId }: { scope: TenantScope; customerId: string }) =>
    (await sql.one<{ announced: string | null; previous: string | null }>(
      `SELECT announced, previous_announced AS previous FROM webhook_customer_sequences WHERE project_id = $1 AND env = $2 AND customer_id = $3`,
      [scope.projectId, scope.env, customerId],
    ))!;

  it('a first number, and a number after a writer the state saw, are not stale', async () => {
    const c = await customer();
    expect(await numberIn(c)).toEqual([]);
    expect(await numberIn(c)).toEqual([]);
  });

  it('a state read before another transaction numbered the customer is stale, with its own number', async () => {
    const c = await customer();
    await numberIn(c);
    const stale = await sql.transaction(async () => {
      const readBefore = await snapshotNow();
      await numberIn(c); // another transaction, committed now
      return outbox.record(c.scope, [update(c.customerId, readBefore)], NO_TRACE, 0);
    });
    expect(stale).toEqual([{ customerId: c.customerId, sequence: 3, numbered: true, stale: true, heard: NONE }]);
  });

  it('a second number in one transaction still names the other writer before the first', async () => {
    const c = await customer();
    await numberIn(c);
    const answers = await sql.transaction(async () => {
      const readBefore = await snapshotNow();
      await numberIn(c); // another transaction, committed now
      const first = await outbox.record(c.scope, [update(c.customerId, await snapshotNow())], NO_TRACE, 0);
      // A second change in the same transaction whose state was read before the other commit.
      const second = await outbox.record(c.scope, [update(c.customerId, readBefore)], NO_TRACE, 0);
      return { first, second };
    });
    expect(answers).toEqual({ first: [], second: [{ customerId: c.customerId, sequence: 4, numbered: true, stale: true, heard: NONE }] });
  });

  it('keeps the set each update announced, and answers it where a change read another set before', async () => {
    const c = await customer();
    await endpointEnabled(c.scope, 60);
    // The first number: nothing announced before, nothing to compare (a new counter holds what its change read).
    expect(await numberIn(c, NONE, PRO)).toEqual([]);
    expect(await counterOf(c)).toEqual({ announced: PRO, previous: NONE });
    // The same set as the change read is kept as ''.
    expect(await numberIn(c, PRO, PRO)).toEqual([]);
    expect(await counterOf(c)).toEqual({ announced: PRO, previous: '' });
    // A change that read the set the last update announced: nothing to say.
    expect(await numberIn(c, PRO, NONE)).toEqual([]);
    // A change that read `pro` before, though the last update announced none (it was announced
    // since, or lapsed unannounced): answered with what receivers heard; the counter takes its set.
    expect(await numberIn(c, PRO, PRO)).toEqual([{ customerId: c.customerId, sequence: 4, numbered: true, stale: false, heard: NONE }]);
    expect(await counterOf(c)).toEqual({ announced: PRO, previous: NONE });
  });

  it('a kept set is not vouched for after a number taken without one, nor across a time without an enabled endpoint', async () => {
    const c = await customer();
    const endpoint = await endpointEnabled(c.scope, 60);
    await numberIn(c, NONE, PRO);
    // A replica of the previous release numbers an update without keeping its set.
    await numberedWithoutKeptSet(m.dataSource, c.scope, c.customerId);
    expect(await numberIn(c, NONE, PRO)).toEqual([]);
    expect(await counterOf(c)).toEqual({ announced: PRO, previous: null });
    // Vouched for again from the next number on.
    expect(await numberIn(c, NONE, NONE)).toEqual([{ customerId: c.customerId, sequence: 4, numbered: true, stale: false, heard: PRO }]);

    // The only endpoint disabled and enabled again: what happened meanwhile went unannounced.
    await disableEndpoint(m, endpoint);
    await enableEndpoint(m, endpoint);
    expect(await numberIn(c, PRO, PRO)).toEqual([]);
    expect(await counterOf(c)).toEqual({ announced: PRO, previous: null });
    // Another endpoint enabled long before vouches for it.
    await endpointEnabled(c.scope, 60);
    expect(await numberIn(c, NONE, NONE)).toEqual([{ customerId: c.customerId, sequence: 6, numbered: true, stale: false, heard: PRO }]);
  });

  it('the trigger stamps an endpoint when it becomes enabled; a set is vouched for from a second after the earliest enabled one', async () => {
    const c = await customer();
    const first = await newEndpoint(m, c.scope);
    const stamped = async (id: string) =>
      (await sql.one<{ age: number }>(`SELECT extract(epoch FROM clock_timestamp() - enabled_at)::float8 AS age FROM webhook_endpoints WHERE id = $1`, [id]))!
        .age;
    expect(await stamped(first)).toBeLessThan(5);
    // Within the second after the enabling: not vouched for (a replica may still hold "no endpoint").
    await numberIn(c, NONE, PRO);
    expect(await numberIn(c, NONE, NONE)).toEqual([]);
    // Enabled 1.5 s before the set was announced: vouched for; 0.5 s: not.
    const announcedAfter = async (seconds: number) => {
      await backdateEndpointEnabled(m.dataSource, first, seconds);
      await numberIn(c, NONE, PRO);
      return numberIn(c, NONE, NONE);
    };
    expect(await announcedAfter(0.5)).toEqual([]);
    expect(await announcedAfter(1.5)).toEqual([{ customerId: c.customerId, sequence: 6, numbered: true, stale: false, heard: PRO }]);
    // A disabled endpoint stamps nothing; enabling it again stamps it anew.
    await disableEndpoint(m, first);
    await backdateEndpointEnabled(m.dataSource, first, 3600);
    await enableEndpoint(m, first);
    expect(await stamped(first)).toBeLessThan(5);
    // An endpoint replaced by another (created, then the first deleted): sets kept before the new one are not vouched for.
    await backdateEndpointEnabled(m.dataSource, first, 3600);
    await numberIn(c, NONE, PRO);
    await endpointEnabled(c.scope, 0);
    await deleteEndpoint(m, first);
    expect(await numberIn(c, NONE, NONE)).toEqual([]);
  });

  it('a change without a number keeps the announced set; erasure clears the sets', async () => {
    const c = await customer();
    await endpointEnabled(c.scope, 60);
    await numberIn(c, NONE, PRO);
    const touched = await sql.transaction(async () =>
      outbox.record(c.scope, [], NO_TRACE, 0, [{ customerId: c.customerId, stateSnapshot: await snapshotNow() }]),
    );
    expect(touched).toEqual([]);
    expect(await counterOf(c)).toEqual({ announced: PRO, previous: PRO });
    await sql.transaction(() => outbox.purgeCustomer(c.scope, c.customerId, 0));
    expect(await counterOf(c)).toEqual({ announced: null, previous: null });
  });
});
