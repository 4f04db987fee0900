import { keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { tablesContaining } from '../support/plaintext-scan.js';
import { eventually, RailSecretsFile } from '../support/rail-secrets-file.js';
import { type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { cardWebhookHarness, SECRET_OLD, SECRET_NEW, SECRET_ROTATED, uid } from '../support/harness/webhooks-card.js';

describe('webhooks: card payments, whose purchase it is, RAIL_SECRETS_FILE', () => {
  const h = cardWebhookHarness();
  let t: TestApp;
  let fx: ProjectFixture;
  let file: RailSecretsFile;
  beforeAll(() => {
    ({ t, fx, file } = h);
  });
  const { logs, now, subscription, event, send, activeKeys, audit } = h;

  describe('whose purchase it is', () => {
    const identify = (userId: string) =>
      t.http
        .post('/v1/identify')
        .set(keyHeaders(fx, fx.keys.pubTest))
        .send({ userId, anonymousId: uid('anon') });

    it('metadata.serviceCustomerId names the customer', async () => {
      const known = await identify(uid('user'));
      const customerId = known.body.serviceCustomerId;
      const res = await send(event('customer.subscription.created', subscription({ metadata: { serviceCustomerId: customerId } })));
      expect(res.body.serviceCustomerId).toBe(customerId);
      expect(await activeKeys(customerId)).toEqual(['cloud_sync', 'pro']);
    });

    it('metadata.developerUserId is resolved or created like identify', async () => {
      const userId = uid('user');
      const res = await send(event('customer.subscription.created', subscription({ metadata: { developerUserId: userId } })));
      const later = await identify(userId);
      expect(later.body.serviceCustomerId).toBe(res.body.serviceCustomerId);
    });

    it('the card customer id keeps later subscriptions on the same customer', async () => {
      const customer = uid('cus');
      const first = await send(event('customer.subscription.created', subscription({ customer })));
      const second = await send(event('customer.subscription.created', subscription({ customer, product: 'prod_basic' })));
      expect(second.body.serviceCustomerId).toBe(first.body.serviceCustomerId);
      expect(await activeKeys(first.body.serviceCustomerId)).toEqual(['basic', 'cloud_sync', 'pro']);
    });

    it('checkout after the subscription folds the rail-only customer into the named one', async () => {
      const customer = uid('cus');
      const sub = subscription({ customer });
      const created = await send(event('customer.subscription.created', sub));
      const railOnly = created.body.serviceCustomerId;
      const userId = uid('user');
      const checkout = await send(
        event('checkout.session.completed', {
          id: uid('cs'),
          object: 'checkout.session',
          customer,
          subscription: sub.id,
          client_reference_id: userId,
          metadata: {},
        }),
      );
      expect(checkout.body.decision).toBe('applied');
      const named = checkout.body.serviceCustomerId;
      expect(named).not.toBe(railOnly);
      expect((await identify(userId)).body.serviceCustomerId).toBe(named);
      expect(await activeKeys(named)).toEqual(['cloud_sync', 'pro']);
      expect(await activeKeys(railOnly)).toEqual([]);
      expect((await audit(checkout.body.auditEventId)).body.data.reason).toMatch(/folded/);
      // Later events of the subscription land on the named customer.
      const renewed = await send(event('customer.subscription.updated', { ...sub, status: 'past_due' }, { created: now() + 1 }));
      expect(renewed.body.serviceCustomerId).toBe(named);
    });

    it('checkout before the subscription links the card customer first', async () => {
      const customer = uid('cus');
      const userId = uid('user');
      const checkout = await send(event('checkout.session.completed', { id: uid('cs'), object: 'checkout.session', customer, client_reference_id: userId }));
      expect(checkout.body.decision).toBe('applied');
      expect((await audit(checkout.body.auditEventId)).body.data.reason).toMatch(/linked/);
      const created = await send(event('customer.subscription.created', subscription({ customer })));
      expect(created.body.serviceCustomerId).toBe(checkout.body.serviceCustomerId);
      expect((await identify(userId)).body.serviceCustomerId).toBe(checkout.body.serviceCustomerId);
      const nobody = await send(event('checkout.session.completed', { id: uid('cs'), object: 'checkout.session', customer: uid('cus') }));
      expect(nobody.body).toEqual(expect.objectContaining({ decision: 'no_op', serviceCustomerId: null }));
    });

    it('checkout naming a customer that already has the card customer: no_op', async () => {
      const userId = uid('user');
      const customer = uid('cus');
      const created = await send(event('customer.subscription.created', subscription({ customer, metadata: { developerUserId: userId } })));
      const checkout = await send(event('checkout.session.completed', { id: uid('cs'), object: 'checkout.session', customer, client_reference_id: userId }));
      expect(checkout.body).toEqual(expect.objectContaining({ decision: 'no_op', serviceCustomerId: created.body.serviceCustomerId }));
    });

    it('a card customer of a customer with a developer id is never moved: queued for review', async () => {
      const customer = uid('cus');
      const alice = uid('alice');
      const created = await send(event('customer.subscription.created', subscription({ customer, metadata: { developerUserId: alice } })));
      const bob = await identify(uid('bob'));
      const checkout = await send(
        event('checkout.session.completed', {
          id: uid('cs'),
          object: 'checkout.session',
          customer,
          metadata: { serviceCustomerId: bob.body.serviceCustomerId },
        }),
      );
      expect(checkout.body).toEqual(expect.objectContaining({ decision: 'no_op', serviceCustomerId: created.body.serviceCustomerId }));
      expect(await activeKeys(created.body.serviceCustomerId)).toEqual(['cloud_sync', 'pro']);
      expect(await activeKeys(bob.body.serviceCustomerId)).toEqual([]);
      const reviews = await t.dataSource.query(
        `SELECT canonical_customer_id, other_customer_id FROM merge_reviews WHERE project_id = $1 AND env = 'sandbox' AND canonical_customer_id = $2`,
        [fx.projectId, created.body.serviceCustomerId],
      );
      expect(reviews).toEqual([{ canonical_customer_id: created.body.serviceCustomerId, other_customer_id: bob.body.serviceCustomerId }]);
    });
  });

  describe('RAIL_SECRETS_FILE', () => {
    it('every listed secret is tried (rotation): old and new both verify', async () => {
      expect((await send(event('invoice.paid', { id: 'in_1', object: 'invoice' }), { secret: SECRET_OLD })).status).toBe(200);
      expect((await send(event('invoice.paid', { id: 'in_1', object: 'invoice' }), { secret: SECRET_NEW })).status).toBe(200);
    });

    it('is re-read when it changes; a malformed file is logged and the last good content stays', async () => {
      const projects = (secrets: string[]) => ({ projects: { [fx.projectId]: { card_payments: { webhookSecrets: secrets } } } });
      file.write(projects([SECRET_ROTATED]));
      await eventually(async () => expect((await send(event('invoice.paid', { id: 'in_1', object: 'invoice' }), { secret: SECRET_ROTATED })).status).toBe(200));
      expectError(await send(event('invoice.paid', { id: 'in_1', object: 'invoice' }), { secret: SECRET_OLD }), 400, 'invalid_signature');

      logs.length = 0;
      file.writeText(`{"projects": {"${fx.projectId}": {"card_payments": {"webhookSecrets": ["${SECRET_NEW}"`);
      await eventually(async () => expect(logs.some((line) => line.level === 'error' && String(line.msg).includes('RAIL_SECRETS_FILE'))).toBe(true));
      expect(JSON.stringify(logs)).not.toContain(SECRET_NEW);
      expect((await send(event('invoice.paid', { id: 'in_1', object: 'invoice' }), { secret: SECRET_ROTATED })).status).toBe(200);

      file.write(projects([SECRET_NEW, SECRET_OLD]));
      await eventually(async () => expect((await send(event('invoice.paid', { id: 'in_1', object: 'invoice' }), { secret: SECRET_NEW })).status).toBe(200));
    });

    it('secrets never reach the database', async () => {
      const scanned = await tablesContaining(t.dataSource, [SECRET_OLD, SECRET_NEW, SECRET_ROTATED]);
      for (const { table, hits } of scanned) expect({ table, hits }).toEqual({ table, hits: 0 });
    });
  });
});
