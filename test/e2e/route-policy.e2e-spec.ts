import { routeTable } from '#platform';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * Every route with its declared policy, rate-limit bucket, idempotency and body limit. The
 * snapshot changes only on purpose: a new route, or a changed policy, is a reviewed diff
 * (`npx jest test/e2e/route-policy.e2e-spec.ts -u`).
 */
describe('route policy snapshot', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('lists every route with its policy', () => {
    const lines = routeTable(t.app).map((route) => {
      const [policy] = route.policies;
      const detail =
        policy.kind === 'api_key'
          ? `api_key(${[...policy.kinds, ...(policy.workspace ? [`workspace:${policy.workspace}`] : [])].join('|')}${policy.scopes?.length ? `; scopes ${policy.scopes.join('|')}` : ''})`
          : policy.kind === 'store_webhook'
            ? `store_webhook(${policy.rail})`
            : policy.kind;
      const extras = [route.rateLimit && `rate:${route.rateLimit}`, route.idempotent && 'idempotent', route.bodyLimit && `body:${route.bodyLimit}`].filter(
        Boolean,
      );
      return `${route.method.padEnd(6)} ${route.paths.join(' | ')}  ${detail}${extras.length ? `  ${extras.join(' ')}` : ''}`;
    });
    expect(lines.join('\n')).toMatchSnapshot();
  });
});
