// The core flow through a client generated from the OpenAPI document (`npm run check:client`
// generates .openapi/api.d.ts with openapi-typescript and type-checks this file against it):
// identify with traits, send events, grant an entitlement, read entitlements (public and
// server). A change to the document that breaks a generated client fails that check.
// Run against a service: API_URL=http://127.0.0.1:3000 PUBLISHABLE_KEY=cd_pub_… SECRET_KEY=cd_sk_… (compiled to JS first).
import createClient from 'openapi-fetch';
import type { components, paths } from '../../.openapi/api.js';

type Traits = NonNullable<components['schemas']['IdentifyDto']['traits']>;

export async function coreFlow(baseUrl: string, publishableKey: string, secretKey: string): Promise<string[]> {
  // Browsers and apps hold the publishable key; the secret key stays on your server.
  const app = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${publishableKey}` } });
  const server = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${secretKey}` } });

  const traits: Traits = { plan: 'free', seats: 3, beta: true, referrer: null };
  const identified = await app.POST('/v1/identify', { body: { userId: 'user_42', anonymousId: 'anon_7f3c', traits } });
  if (!identified.data) throw new Error(`identify: ${identified.error?.error.code}`);
  const customerId: string = identified.data.serviceCustomerId;

  const sent = await app.POST('/v1/events', {
    body: { events: [{ name: 'paywall.viewed', serviceCustomerId: customerId, properties: { placement: 'onboarding' } }] },
  });
  if (!sent.data) throw new Error(`events: ${sent.error?.error.code}`);
  const received: number = sent.data.received;

  const granted = await server.POST('/v1/server/customers/{customerId}/grant', {
    params: { path: { customerId } },
    body: { entitlementKey: 'pro_access', duration: 'P30D', reason: 'Goodwill credit after the outage of 3 March' },
  });
  if (!granted.data) throw new Error(`grant: ${granted.error?.error.code}`);

  const mine = await app.GET('/v1/entitlements', { params: { query: { customerId } } });
  const theirs = await server.GET('/v1/server/customers/{customerId}/entitlements', { params: { path: { customerId } } });
  if (!mine.data || !theirs.data) throw new Error('entitlement reads failed');
  return [String(received), JSON.stringify(mine.data), JSON.stringify(theirs.data)];
}

// The generated types are not `any`: a nested object is not a trait value, and a grant needs its reason.
// @ts-expect-error traits take strings, numbers, booleans or null
export const notATrait: Traits = { address: { city: 'Lyon' } };
// @ts-expect-error reason is required
export const grantWithoutReason: paths['/v1/server/customers/{customerId}/grant']['post']['requestBody']['content']['application/json'] = {
  entitlementKey: 'pro_access',
  duration: 'P30D',
};
