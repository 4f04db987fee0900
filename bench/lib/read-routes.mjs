// The web app the read benches run against (bench/run.mjs's read phase, bench/promotion.mjs,
// bench/ab-reads.mjs): minted through the operator API, users seeded through the public API,
// the four hot read routes as request builders over those users, and a closed loop over one.
import http from 'node:http';
import { call } from './common.mjs';

/** The web app's allowed origin; every publishable-key request sends it. */
export const ORIGIN = 'http://bench.localhost:3000';

/**
 * Mints a project with a web app and raises its buckets (the benches measure work, not
 * throttling): the events bucket always, the read routes' too when `withSecret` (the secret
 * key is returned then).
 */
export async function mintWebApp(base, operatorToken, name, { withSecret = false } = {}) {
  const project = await call(base, 'POST', '/admin/v1/projects', operatorToken, { name });
  const app = await call(base, 'POST', `/admin/v1/projects/${project.id}/apps`, operatorToken, {
    name: 'bench web',
    platform: 'web',
    allowedOrigins: [ORIGIN],
  });
  const publishable = app.keys.find((k) => k.kind === 'publishable' && k.env === 'sandbox').key;
  const secret = withSecret ? app.keys.find((k) => k.kind === 'secret' && k.env === 'sandbox')?.key : undefined;
  const huge = { sustained: 1e6, burst: 1e7 };
  await call(
    base,
    'PUT',
    `/admin/v1/projects/${project.id}/rate-limits`,
    operatorToken,
    withSecret ? { events: huge, entitlements: huge, alias: huge } : { events: huge },
  );
  return { project, publishable, secret };
}

async function inParallel(count, width, work) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/** `count` identified users (known userId + anonymousId pairs), each with active entitlements. */
export async function seedReaders(api, count) {
  const web = (token) => ({ Authorization: `Bearer ${token}`, Origin: ORIGIN, 'Content-Type': 'application/json' });
  const users = new Array(count);
  await inParallel(count, 8, async (i) => {
    const userId = `bench_user_${i}`;
    const anonymousId = `bench_anon_${i}`;
    const res = await fetch(`${api.base}/v1/identify`, { method: 'POST', headers: web(api.publishable), body: JSON.stringify({ userId, anonymousId }) });
    const json = await res.json();
    if (res.status !== 200) throw new Error(`identify: ${res.status} ${JSON.stringify(json)}`);
    const customerId = json.serviceCustomerId;
    for (const [entitlementKey, duration] of i % 2
      ? [['pro', 'P1Y']]
      : [
          ['pro', 'P1Y'],
          ['no_ads', 'lifetime'],
        ]) {
      await call(api.base, 'POST', `/v1/server/customers/${customerId}/grant`, api.secret, {
        entitlementKey,
        duration,
        reason: 'benchmark seed grant for read paths',
      });
    }
    users[i] = { userId, anonymousId, customerId };
  });
  return users;
}

/** The four read routes: request builders over the seeded users (publishable key unless noted). */
export function readRoutes(api, users) {
  let n = 0;
  const pick = () => users[n++ % users.length];
  const pub = { authorization: `Bearer ${api.publishable}`, origin: ORIGIN };
  const sec = { authorization: `Bearer ${api.secret}` };
  return [
    {
      name: 'GET /v1/entitlements (public)',
      headers: pub,
      prefix: '/v1/entitlements',
      next: () => ({ method: 'GET', path: `/v1/entitlements?userId=${pick().userId}` }),
    },
    {
      name: 'GET /v1/server/.../entitlements',
      headers: sec,
      prefix: '/v1/server/customers/',
      next: () => ({ method: 'GET', path: `/v1/server/customers/${pick().customerId}/entitlements` }),
    },
    {
      name: 'POST /v1/identify (known pair)',
      headers: pub,
      prefix: '/v1/identify',
      next: () => {
        const u = pick();
        return { method: 'POST', path: '/v1/identify', body: JSON.stringify({ userId: u.userId, anonymousId: u.anonymousId }) };
      },
    },
    {
      name: 'POST /v1/resolve',
      headers: pub,
      prefix: '/v1/resolve',
      next: () => ({ method: 'POST', path: '/v1/resolve', body: JSON.stringify({ anonymousId: pick().anonymousId }) }),
    },
  ];
}

/** The routes whose indexes a comma-separated list names (e.g. an environment variable's "0,3"); all when it is unset or empty. */
export function selectRoutes(routes, indexes) {
  if (!indexes) return routes;
  const wanted = indexes.split(',');
  return routes.filter((_, index) => wanted.includes(String(index)));
}

/**
 * `connections` requests of `route` at a time on 127.0.0.1:`port`, each sent when the last on
 * its connection answered, for `ms`; answers how many completed and their statuses.
 */
export async function closedLoop(port, route, { connections, ms }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const send = () =>
    new Promise((resolve, reject) => {
      const { method, path, body } = route.next();
      const headers = { ...route.headers, ...(body ? { 'content-type': 'application/json' } : {}) };
      const req = http.request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('error', reject);
      req.end(body);
    });
  let done = 0;
  const statuses = {};
  const end = Date.now() + ms;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (Date.now() < end) {
        const status = await send();
        statuses[status] = (statuses[status] ?? 0) + 1;
        done++;
      }
    }),
  );
  agent.destroy();
  return { done, statuses };
}
