import { expectError } from './expect-error.js';
import { keyHeaders, type ProjectFixture } from './fixtures.js';
import { operatorAuth, type TestApp } from './test-app.js';

type ErrorResponse = { status: number; body: any; headers: Record<string, string> };

/** `expectError` whose message names what it should (a field, a scope). */
export function expectNamedError(res: ErrorResponse, status: number, code: string, named: RegExp): void {
  expectError(res, status, code);
  expect(res.body.error.message).toMatch(named);
}

/** A new secret key (the rotation of `keyId`, same project and environment) holding exactly `scopes`. */
export async function secretKeyWithScopes(t: TestApp, keyId: string, scopes: string[]): Promise<string> {
  const rotated = await t.http.post(`/admin/v1/keys/${keyId}/rotate`).set(operatorAuth()).send({ scopes });
  if (rotated.status !== 201) throw new Error(`rotate failed: ${rotated.status} ${JSON.stringify(rotated.body)}`);
  return rotated.body.key.key as string;
}

export function bearer(key: string): Record<string, string> {
  return { Authorization: `Bearer ${key}` };
}

/** Identifies each user id (with the device `anon_<userId>`) through the project's sandbox secret key; their customer ids by user id. */
export async function identifyUsers(t: TestApp, p: ProjectFixture, userIds: readonly string[]): Promise<Record<string, string>> {
  const customers: Record<string, string> = {};
  for (const userId of userIds) {
    const res = await t.http
      .post('/v1/identify')
      .set(keyHeaders(p, p.keys.skTest))
      .send({ userId, anonymousId: `anon_${userId}` });
    if (res.status !== 200) throw new Error(`identify ${userId}: ${res.status} ${JSON.stringify(res.body)}`);
    customers[userId] = res.body.serviceCustomerId as string;
  }
  return customers;
}
