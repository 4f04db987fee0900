import type { TenantScope } from '#platform';
import { createProjectWithApp, keyHeaders, type ProjectFixture, setRateLimits } from '../fixtures.js';
import { type IdentityProviderKit, type TokenOptions, identityProviderKit } from '../id-tokens.js';
import { createTestApp, operatorAuth, type TestApp } from '../test-app.js';
import { testScope } from '../scopes.js';

export const DAY = 86_400;
export const UUID = '6f1c1b8e-2a4b-4c1e-9a8e-3b2f1d0c9e7a';

/** One app with two projects (generous alias and forget limits) and an identity provider kit per spec file (registers its own beforeAll/afterAll). */
export function identityHarness() {
  let t: TestApp;
  let p: ProjectFixture;
  let other: ProjectFixture;

  const sandbox = (fixture = p): TenantScope => testScope(fixture.projectId, 'sandbox');

  function identify(body: Record<string, unknown>, key = p.keys.pubTest, fixture = p, path = '/v1/identify') {
    return t.http.post(path).set(keyHeaders(fixture, key)).send(body);
  }
  function forget(body: Record<string, unknown>, key = p.keys.skTest, fixture = p) {
    return t.http.post('/v1/identity/forget').set(keyHeaders(fixture, key)).send(body);
  }
  let kit: IdentityProviderKit;
  const token = (claims: Record<string, unknown>, options?: TokenOptions) => kit.token(claims, options);
  const configureProvider = (fixture: ProjectFixture) => kit.configure(fixture.projectId);
  async function customerRow(id: string) {
    const rows = await t.dataSource.query(`SELECT id, email, first_name, traits, forgotten_at FROM customers WHERE id = $1`, [id]);
    return rows[0];
  }
  async function aliasRows(customerId: string) {
    return t.dataSource.query(`SELECT type, value, assurance FROM customer_aliases WHERE customer_id = $1 ORDER BY type, value`, [customerId]);
  }
  const mergeReviews = (fixture = p, env = 'sandbox') => t.http.get(`/admin/v1/projects/${fixture.projectId}/merge-reviews?env=${env}`).set(operatorAuth());
  const erasures = (fixture = p, env = 'sandbox') => t.http.get(`/admin/v1/projects/${fixture.projectId}/erasures?env=${env}`).set(operatorAuth());

  beforeAll(async () => {
    // The JWKS URI test serves keys from 127.0.0.1 over http: a development setting.
    t = await createTestApp({ JWKS_ALLOW_PRIVATE: 'true' });
    p = await createProjectWithApp(t);
    other = await createProjectWithApp(t);
    const generous = { sustained: 1000, burst: 10000 };
    await setRateLimits(t, p.projectId, { alias: generous, forget: generous });
    await setRateLimits(t, other.projectId, { alias: generous, forget: generous });
    kit = await identityProviderKit(t);
    await configureProvider(p);
  });
  afterAll(async () => t.close());
  return {
    get t() {
      return t;
    },
    get p() {
      return p;
    },
    get other() {
      return other;
    },
    get kit() {
      return kit;
    },
    sandbox,
    identify,
    forget,
    token,
    configureProvider,
    customerRow,
    aliasRows,
    mergeReviews,
    erasures,
  };
}
