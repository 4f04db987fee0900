import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { RailSecrets } from '#rails';
import { AndroidPublisherStandIn } from '../android-publisher-standin.js';
import { AppStoreServerStandIn } from '../app-store-server-standin.js';
import { CardProcessorStandIn } from '../card-processor-standin.js';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../fixtures.js';
import { RailSecretsFile } from '../rail-secrets-file.js';
import { type StoreChain, type TransactionFields, createStoreChain, notificationPayload, signStoreJws, transactionPayload } from '../store-signing.js';
import { createTestApp, operatorAuth, type TestApp, type TestAppOptions } from '../test-app.js';

export const BUNDLE = 'com.example.rails.read';
export const PACKAGE = 'com.example.rails.read';
export const CARD_API_KEY = `rk_test_${randomBytes(24).toString('hex')}`;
export const CARD_WEBHOOK_SECRET = `whsec_${randomBytes(20).toString('hex')}`;
export const PUSH_TOKEN = `push_${randomBytes(24).toString('hex')}`;
/** The read timeout of the suites (10 s stays the default; a unit test checks it). */
export const READ_TIMEOUT_MS = 1500;
const DAY = 86_400;

let seq = 0;
export const uid = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(++seq).toString(36)}${Math.random().toString(36).slice(2, 8)}`;

export const PRODUCTS = [
  { rail: 'card_payments', productId: 'prod_pro', entitlementKeys: ['pro'] },
  { rail: 'ios_store', productId: 'pro.monthly', entitlementKeys: ['pro'] },
  { rail: 'android_store', productId: 'pro_monthly', entitlementKeys: ['pro'] },
];

/**
 * One app per spec file with the three rails enabled and the three stores' stand-ins (card
 * processor, App Store Server API, Android Publisher API) with the project's read
 * credentials; functions that make a customer through each rail's notification (registers its
 * own beforeAll/afterAll). `ownDatabase`: the app runs on a database of its own (createTestApp's
 * option).
 */
export function railReadHarness(env: Record<string, string> = {}, options: Pick<TestAppOptions, 'ownDatabase'> = {}) {
  let t: TestApp;
  let fx: ProjectFixture;
  let file: RailSecretsFile;
  let chain: StoreChain;
  let apple: AppStoreServerStandIn;
  const card = new CardProcessorStandIn(CARD_API_KEY);
  const google = new AndroidPublisherStandIn();
  const logs: Record<string, unknown>[] = [];
  const projects: string[] = [];
  const now = () => Math.floor(t.clock.nowMs() / 1000);

  function secretsOf(projectId: string) {
    return {
      card_payments: { webhookSecrets: [CARD_WEBHOOK_SECRET], apiKey: CARD_API_KEY },
      ios_store: apple.secrets(),
      android_store: { pushToken: PUSH_TOKEN, serviceAccount: google.serviceAccount() },
      projectId,
    };
  }

  /** A project with the three rails, the catalogue and read credentials. */
  async function railProject(): Promise<ProjectFixture> {
    const project = await createProjectWithApp(t);
    const put = (rail: string, body: object) => t.http.put(`/admin/v1/projects/${project.projectId}/rails/${rail}`).set(operatorAuth()).send(body);
    expect((await put('ios_store', { bundleId: BUNDLE, trustedRootCertificates: [chain.rootPem] })).status).toBe(200);
    expect((await put('card_payments', { accountId: 'acct_read' })).status).toBe(200);
    expect((await put('android_store', { packageName: PACKAGE })).status).toBe(200);
    expect((await t.http.put(`/admin/v1/projects/${project.projectId}/products`).set(operatorAuth()).send({ products: PRODUCTS })).status).toBe(200);
    projects.push(project.projectId);
    writeSecrets();
    return project;
  }

  function writeSecrets(override: Record<string, object> = {}) {
    const all: Record<string, object> = {};
    for (const projectId of projects) {
      const { projectId: _drop, ...secrets } = secretsOf(projectId);
      void _drop;
      all[projectId] = override[projectId] ?? secrets;
    }
    file.write({ projects: all });
    t.app.get(RailSecrets).reloadIfChanged();
  }

  beforeAll(async () => {
    chain = createStoreChain();
    apple = new AppStoreServerStandIn(chain, BUNDLE);
    await Promise.all([card.start(), apple.start(), google.start()]);
    file = new RailSecretsFile();
    t = await createTestApp(
      {
        RAIL_SECRETS_FILE: file.path,
        CARD_PAYMENTS_API_BASE_URL: card.baseUrl,
        APP_STORE_SERVER_API_BASE_URL: apple.rootOf('production'),
        APP_STORE_SERVER_API_SANDBOX_BASE_URL: apple.rootOf('sandbox'),
        ANDROID_PUBLISHER_BASE_URL: google.baseUrl,
        RAIL_READ_TIMEOUT_MS: String(READ_TIMEOUT_MS),
        LOG_LEVEL: 'debug',
        ...env,
      },
      { onLogLine: (line) => logs.push(line), ownDatabase: options.ownDatabase },
    );
    fx = await railProject();
  });
  afterAll(async () => {
    await t?.close();
    await Promise.all([card.stop(), apple?.stop(), google.stop()]);
    file?.remove();
  });

  /** A card customer with an active subscription until `periodEnd`, made through a signed `customer.subscription.created` (sandbox). */
  async function cardCustomer(o: { periodEnd?: number; projectId?: string } = {}) {
    const customer = uid('cus');
    const sub = card.subscription(uid('sub'), customer, { productId: 'prod_pro', periodEnd: o.periodEnd ?? now() + 30 * DAY, livemode: false });
    const body = JSON.stringify({
      id: uid('evt'),
      object: 'event',
      created: now(),
      livemode: false,
      type: 'customer.subscription.created',
      data: { object: sub },
    });
    const header = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: CARD_WEBHOOK_SECRET, timestamp: now() });
    const res = await t.http
      .post(`/v1/webhooks/card_payments/${o.projectId ?? fx.projectId}`)
      .set('Content-Type', 'application/json')
      .set('Stripe-Signature', header)
      .send(body);
    expect(res.body.decision).toBe('applied');
    return { customerId: res.body.serviceCustomerId as string, cardCustomer: customer, sub };
  }

  /** An iOS customer subscribed until `expiresMs`, made through a signed SUBSCRIBED notification (sandbox). */
  async function iosCustomer(o: { expiresMs?: number; fields?: Partial<TransactionFields> } = {}) {
    const tx = transactionPayload({
      bundleId: BUNDLE,
      productId: 'pro.monthly',
      signedDate: t.clock.nowMs(),
      expiresDate: o.expiresMs ?? t.clock.nowMs() + 3_600_000,
      ...o.fields,
    });
    const payload = notificationPayload({
      notificationType: 'SUBSCRIBED',
      signedDate: t.clock.nowMs(),
      bundleId: BUNDLE,
      environment: 'Sandbox',
      signedTransactionInfo: signStoreJws(chain, { ...tx, environment: 'Sandbox' }),
    });
    const res = await t.http.post(`/v1/webhooks/ios_store/${fx.projectId}`).send({ signedPayload: signStoreJws(chain, payload) });
    expect(res.body.decision).toBe('applied');
    return { customerId: res.body.serviceCustomerId as string, tx };
  }

  /** What the App Store reports for the transaction (sandbox unless said). */
  function appleReports(tx: TransactionFields, status: number, fields: Partial<TransactionFields> = {}, env: 'production' | 'sandbox' = 'sandbox') {
    apple.subscriptions[env].set(tx.originalTransactionId, { status, transaction: { ...tx, signedDate: t.clock.nowMs(), ...fields } });
  }

  /** The Publisher API's view of a (test) subscription purchase. */
  function googleReports(token: string, o: { state?: string; expiry: number }) {
    google.subscriptions.set(`${PACKAGE}|${token}`, {
      startTime: new Date((now() - 60) * 1000).toISOString(),
      subscriptionState: o.state ?? 'SUBSCRIPTION_STATE_ACTIVE',
      acknowledgementState: 'ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED',
      testPurchase: {},
      lineItems: [{ productId: 'pro_monthly', expiryTime: new Date(o.expiry * 1000).toISOString(), autoRenewingPlan: { autoRenewEnabled: true } }],
    });
  }

  /** An Android customer (test purchase: sandbox) made through a SUBSCRIPTION_PURCHASED push. */
  async function androidCustomer(o: { expiry?: number } = {}) {
    const token = uid('tok');
    googleReports(token, { expiry: o.expiry ?? now() + 30 * DAY });
    const notification = {
      version: '1.0',
      packageName: PACKAGE,
      eventTimeMillis: String(t.clock.nowMs()),
      subscriptionNotification: { version: '1.0', notificationType: 4, purchaseToken: token, subscriptionId: 'pro_monthly' },
    };
    const body = {
      message: { data: Buffer.from(JSON.stringify(notification)).toString('base64'), messageId: uid('m') },
      subscription: 'projects/x/subscriptions/rtdn',
    };
    const res = await t.http.post(`/v1/webhooks/android_store/${fx.projectId}?token=${PUSH_TOKEN}`).send(body);
    expect(res.body.decision).toBe('applied');
    return { customerId: res.body.serviceCustomerId as string, token };
  }

  const entitlements = (customerId: string, key = fx.keys.skTest) => t.http.get(`/v1/server/customers/${customerId}/entitlements`).set(keyHeaders(fx, key));
  const pro = async (customerId: string) => ((await entitlements(customerId)).body.data as any[]).find((e) => e.key === 'pro');
  const refresh = (customerId: string, key = fx.keys.skTest, project = fx) =>
    t.http.post(`/v1/server/customers/${customerId}/refresh`).set(keyHeaders(project, key)).send();
  const audit = (eventId: string) => t.http.get(`/v1/server/audit/${eventId}`).set(keyHeaders(fx, fx.keys.skTest));
  const auditCount = async (projectId = fx.projectId) =>
    (await t.dataSource.query(`SELECT count(*)::int AS n FROM audit_entries WHERE project_id = $1`, [projectId]))[0].n as number;

  return {
    get t() {
      return t;
    },
    get fx() {
      return fx;
    },
    get apple() {
      return apple;
    },
    /** The store's signing chain (the project trusts its root). */
    get chain() {
      return chain;
    },
    card,
    google,
    logs,
    now,
    railProject,
    writeSecrets,
    cardCustomer,
    iosCustomer,
    appleReports,
    googleReports,
    androidCustomer,
    entitlements,
    pro,
    refresh,
    audit,
    auditCount,
  };
}
