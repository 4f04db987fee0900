import { IdentityAdminService } from '../../libs/identity/src/operator/identity-admin.service.js';
import { unique } from '../support/medium.js';
import { cardRail, type CardRail } from './card-rail.js';

/**
 * Whose purchase a card payment is, on the rails' modules alone (no HTTP): the customer named in
 * the metadata, the card customer id as an alias, checkout linking or folding a rail-only
 * customer, and a named customer's card customer never moved.
 */
describe('medium: card rail, whose purchase it is', () => {
  let c: CardRail;

  beforeAll(async () => {
    c = await cardRail();
  });
  afterAll(() => c?.close());

  const checkout = (fields: Record<string, unknown>) => c.event('checkout.session.completed', { id: unique('cs'), object: 'checkout.session', ...fields });

  it('metadata.serviceCustomerId names the customer', async () => {
    const customerId = await c.identify(unique('user'));
    const result = await c.send(c.event('customer.subscription.created', c.subscription({ metadata: { serviceCustomerId: customerId } })));
    expect(result.serviceCustomerId).toBe(customerId);
    expect(await c.activeKeys(customerId)).toEqual(['cloud_sync', 'pro']);
  });

  it('metadata.developerUserId is resolved or created like identify', async () => {
    const userId = unique('user');
    const result = await c.send(c.event('customer.subscription.created', c.subscription({ metadata: { developerUserId: userId } })));
    expect(await c.identify(userId)).toBe(result.serviceCustomerId);
  });

  it('the card customer id keeps later subscriptions on the same customer', async () => {
    const customer = unique('cus');
    const first = await c.send(c.event('customer.subscription.created', c.subscription({ customer })));
    const second = await c.send(c.event('customer.subscription.created', c.subscription({ customer, product: 'prod_basic' })));
    expect(second.serviceCustomerId).toBe(first.serviceCustomerId);
    expect(await c.activeKeys(first.serviceCustomerId!)).toEqual(['basic', 'cloud_sync', 'pro']);
  });

  it('checkout after the subscription folds the rail-only customer into the named one', async () => {
    const customer = unique('cus');
    const sub = c.subscription({ customer });
    const railOnly = (await c.send(c.event('customer.subscription.created', sub))).serviceCustomerId!;
    const userId = unique('user');
    const folded = await c.send(checkout({ customer, subscription: sub.id, client_reference_id: userId, metadata: {} }));
    expect(folded.decision).toBe('applied');
    const named = folded.serviceCustomerId!;
    expect(named).not.toBe(railOnly);
    expect(await c.identify(userId)).toBe(named);
    expect(await c.activeKeys(named)).toEqual(['cloud_sync', 'pro']);
    expect(await c.activeKeys(railOnly)).toEqual([]);
    expect((await c.audit(folded.auditEventId))?.reason).toMatch(/folded/);
    // Later events of the subscription land on the named customer.
    const renewed = await c.send(c.event('customer.subscription.updated', { ...sub, status: 'past_due' }, { created: c.now() + 1 }));
    expect(renewed.serviceCustomerId).toBe(named);
  });

  it('checkout before the subscription links the card customer first', async () => {
    const customer = unique('cus');
    const userId = unique('user');
    const linked = await c.send(checkout({ customer, client_reference_id: userId }));
    expect(linked.decision).toBe('applied');
    expect((await c.audit(linked.auditEventId))?.reason).toMatch(/linked/);
    const created = await c.send(c.event('customer.subscription.created', c.subscription({ customer })));
    expect(created.serviceCustomerId).toBe(linked.serviceCustomerId);
    expect(await c.identify(userId)).toBe(linked.serviceCustomerId);
    const nobody = await c.send(checkout({ customer: unique('cus') }));
    expect(nobody).toEqual(expect.objectContaining({ decision: 'no_op', serviceCustomerId: null }));
  });

  it('checkout naming a customer that already has the card customer: no_op', async () => {
    const userId = unique('user');
    const customer = unique('cus');
    const created = await c.send(c.event('customer.subscription.created', c.subscription({ customer, metadata: { developerUserId: userId } })));
    const again = await c.send(checkout({ customer, client_reference_id: userId }));
    expect(again).toEqual(expect.objectContaining({ decision: 'no_op', serviceCustomerId: created.serviceCustomerId }));
  });

  it('a card customer of a customer with a developer id is never moved: queued for review', async () => {
    const customer = unique('cus');
    const created = await c.send(c.event('customer.subscription.created', c.subscription({ customer, metadata: { developerUserId: unique('alice') } })));
    const bob = await c.identify(unique('bob'));
    const refused = await c.send(checkout({ customer, metadata: { serviceCustomerId: bob } }));
    expect(refused).toEqual(expect.objectContaining({ decision: 'no_op', serviceCustomerId: created.serviceCustomerId }));
    expect(await c.activeKeys(created.serviceCustomerId!)).toEqual(['cloud_sync', 'pro']);
    expect(await c.activeKeys(bob)).toEqual([]);
    const reviews = await c.m.get(IdentityAdminService).mergeReviews(c.projectId, 'sandbox');
    expect(reviews.data.filter((r) => r.canonicalCustomerId === created.serviceCustomerId)).toEqual([
      expect.objectContaining({ canonicalCustomerId: created.serviceCustomerId, otherCustomerId: bob, status: 'pending' }),
    ]);
  });
});
