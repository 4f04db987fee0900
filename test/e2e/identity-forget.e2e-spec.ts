import { AuditJournal } from '#audit';
import { CustomerDirectory } from '#identity';
import { keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { type IdentityProviderKit, aid, uid } from '../support/id-tokens.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { identityHarness } from '../support/harness/identity.js';

// The rules of forget and the retention worker (one audit decision, a returning user, what the
// erasure deletes and keeps, failing hooks) are stated in test/medium/identity-forget.medium-spec.ts.
describe('identity: POST /v1/identity/forget', () => {
  const h = identityHarness();
  let t: TestApp;
  let p: ProjectFixture;
  let other: ProjectFixture;
  let kit: IdentityProviderKit;
  beforeAll(() => {
    ({ t, p, other, kit } = h);
  });
  const { sandbox, identify, forget, token, erasures } = h;

  describe('POST /v1/identity/forget', () => {
    async function newCustomer(fixture = p) {
      const userId = uid('gone');
      const anonymousId = aid('gone');
      const res = await identify({ userId, anonymousId, email: 'gone@example.com', traits: { plan: 'pro' } }, fixture.keys.pubTest, fixture);
      return { userId, anonymousId, customerId: res.body.serviceCustomerId as string };
    }
    /** The customer's audit entries, as the operator's timeline lists them (newest first). */
    async function auditsOf(customerId: string, fixture = p): Promise<{ eventId: string; eventType: string; decision: string; reason: string }[]> {
      const res = await t.http.get(`/admin/v1/projects/${fixture.projectId}/customers/${customerId}/timeline?env=sandbox&limit=100`).set(operatorAuth());
      expect(res.status).toBe(200);
      expect(res.body.hasMore).toBe(false);
      return res.body.data;
    }
    const forgetAudits = async (customerId: string) => (await auditsOf(customerId)).filter((entry) => entry.eventType === 'customer.forget_requested');

    it('needs at least one hint: 400 missing_required_param', async () => {
      const res = await forget({ idToken: 'x' });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('missing_required_param');
    });

    it('secret key, customerId: 200 forgot, the customer reads as unknown at once, one audit entry', async () => {
      const c = await newCustomer();
      const res = await forget({ customerId: c.customerId });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'forgot',
        serviceCustomerId: c.customerId,
        crossdeckCustomerId: c.customerId,
        queuedAt: expect.any(Number),
        env: 'sandbox',
        scope: 'customer',
      });
      expect(Math.abs(res.body.queuedAt - t.clock.nowMs())).toBeLessThan(5000);
      const directory = t.app.get(CustomerDirectory);
      expect(await directory.findCustomerId(sandbox(), { customerId: c.customerId })).toBeNull();
      expect(await directory.findCustomerId(sandbox(), { userId: c.userId })).toBeNull();
      expect(await directory.findCustomerId(sandbox(), { anonymousId: c.anonymousId })).toBeNull();
      expect(await directory.isActiveCustomer(sandbox(), c.customerId)).toBe(false);

      const audits = await forgetAudits(c.customerId);
      expect(audits).toHaveLength(1);
      const entry = await t.http.get(`/v1/server/audit/${audits[0].eventId}`).set(keyHeaders(p, p.keys.skTest));
      expect(entry.status).toBe(200);
      expect(entry.body.data).toMatchObject({
        eventType: 'customer.forget_requested',
        rail: 'manual',
        decision: 'queued',
        customerId: c.customerId,
        env: 'sandbox',
        projectId: p.projectId,
      });
      expect(entry.body.data.actor).toMatch(/^api_key:key_/);

      const queue = await erasures();
      expect(queue.body.data).toContainEqual({
        serviceCustomerId: c.customerId,
        crossdeckCustomerId: c.customerId,
        env: 'sandbox',
        queuedAt: res.body.queuedAt,
        status: 'queued',
      });
    });

    it('no known customer: 200 with serviceCustomerId null', async () => {
      for (const [body, scope] of [
        [{ customerId: 'cdcust_unknown000000000000000000' }, 'customer'],
        [{ customerId: 'not_a_customer' }, 'customer'],
        [{ userId: uid() }, 'customer'],
        [{ anonymousId: aid() }, 'device'],
      ] as const) {
        const res = await forget(body);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ object: 'forgot', serviceCustomerId: null, crossdeckCustomerId: null, queuedAt: expect.any(Number), env: 'sandbox', scope });
      }
    });

    it("another environment's or project's customer is not reached", async () => {
      const c = await newCustomer();
      expect((await forget({ customerId: c.customerId }, p.keys.skLive)).body.serviceCustomerId).toBeNull();
      expect((await forget({ customerId: c.customerId }, other.keys.skTest, other)).body.serviceCustomerId).toBeNull();
      expect(await t.app.get(CustomerDirectory).isActiveCustomer(sandbox(), c.customerId)).toBe(true);
    });

    describe('authority with a publishable key', () => {
      it('identified erasure without a token: 401 identity_token_invalid', async () => {
        const c = await newCustomer();
        for (const body of [{ userId: c.userId }, { customerId: c.customerId }, { customerId: c.customerId, anonymousId: c.anonymousId }]) {
          const res = await forget(body, p.keys.pubTest);
          expect(res.status).toBe(401);
          expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'identity_token_invalid' });
        }
        expect(await t.app.get(CustomerDirectory).isActiveCustomer(sandbox(), c.customerId)).toBe(true);
      });

      it('a token that fails, or proves another user: 401', async () => {
        const c = await newCustomer();
        const cases = [
          { userId: c.userId, idToken: await token({ sub: c.userId }, { key: kit.stranger }) },
          { userId: c.userId, idToken: await token({ sub: c.userId }, { exp: t.clock.nowSeconds() - 300 }) },
          { userId: c.userId, idToken: await token({ sub: 'another_user' }) },
          { customerId: c.customerId, idToken: await token({ sub: c.userId }) },
        ];
        for (const body of cases) expect((await forget(body, p.keys.pubTest)).status).toBe(401);
        expect(await t.app.get(CustomerDirectory).isActiveCustomer(sandbox(), c.customerId)).toBe(true);
      });

      it('a token for userId that does not own customerId: 401', async () => {
        const c = await newCustomer();
        const d = await newCustomer();
        const res = await forget({ userId: c.userId, customerId: d.customerId, idToken: await token({ sub: c.userId }) }, p.keys.pubTest);
        expect(res.status).toBe(401);
      });

      it('a verified idToken whose subject equals userId: 200', async () => {
        const c = await newCustomer();
        const res = await forget({ userId: c.userId, idToken: await token({ sub: c.userId }) }, p.keys.pubTest);
        expect(res.status).toBe(200);
        expect(res.body.serviceCustomerId).toBe(c.customerId);
        const audits = await forgetAudits(c.customerId);
        expect(audits).toHaveLength(1);
        expect(audits[0].reason).toContain('verified idToken');
      });

      // The hint matched a known customer, so the answer
      // names it, with scope "device" saying that only the device was forgotten.
      it('anonymous-only erasure needs no proof, but a device id never erases an identified customer: only the device goes', async () => {
        const c = await newCustomer();
        const secondDevice = aid('second-device');
        await identify({ userId: c.userId, anonymousId: secondDevice });
        const res = await forget({ anonymousId: c.anonymousId }, p.keys.pubTest);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({
          object: 'forgot',
          serviceCustomerId: c.customerId,
          crossdeckCustomerId: c.customerId,
          queuedAt: expect.any(Number),
          env: 'sandbox',
          scope: 'device',
        });
        const directory = t.app.get(CustomerDirectory);
        expect(await directory.isActiveCustomer(sandbox(), c.customerId)).toBe(true);
        expect(await directory.findCustomerId(sandbox(), { anonymousId: c.anonymousId })).toBeNull();
        expect(await directory.findCustomerId(sandbox(), { anonymousId: secondDevice })).toBe(c.customerId);
        expect(await directory.findCustomerId(sandbox(), { userId: c.userId })).toBe(c.customerId);
        const entries = await auditsOf(c.customerId);
        expect(entries.map(({ eventType, decision }) => ({ eventType, decision }))).toEqual([{ eventType: 'customer.device_forgotten', decision: 'applied' }]);
        // Repeating collapses: nothing left to forget, nothing audited.
        const again = await forget({ anonymousId: c.anonymousId }, p.keys.pubTest);
        expect(again.status).toBe(200);
        expect(again.body.serviceCustomerId).toBeNull();
        expect(await auditsOf(c.customerId)).toHaveLength(1);
      });
    });
  });

  it('the journal is usable by other contexts (smoke)', async () => {
    const journal = t.app.get(AuditJournal);
    expect(journal).toBeDefined();
  });
});
