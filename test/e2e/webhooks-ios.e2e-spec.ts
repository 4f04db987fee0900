import { randomUUID } from 'node:crypto';
import { createProject, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import {
  type StoreChain,
  type TransactionFields,
  createStoreChain,
  notificationPayload,
  signStoreJws,
  tamperJws,
  transactionPayload,
} from '../support/store-signing.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { createIosRailProject } from '../support/ios-rail.js';

const BUNDLE = 'com.example.rails.ios';
const HOUR_MS = 3_600_000;

describe('webhooks: iOS store (POST /v1/webhooks/ios_store/{projectId})', () => {
  let t: TestApp;
  let fx: ProjectFixture;
  let chain: StoreChain;
  const logs: Record<string, unknown>[] = [];
  const nowMs = () => t.clock.nowMs();

  beforeAll(async () => {
    t = await createTestApp({ LOG_LEVEL: 'warn' }, { onLogLine: (line) => logs.push(line) });
    chain = createStoreChain();
    fx = await createIosRailProject(t, BUNDLE, chain.rootPem);
  });
  afterAll(() => t?.close());

  const transaction = (fields: Partial<TransactionFields> = {}) =>
    transactionPayload({ bundleId: BUNDLE, productId: 'pro.monthly', signedDate: nowMs(), expiresDate: nowMs() + HOUR_MS, ...fields });

  interface NotifyOptions {
    type: string;
    subtype?: string;
    tx?: TransactionFields | null;
    renewal?: Record<string, unknown>;
    environment?: 'Sandbox' | 'Production';
    signedDate?: number;
    uuid?: string;
    bundleId?: string;
    c?: StoreChain;
  }

  function signedNotification(o: NotifyOptions): { signedPayload: string; payload: Record<string, unknown> } {
    const c = o.c ?? chain;
    const environment = o.environment ?? 'Sandbox';
    const payload = notificationPayload({
      notificationType: o.type,
      subtype: o.subtype,
      notificationUUID: o.uuid,
      signedDate: o.signedDate ?? nowMs(),
      bundleId: o.bundleId ?? BUNDLE,
      environment,
      ...(o.tx ? { signedTransactionInfo: signStoreJws(c, { ...o.tx, environment }) } : {}),
      ...(o.renewal ? { signedRenewalInfo: signStoreJws(c, o.renewal) } : {}),
    });
    return { signedPayload: signStoreJws(c, payload), payload };
  }

  const post = (body: unknown, projectId = fx.projectId) => t.http.post(`/v1/webhooks/ios_store/${projectId}`).send(body as object);
  const notify = (o: NotifyOptions) => post({ signedPayload: signedNotification(o).signedPayload });
  const activeKeys = async (customerId: string, key = fx.keys.skTest): Promise<string[]> => {
    const res = await t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(keyHeaders(fx, key));
    expect(res.status).toBe(200);
    return res.body.data
      .filter((e: any) => e.isActive)
      .map((e: any) => e.key)
      .sort();
  };
  const audit = (eventId: string, key = fx.keys.skTest) => t.http.get(`/v1/server/audit/${eventId}`).set(keyHeaders(fx, key));
  const stored = async () =>
    (await t.dataSource.query(`SELECT count(*)::int AS n FROM rail_notifications WHERE project_id = $1`, [fx.projectId]))[0].n as number;

  describe('answers and errors in the documented order', () => {
    it('404 for an unknown project or a project without the rail', async () => {
      expectError(await post({ signedPayload: 'x' }, 'proj_nope'), 404, 'resource_missing');
      expectError(await post({ signedPayload: 'x' }, await createProject(t)), 404, 'resource_missing');
    });

    it('400 invalid_param_value without a signedPayload string', async () => {
      expectError(await post({}), 400, 'invalid_param_value');
      expectError(await post({ signedPayload: 42 }), 400, 'invalid_param_value');
      expectError(
        await t.http.post(`/v1/webhooks/ios_store/${fx.projectId}`).set('Content-Type', 'application/json').send('{nope'),
        400,
        'invalid_param_value',
      );
    });

    it('400 invalid_signature: malformed JWS, tampered payload, untrusted chain, missing marker OID; one log line each, nothing stored', async () => {
      const before = await stored();
      const good = signedNotification({ type: 'SUBSCRIBED', tx: transaction() });
      logs.length = 0;
      const cases = [
        await post({ signedPayload: 'not-a-jws' }),
        await post({ signedPayload: tamperJws(good.signedPayload, { ...good.payload, notificationType: 'REFUND' }) }),
        await notify({ type: 'SUBSCRIBED', tx: transaction(), c: createStoreChain() }),
        await notify({ type: 'SUBSCRIBED', tx: transaction(), c: createStoreChain({ leafOid: false }) }),
      ];
      for (const res of cases) expectError(res, 400, 'invalid_signature');
      expect(logs.filter((line) => line.msg === 'store notification refused: authentication failed')).toHaveLength(cases.length);
      expect(await stored()).toBe(before);
    });

    it("another app's authentic notification: 200 rejected, nothing changes", async () => {
      const res = await notify({ type: 'SUBSCRIBED', tx: transaction({ bundleId: 'com.other.app' }), bundleId: 'com.other.app' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expect.objectContaining({ decision: 'rejected', serviceCustomerId: null, env: 'sandbox' }));
    });

    it('authentic but not a notification: 400 invalid_param_value', async () => {
      expectError(
        await post({ signedPayload: signStoreJws(chain, { hello: 'world', data: { bundleId: BUNDLE, environment: 'Sandbox' } }) }),
        400,
        'invalid_param_value',
      );
    });

    it('authentic with an id over 512 characters: 400 invalid_param_value naming the field, nothing stored', async () => {
      const before = await stored();
      const uuid = await notify({ type: 'SUBSCRIBED', tx: transaction(), uuid: 'u'.repeat(600) });
      expectError(uuid, 400, 'invalid_param_value');
      expect(uuid.body.error.message).toMatch(/^signedPayload\.notificationUUID: /);
      const original = await notify({ type: 'SUBSCRIBED', tx: transaction({ originalTransactionId: '9'.repeat(600) }) });
      expectError(original, 400, 'invalid_param_value');
      expect(original.body.error.message).toMatch(/^signedTransactionInfo\.originalTransactionId: /);
      const expires = await notify({ type: 'SUBSCRIBED', tx: transaction({ expiresDate: 2 ** 63 }) });
      expectError(expires, 400, 'invalid_param_value');
      expect(expires.body.error.message).toMatch(/^signedTransactionInfo\.expiresDate: /);
      expect(await stored()).toBe(before);
    });

    it('TEST is no_op', async () => {
      const res = await notify({ type: 'TEST' });
      expect(res.body).toEqual(expect.objectContaining({ decision: 'no_op', serviceCustomerId: null }));
    });
  });

  describe('notification types', () => {
    it('SUBSCRIBED: applied until expiresDate with one audit entry; Production lands in production', async () => {
      const tx = transaction();
      const uuid = randomUUID();
      const res = await notify({ type: 'SUBSCRIBED', subtype: 'INITIAL_BUY', tx, uuid });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'rail_notification',
        rail: 'ios_store',
        notificationId: uuid,
        env: 'sandbox',
        decision: 'applied',
        duplicate: false,
        serviceCustomerId: expect.stringMatching(/^cdcust_/),
        crossdeckCustomerId: expect.stringMatching(/^cdcust_/),
        auditEventId: expect.stringMatching(/^rail_evt_/),
      });
      expect(await activeKeys(res.body.serviceCustomerId)).toEqual(['cloud_sync', 'pro_access']);
      expect((await audit(res.body.auditEventId)).body.data).toEqual(
        expect.objectContaining({ rail: 'ios_store', eventType: 'SUBSCRIBED', decision: 'applied', signatureVerified: true, reconciledWithProvider: false }),
      );
      const live = await notify({ type: 'SUBSCRIBED', tx: transaction(), environment: 'Production' });
      expect(live.body.env).toBe('production');
      expect(await activeKeys(live.body.serviceCustomerId, fx.keys.skLive)).toEqual(['cloud_sync', 'pro_access']);
    });
  });
});
