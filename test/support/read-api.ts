import { expectError } from './expect-error.js';
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
