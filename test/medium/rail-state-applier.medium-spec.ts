import { EntitlementHistory, ProductCatalog } from '#entitlements';
import { RailStateApplier, type RailEventContext, type RailStateChange } from '../../libs/rails/src/model/rail-state-applier.service.js';
import { RailSubscriptionsRepository } from '../../libs/rails/src/model/rail-subscriptions.repository.js';
import { createMediumContext, seedProject, unique, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';

/**
 * The rail state applier with its real repositories (subscriptions, catalogue, entitlement
 * writer, audit journal) on the test database, no HTTP: newest rail time wins, the strongest
 * live subscription holds a key, the catalogue gate, and the database's tenant keys.
 */
describe('medium: RailStateApplier', () => {
  let m: MediumContext;
  let applier: RailStateApplier;
  let subscriptions: RailSubscriptionsRepository;
  let projectId: string;
  let sandboxCustomers: string[];
  let productionCustomer: string;
  const scope = () => testScope(projectId, 'sandbox');
  const DAY = 86_400;

  beforeAll(async () => {
    m = await createMediumContext();
    applier = m.get(RailStateApplier);
    subscriptions = m.get(RailSubscriptionsRepository);
    const seeded = await seedProject(m.dataSource, ['sandbox', 'sandbox', 'sandbox', 'sandbox', 'production']);
    projectId = seeded.projectId;
    sandboxCustomers = seeded.customerIds.slice(0, 4);
    productionCustomer = seeded.customerIds[4];
    await m.get(ProductCatalog).replace(projectId, [
      { rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro'] },
      { rail: 'card_payments', productId: 'prod_bundle', entitlementKeys: ['pro', 'cloud_sync'] },
    ]);
  });
  afterAll(() => m?.close());

  const event = (): RailEventContext => ({
    eventType: 'customer.subscription.updated',
    signatureVerified: true,
    reconciledWithProvider: false,
    rawEventReceivedAt: m.clock.nowMs(),
    actor: 'rail:card_payments',
    requestId: null,
  });
  const change = (customerId: string, over: Partial<RailStateChange> = {}): RailStateChange => ({
    rail: 'card_payments',
    subscriptionId: unique('sub'),
    customerId,
    productId: 'prod_pro',
    state: 'active',
    validUntil: m.clock.nowSeconds() + 30 * DAY,
    railTimeMs: m.clock.nowMs(),
    rawStatus: 'active',
    ...over,
  });
  const apply = (c: RailStateChange, s = scope()) => m.sql.transaction(() => applier.apply(s, c, event()));
  /** The customer's card entitlement rows, ended ones included (the entitlement history, ordered by key). */
  const rows = async (customerId: string) =>
    (await m.get(EntitlementHistory).of(scope(), customerId))
      .filter((row) => row.rail === 'card_payments')
      .map(({ key, state, validUntil, subscriptionId }) => ({ key, state, validUntil, subscriptionId }));

  it('newest rail time wins: an older state after a newer one is no_op and changes nothing; a newer one applies', async () => {
    const customerId = sandboxCustomers[0];
    const t0 = m.clock.nowMs();
    const first = change(customerId, { railTimeMs: t0 });
    expect((await apply(first)).decision).toBe('applied');

    const older = await apply({ ...first, state: 'inactive', rawStatus: 'canceled', railTimeMs: t0 - 1 });
    expect(older.decision).toBe('no_op');
    expect(older.reason).toMatch(/Older than the stored state/);
    expect((await subscriptions.find(scope(), 'card_payments', first.subscriptionId))?.state).toBe('active');
    expect(await rows(customerId)).toEqual([expect.objectContaining({ key: 'pro', state: 'active' })]);

    const newer = await apply({ ...first, state: 'inactive', rawStatus: 'canceled', railTimeMs: t0 + 1 });
    expect(newer.decision).toBe('applied');
    expect((await subscriptions.find(scope(), 'card_payments', first.subscriptionId))?.railTimeMs).toBe(t0 + 1);
    expect(await rows(customerId)).toEqual([expect.objectContaining({ key: 'pro', state: 'expired' })]);

    // The same state again (any time) is no_op: nothing to change.
    expect((await apply({ ...first, state: 'inactive', rawStatus: 'canceled', railTimeMs: t0 + 2 })).decision).toBe('no_op');
  });

  it('the strongest live subscription holds a key: the later end wins, lifetime beats any date, an ended one yields to the live one', async () => {
    const customerId = sandboxCustomers[1];
    const now = m.clock.nowSeconds();
    const short = change(customerId, { validUntil: now + 10 * DAY });
    const long = change(customerId, { productId: 'prod_bundle', validUntil: now + 40 * DAY });
    await apply(short);
    await apply(long);
    expect(await rows(customerId)).toEqual([
      { key: 'cloud_sync', state: 'active', validUntil: now + 40 * DAY, subscriptionId: long.subscriptionId },
      { key: 'pro', state: 'active', validUntil: now + 40 * DAY, subscriptionId: long.subscriptionId },
    ]);

    // A renewal of the shorter one (still the earlier end) does not take the key over.
    await apply({ ...short, validUntil: now + 20 * DAY, railTimeMs: short.railTimeMs + 1 });
    expect((await rows(customerId)).find((r: { key: string }) => r.key === 'pro')).toMatchObject({
      validUntil: now + 40 * DAY,
      subscriptionId: long.subscriptionId,
    });

    // The longer one ends: the key falls back to the live shorter one, cloud_sync ends.
    await apply({ ...long, state: 'inactive', rawStatus: 'canceled', railTimeMs: long.railTimeMs + 1 });
    expect(await rows(customerId)).toEqual([
      expect.objectContaining({ key: 'cloud_sync', state: 'expired' }),
      { key: 'pro', state: 'active', validUntil: now + 20 * DAY, subscriptionId: short.subscriptionId },
    ]);

    // A lifetime purchase beats any date.
    const lifetime = change(customerId, { validUntil: null });
    await apply(lifetime);
    expect((await rows(customerId)).find((r: { key: string }) => r.key === 'pro')).toMatchObject({
      state: 'active',
      validUntil: null,
      subscriptionId: lifetime.subscriptionId,
    });
  });

  it('a product missing from the catalogue is rejected and stores nothing', async () => {
    const customerId = sandboxCustomers[2];
    const unknown = change(customerId, { productId: 'prod_unknown' });
    const result = await apply(unknown);
    expect(result.decision).toBe('rejected');
    expect(await subscriptions.find(scope(), 'card_payments', unknown.subscriptionId)).toBeNull();
    expect(await rows(customerId)).toEqual([]);
  });

  it("the database refuses a subscription naming another environment's customer (composite key, 23503), and the transaction leaves nothing", async () => {
    const crossing = change(productionCustomer);
    const failure = (await apply(crossing).catch((e: unknown) => e)) as { driverError?: { code?: string }; code?: string };
    expect(failure.driverError?.code ?? failure.code).toBe('23503');
    expect(await subscriptions.find(scope(), 'card_payments', crossing.subscriptionId)).toBeNull();
  });
});
