import { createProjectWithApp, type ProjectFixture, setRateLimits } from './fixtures.js';
import { operatorAuth, type TestApp } from './test-app.js';

/** The catalogue of the iOS rail specs: a subscription granting two keys and a lifetime unlock. */
export const IOS_TEST_PRODUCTS = [
  { rail: 'ios_store', productId: 'pro.monthly', entitlementKeys: ['pro_access', 'cloud_sync'] },
  { rail: 'ios_store', productId: 'lifetime.unlock', entitlementKeys: ['lifetime_access'] },
];

/**
 * An iOS app whose project trusts the test store chain's root (operator `PUT …/rails/ios_store`),
 * with the test catalogue and a roomy purchases bucket.
 */
export async function createIosRailProject(t: TestApp, bundleId: string, rootPem: string): Promise<ProjectFixture> {
  const fx = await createProjectWithApp(t, { platform: 'ios', bundleId });
  await setRateLimits(t, fx.projectId, { purchases: { sustained: 1000, burst: 1000 } });
  const rail = await t.http
    .put(`/admin/v1/projects/${fx.projectId}/rails/ios_store`)
    .set(operatorAuth())
    .send({ bundleId, trustedRootCertificates: [rootPem] });
  if (rail.status !== 200) throw new Error(`iOS rail settings failed: ${rail.status} ${JSON.stringify(rail.body)}`);
  const products = await t.http.put(`/admin/v1/projects/${fx.projectId}/products`).set(operatorAuth()).send({ products: IOS_TEST_PRODUCTS });
  if (products.status !== 200) throw new Error(`catalogue failed: ${products.status} ${JSON.stringify(products.body)}`);
  return fx;
}
