import type { TestApp } from '../test-app.js';
import { operatorAuth } from '../test-app.js';

/** Rail setup through the operator API, for e2e tests that need a rail on but none of its traffic. */

/** Turns the card-payment rail on for the project (revenue is then measured: coverage reads "measured"). */
export async function enableCardRail(t: TestApp, projectId: string, body: { accountId?: string; gracePeriodDays?: number } = {}): Promise<void> {
  const res = await t.http.put(`/admin/v1/projects/${projectId}/rails/card_payments`).set(operatorAuth()).send(body);
  if (res.status !== 200) throw new Error(`enabling the card rail failed: ${res.status} ${JSON.stringify(res.body)}`);
}
