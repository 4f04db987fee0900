import { createProjectWithApp, keyHeaders, setRateLimits, WEB_ORIGIN, type ProjectFixture } from '../support/fixtures.js';
import { type IdentityProviderKit, aid, identityProviderKit, uid } from '../support/id-tokens.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';

/**
 * The trust gate: per-project block lists and review rules (operator API), GET /v1/trust/status,
 * POST /v1/trust/gate and the block fields of resolve, replayed as the public Node client sends
 * them (`getOwnerStatus()`, `gate()`, `resolve()`), each block audited as its blockEventId.
 */

const NODE_SDK = '@cross-deck/node@1.2.0';
const SUPPORT = 'help@example.com';

/** What the public Node client sends on every call (server side, secret key). */
function nodeClient(key: string): Record<string, string> {
  return {
    Authorization: `Bearer ${key}`,
    'Crossdeck-Sdk-Version': NODE_SDK,
    'Crossdeck-Api-Version': '2025-01-01',
    'User-Agent': 'cross-deck/node/1.2.0 node/20.10.0 linux',
    Accept: 'application/json',
  };
}

describe('trust gate: block lists, /v1/trust/status, /v1/trust/gate, resolve block fields', () => {
  let t: TestApp;
  let p: ProjectFixture;
  let other: ProjectFixture;
  let kit: IdentityProviderKit;
  const sk = () => nodeClient(p.keys.skTest);
  const putTrust = (body: object, projectId = p.projectId) => t.http.put(`/admin/v1/projects/${projectId}/trust`).set(operatorAuth()).send(body);
  const status = (query: Record<string, string>, headers = sk()) => t.http.get('/v1/trust/status').query(query).set(headers);
  const gate = (body: Record<string, unknown>, headers = sk()) => t.http.post('/v1/trust/gate').set(headers).send(body);
  const resolve = (body: Record<string, unknown>, headers = sk()) => t.http.post('/v1/resolve').set(headers).send(body);
  const audit = (eventId: string, key = p.keys.skTest) => t.http.get(`/v1/server/audit/${eventId}`).set(nodeClient(key));

  const blockedUser = uid('blocked');
  const SETTINGS = {
    supportEmail: SUPPORT,
    blocks: [
      { kind: 'user', value: blockedUser, reason: 'chargeback fraud' },
      { kind: 'email', value: 'Bad.Actor@Example.com', reason: 'abuse reports' },
      { kind: 'domain', value: 'spam.example', reason: 'throwaway signups' },
      { kind: 'ip', value: '203.0.113.9', reason: 'credential stuffing' },
    ],
    review: { emailDomains: ['mailinator.com'] },
  };

  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
    other = await createProjectWithApp(t);
    await setRateLimits(t, p.projectId, { alias: { sustained: 1000, burst: 10000 } });
    kit = await identityProviderKit(t);
    await kit.configure(p.projectId);
    const res = await putTrust(SETTINGS);
    expect(res.status).toBe(200);
  });
  afterAll(async () => t.close());

  describe('operator: PUT /admin/v1/projects/{projectId}/trust', () => {
    it('returns the whole settings, normalised; GET reads them back', async () => {
      const res = await putTrust(SETTINGS);
      expect(res.body).toEqual({
        object: 'trust_settings',
        projectId: p.projectId,
        supportEmail: SUPPORT,
        blocks: [
          { kind: 'user', value: blockedUser, reason: 'chargeback fraud' },
          { kind: 'email', value: 'bad.actor@example.com', reason: 'abuse reports' },
          { kind: 'domain', value: 'spam.example', reason: 'throwaway signups' },
          { kind: 'ip', value: '203.0.113.9', reason: 'credential stuffing' },
        ],
        review: { emailDomains: ['mailinator.com'] },
      });
      const read = await t.http.get(`/admin/v1/projects/${p.projectId}/trust`).set(operatorAuth());
      expect(read.body.blocks).toHaveLength(4);
    });

    it('bad input is 400 naming the field; an unknown project 404; no operator token 401', async () => {
      const kind = await putTrust({ blocks: [{ kind: 'phone', value: 'x', reason: 'r' }] });
      expectError(kind, 400, 'invalid_param_value');
      expect(kind.body.error.message).toMatch(/blocks\[0\]\.kind/);
      expectError(await putTrust({}), 400, 'missing_required_param');
      expectError(await putTrust({ blocks: [], supportEmail: 'not-an-email' }), 400, 'invalid_param_value');
      // An array where an object belongs is refused, not taken for an empty rule (nor a 500).
      const nested = await putTrust({ blocks: [[]] });
      expectError(nested, 400, 'invalid_param_value');
      expect(nested.body.error.message).toMatch(/^blocks/);
      expectError(await putTrust({ blocks: [], review: [] }), 400, 'invalid_param_value');
      expectError(await putTrust({ blocks: [] }, 'proj_missing'), 404, 'resource_missing');
      expect((await t.http.put(`/admin/v1/projects/${p.projectId}/trust`).send({ blocks: [] })).status).toBe(401);
    });
  });

  describe("GET /v1/trust/status (the Node client's getOwnerStatus())", () => {
    it('a blocked identifier: blocked with reason, key and an audit entry readable by its id', async () => {
      const res = await status({ email: 'someone@mx.spam.example' });
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.body).toMatchObject({ object: 'trust_status', blocked: true, blockReason: 'blocklist:domain', blockedKey: 'domain:spam.example' });
      expect(res.body.blockEventId).toMatch(/^blk_/);
      const entry = await audit(res.body.blockEventId);
      expect(entry.status).toBe(200);
      expect(entry.body.data).toMatchObject({ eventId: res.body.blockEventId, rail: 'trust', eventType: 'trust.blocked', decision: 'blocked' });
      expect(JSON.stringify(entry.body.data)).not.toContain('someone@');
      // The other environment does not see this entry.
      expectError(await audit(res.body.blockEventId, p.keys.skLive), 400, 'invalid_param_value');

      expect((await status({ userId: blockedUser })).body).toMatchObject({ blocked: true, blockedKey: `user:${blockedUser}` });
      expect((await status({ ip: '203.0.113.9' })).body).toMatchObject({ blocked: true, blockReason: 'blocklist:ip' });
      expect((await status({ email: 'BAD.actor@example.com' })).body).toMatchObject({ blocked: true, blockedKey: 'email:bad.actor@example.com' });
    });

    it('nothing matches: blocked false, nulls; another project sees none of these lists', async () => {
      expect((await status({ userId: 'fine_user', domain: 'example.org' })).body).toEqual({
        object: 'trust_status',
        blocked: false,
        blockReason: null,
        blockedKey: null,
        blockEventId: null,
      });
      expect((await status({ userId: blockedUser }, nodeClient(other.keys.skTest))).body.blocked).toBe(false);
    });

    it('no identifier: 400 missing_required_param; a publishable key: 401 invalid_api_key', async () => {
      expectError(await status({}), 400, 'missing_required_param');
      expectError(await status({ userId: blockedUser }, keyHeaders(p, p.keys.pubTest)), 401, 'invalid_api_key');
    });
  });

  describe("POST /v1/trust/gate (the Node client's gate(), the web client with a publishable key)", () => {
    it('block: action block, allow false, band high, reference, support email and an audited blockEventId', async () => {
      const res = await gate({ email: 'new@spam.example', ip: '198.51.100.1', fingerprint: 'fp_1' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'trust_gate',
        action: 'block',
        allow: false,
        band: 'high',
        blockReason: 'blocklist:domain',
        blockedKey: 'domain:spam.example',
        reference: expect.stringMatching(/^[a-z0-9]{4}-[a-z0-9]{4}$/),
        supportEmail: SUPPORT,
        blockEventId: expect.stringMatching(/^blk_/),
      });
      expect((await audit(res.body.blockEventId)).body.data.eventType).toBe('trust.blocked');
      expect((await gate({ ip: '203.0.113.9' })).body).toMatchObject({ action: 'block', blockedKey: 'ip:203.0.113.9' });
    });

    it('review and allow; either key kind', async () => {
      const review = await gate({ email: 'x@mailinator.com' });
      expect(review.body).toMatchObject({ action: 'review', allow: true, band: 'medium', blockReason: 'review:email_domain', blockEventId: null });
      expect(review.body.reference).toMatch(/^[a-z0-9]{4}-[a-z0-9]{4}$/);
      const allow = await gate({ email: 'ada@example.org' }, { ...keyHeaders(p, p.keys.pubTest), Origin: WEB_ORIGIN });
      expect(allow.status).toBe(200);
      expect(allow.body).toEqual({
        object: 'trust_gate',
        action: 'allow',
        allow: true,
        band: 'low',
        blockReason: null,
        blockedKey: null,
        reference: null,
        supportEmail: SUPPORT,
        blockEventId: null,
      });
    });

    it('no email, ip or domain: 400 missing_required_param', async () => {
      expectError(await gate({ fingerprint: 'fp' }), 400, 'missing_required_param');
    });
  });

  describe("resolve's block fields (the Node client's resolve() and isBlocked())", () => {
    it('a blocked user by id (server-asserted userId, as the Node client sends it): blocked, never tier 3', async () => {
      const anonymousId = aid();
      await t.http.post('/v1/identify').set(keyHeaders(p, p.keys.pubTest)).send({ userId: blockedUser, anonymousId });
      const res = await resolve({ userId: blockedUser, anonymousId, ip: '198.51.100.7' });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ blocked: true, blockReason: 'blocklist:user', blockedKey: `user:${blockedUser}`, supportEmail: SUPPORT });
      expect(res.body.crossdeckCustomerId).toMatch(/^cdcust_/);
      expect(res.body.blockEventId).toMatch(/^blk_/);
      expect(res.body.reference).toMatch(/^[a-z0-9]{4}-[a-z0-9]{4}$/);
      const entry = await audit(res.body.blockEventId);
      expect(entry.body.data).toMatchObject({ customerId: res.body.crossdeckCustomerId, eventType: 'trust.blocked' });

      // With a valid idToken the user would be tier 3: blocked, it is not, and no device binding is written.
      const device = aid();
      const idToken = await kit.token({ sub: blockedUser, email: 'person@example.org' });
      const verified = await resolve({ userId: blockedUser, idToken, anonymousId: device }, keyHeaders(p, p.keys.pubTest));
      expect(verified.body).toMatchObject({ blocked: true, entitlements: null });
      expect(verified.body.status).not.toBe('authenticated');
      expect(verified.body.trustTier).toBeLessThan(3);
      expect(await t.dataSource.query(`SELECT 1 FROM device_bindings WHERE project_id = $1 AND anonymous_id = $2`, [p.projectId, device])).toEqual([]);
    });

    it("a blocked email (the token's claim) is never authenticated either; an ip rule matches the forwarded ip", async () => {
      const userId = uid('mail');
      const idToken = await kit.token({ sub: userId, email: 'bad.actor@example.com' });
      const res = await resolve({ userId, idToken, anonymousId: aid() }, keyHeaders(p, p.keys.pubTest));
      expect(res.body).toMatchObject({ blocked: true, blockReason: 'blocklist:email', blockedKey: 'email:bad.actor@example.com' });
      expect(res.body.trustTier).toBeLessThan(3);
      const byIp = await resolve({ anonymousId: aid(), ip: '203.0.113.9' });
      expect(byIp.body).toMatchObject({ blocked: true, blockReason: 'blocklist:ip', status: 'anonymous' });
    });

    it('an unblocked user: blocked false with null block fields, tier 3 as before', async () => {
      const userId = uid('fine');
      const idToken = await kit.token({ sub: userId, email: 'fine@example.org' });
      const res = await resolve({ userId, idToken, anonymousId: aid() }, keyHeaders(p, p.keys.pubTest));
      expect(res.body).toMatchObject({
        status: 'authenticated',
        trustTier: 3,
        blocked: false,
        blockReason: null,
        blockedKey: null,
        reference: null,
        supportEmail: SUPPORT,
        blockEventId: null,
      });
      expect(res.body.crossdeckCustomerId).toMatch(/^cdcust_/);
    });
  });
});
