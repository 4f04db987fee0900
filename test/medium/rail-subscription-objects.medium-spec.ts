import type { Subscription } from '../../libs/rails/src/lifecycle/subscription.js';
import { RailSubscriptionsRepository } from '../../libs/rails/src/model/rail-subscriptions.repository.js';
import { createMediumContext, seedProject, unique, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';

/** The subscription object of a rail record: stored with each write, NULL when a write brings none, its state checked by the schema. */
describe('medium: rail_subscriptions.subscription', () => {
  let m: MediumContext;
  let repo: RailSubscriptionsRepository;
  let projectId: string;
  let customerId: string;
  const scope = () => testScope(projectId, 'sandbox');

  beforeAll(async () => {
    m = await createMediumContext();
    repo = m.get(RailSubscriptionsRepository);
    const seeded = await seedProject(m.dataSource, ['sandbox']);
    projectId = seeded.projectId;
    customerId = seeded.customerIds[0];
  });
  afterAll(() => m?.close());

  const object = (id: string, over: Partial<Subscription> = {}): Subscription => ({
    object: 'subscription',
    id,
    rail: 'card_payments',
    productId: 'prod_pro',
    entitlementKeys: ['pro'],
    kind: 'auto_renewing',
    state: 'trialing',
    periodType: 'trial',
    willRenew: true,
    isActive: true,
    purchasedAt: 1_800_000_000,
    originalPurchasedAt: 1_800_000_000,
    currentPeriodStartsAt: 1_800_000_000,
    currentPeriodEndsAt: 1_800_604_800,
    accessEndsAt: 1_800_604_800,
    unsubscribeDetectedAt: null,
    billingIssueDetectedAt: null,
    gracePeriodEndsAt: null,
    pausedAt: null,
    autoResumeAt: null,
    expiredAt: null,
    expirationReason: null,
    refundedAt: null,
    ownershipType: 'purchased',
    pendingProductId: null,
    offer: null,
    price: { amountMicros: 0, currency: 'USD' },
    priceChange: null,
    storeEnvironment: 'sandbox',
    updatedAt: 1_800_000_000,
    ...over,
  });
  const write = (subscriptionId: string, subscription?: Subscription | null) =>
    repo.upsert(
      scope(),
      {
        rail: 'card_payments',
        subscriptionId,
        customerId,
        productId: 'prod_pro',
        state: 'active',
        validUntil: 1_800_604_800,
        railTimeMs: m.clock.nowMs(),
        rawStatus: 'trialing',
        lastEventId: null,
        ...(subscription === undefined ? {} : { subscription }),
      },
      m.clock.now(),
    );
  const column = async (subscriptionId: string) =>
    (
      await m.dataSource.query(`SELECT lifecycle_state, subscription FROM rail_subscriptions WHERE project_id = $1 AND subscription_id = $2`, [
        projectId,
        subscriptionId,
      ])
    )[0];

  it('stores the object and its state; a later write without one leaves NULL; reads return it', async () => {
    const id = unique('sub');
    const stored = await write(id, object(id));
    expect(stored.subscription).toEqual(object(id));
    expect(await column(id)).toEqual({ lifecycle_state: 'trialing', subscription: object(id) });
    expect((await repo.find(scope(), 'card_payments', id))?.subscription).toEqual(object(id));
    expect((await repo.listForReads(scope(), customerId, m.clock.nowMs(), 100)).map((r) => r.subscription?.id)).toContain(id);

    const plain = await write(id);
    expect(plain.subscription).toBeNull();
    expect(await column(id)).toEqual({ lifecycle_state: null, subscription: null });
  });

  it('the schema refuses a state outside the lifecycle states and an object whose state differs from the column', async () => {
    const id = unique('sub');
    await write(id, object(id));
    await expect(
      m.dataSource.query(`UPDATE rail_subscriptions SET lifecycle_state = 'canceled' WHERE project_id = $1 AND subscription_id = $2`, [projectId, id]),
    ).rejects.toThrow(/rail_subscriptions_lifecycle_state_check|rail_subscriptions_subscription_check/);
    await expect(
      m.dataSource.query(`UPDATE rail_subscriptions SET lifecycle_state = 'active' WHERE project_id = $1 AND subscription_id = $2`, [projectId, id]),
    ).rejects.toThrow(/rail_subscriptions_subscription_check/);
  });
});
