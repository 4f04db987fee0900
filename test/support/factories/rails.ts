import type { TenantScope } from '#platform';
import type { DataSource } from 'typeorm';
import { operatorAuth, type TestApp } from '../test-app.js';

/** Rail setup for tests that need a rail's settings or traces but none of its traffic. */

/** Turns the card-payment rail on for the project through the operator API (revenue then reads as measured). */
export async function enableCardRail(t: TestApp, projectId: string, body: { accountId?: string; gracePeriodDays?: number } = {}): Promise<void> {
  const res = await t.http.put(`/admin/v1/projects/${projectId}/rails/card_payments`).set(operatorAuth()).send(body);
  if (res.status !== 200) throw new Error(`enabling the card rail failed: ${res.status} ${JSON.stringify(res.body)}`);
}

/** The card customer id as an alias of the customer, as the card rail records it (written directly, without any of its events). */
export async function linkCardCustomer(db: DataSource, scope: TenantScope, cardCustomerId: string, customerId: string): Promise<void> {
  await db.query(`INSERT INTO customer_aliases (project_id, env, type, value, customer_id, created_at) VALUES ($1, $2, 'card_customer_id', $3, $4, now())`, [
    scope.projectId,
    scope.env,
    cardCustomerId,
    customerId,
  ]);
}
