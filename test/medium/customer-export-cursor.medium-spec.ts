import { CustomerListRepository } from '../../libs/telemetry/src/console/customer-list.repository.js';
import type { CustomerListFilter } from '../../libs/telemetry/src/console/customer-list-rules.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';

const EVERY: CustomerListFilter = { q: null, state: null, rail: null, product: null, paying: null, sort: 'created', order: 'desc' };

/**
 * The customer export's cursor on the test database: its batches give every row once, in the
 * list's order, whatever the batch size, each row in the export's columns (rails, products and
 * states as one text each); a reader that stops early or fails ends the cursor and its
 * transaction cleanly.
 */
describe('medium: the customer export reads the list through a cursor in batches', () => {
  let m: MediumContext;
  let list: CustomerListRepository;
  const scope = () => testScope(projectId, 'sandbox');
  let projectId = '';
  let customers: string[] = [];

  beforeAll(async () => {
    m = await createMediumContext();
    list = m.get(CustomerListRepository);
    projectId = await m.newProject();
    customers = [];
    for (let i = 0; i < 7; i++) customers.push(await m.newCustomer(scope()));
  });
  afterAll(() => m?.close());

  const read = async (batch: number, stopAfter = Infinity) => {
    const batches: string[][] = [];
    await list.each(scope(), EVERY, batch, async (rows) => {
      batches.push(rows.map((row) => row.id));
      return batches.length < stopAfter;
    });
    return batches;
  };

  it('every row once and in order, for batches smaller than, equal to and larger than the list', async () => {
    const whole = (await read(1000)).flat();
    expect([...whole].sort()).toEqual([...customers].sort());
    for (const batch of [1, 2, 3, 7]) {
      const batches = await read(batch);
      expect(batches.flat()).toEqual(whole);
      expect(batches.every((rows) => rows.length <= batch)).toBe(true);
    }
    // A list that fills its last batch exactly ends on an empty fetch, which is not handed over.
    expect((await read(7)).length).toBe(1);
  });

  it('rails, products and states come as the file writes them: distinct words in order, separated by spaces; none is empty text', async () => {
    const [withTwo, without] = customers;
    const subscription = (rail: string, product: string, raw: string) =>
      m.sql.run(
        `INSERT INTO rail_subscriptions (project_id, env, rail, subscription_id, customer_id, product_id, state, valid_until, rail_time_ms, raw_status, created_at, updated_at)
         VALUES ($1, 'sandbox', $2, $3, $4, $5, 'active', now() + interval '30 days', 1, $6, now(), now())`,
        [projectId, rail, `sub_${rail}_${product}`, withTwo, product, raw],
      );
    await subscription('ios_store', 'com.app.pro', 'active');
    await subscription('card_payments', 'price_pro', 'trialing');
    await subscription('card_payments', 'price_max', 'active');
    const rows: Record<string, { rails: string; products: string; states: string }> = {};
    await list.each(scope(), EVERY, 1000, async (batch) => {
      for (const row of batch) rows[row.id] = { rails: row.rails, products: row.products, states: row.states };
      return true;
    });
    expect(rows[withTwo]).toEqual({ rails: 'card_payments ios_store', products: 'com.app.pro price_max price_pro', states: 'active trialing' });
    expect(rows[without]).toEqual({ rails: '', products: '', states: '' });
  });

  it('a reader that stops after its first batch ends the cursor; the connection serves the next export', async () => {
    expect(await read(2, 1)).toHaveLength(1);
    expect(await read(3, 2)).toHaveLength(2);
    expect((await read(1000)).flat()).toHaveLength(customers.length);
  });

  it('a reader that fails rolls the export back and its error reaches the caller', async () => {
    await expect(
      list.each(scope(), EVERY, 2, async () => {
        throw new Error('the client went away');
      }),
    ).rejects.toThrow('the client went away');
    expect((await read(1000)).flat()).toHaveLength(customers.length);
  });
});
