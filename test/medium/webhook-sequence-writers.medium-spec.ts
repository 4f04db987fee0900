import { Sql, type TenantScope } from '#platform';
import { type CustomerOutboxEvent, WebhookOutboxRepository } from '../../libs/webhooks/src/outbox/webhook-outbox.repository.js';
import { createMediumContext, unique, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';

const NO_TRACE = { traceparent: null, tracestate: null };

/**
 * The outbox write tells which customers' events were read before another transaction numbered
 * a change of theirs: the state such an event carries may lack that change (the outbox reads it
 * again). Two transactions through the same repository, the second one's commit between the
 * first one's reads.
 */
describe('medium: the sequence counter names the transaction numbered before', () => {
  let m: MediumContext;
  let sql: Sql;
  let outbox: WebhookOutboxRepository;

  beforeAll(async () => {
    m = await createMediumContext();
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

  const snapshotNow = async (): Promise<string> => (await sql.one<{ s: string }>(`SELECT pg_current_snapshot()::text AS s`, []))!.s;

  const update = (customerId: string, stateSnapshot: string): CustomerOutboxEvent => {
    const id = unique('evt');
    return { id, type: 'customer.entitlements.updated', body: `{"id":"${id}","data":{"sequence":0}}`, customerId, sequenced: true, stateSnapshot };
  };

  /** Numbers the customer in a transaction of its own (outside any open one), with a state read just before. */
  const numberIn = ({ scope, customerId }: { scope: TenantScope; customerId: string }) =>
    sql.detached(() => sql.transaction(async () => outbox.record(scope, [update(customerId, await snapshotNow())], NO_TRACE, 0)));

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
    expect(stale).toEqual([{ customerId: c.customerId, sequence: 3, numbered: true }]);
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
    expect(answers).toEqual({ first: [], second: [{ customerId: c.customerId, sequence: 4, numbered: true }] });
  });
});
