import type { TenantScope } from '#platform';
import { FAILING_DISABLE_AFTER_MS, MAX_ATTEMPTS, PREVIOUS_SECRET_TTL_MS, RETRY_DELAYS_MS, WebhookDispatcher } from '#webhooks';
import { ManualEntitlementService } from '../../libs/entitlements/src/grants/manual-entitlements.service.js';
import { WebhookEndpointsService } from '../../libs/webhooks/src/endpoints/webhook-endpoints.service.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';
import { testScope } from '../support/scopes.js';
import { type WebhookReceiver, startWebhookReceiver, verifyServiceSignature } from '../support/webhook-receiver.js';
import { WEBHOOK_MEDIUM_ENV, disableEndpoint, newEndpoint } from '../support/factories/webhooks.js';

const ACTOR = { actor: 'operator', requestId: null };

/**
 * The rules of outbound delivery, over the outbox and the dispatcher with a local receiver:
 * which endpoints receive which event, the retry schedule on the service clock, the signing
 * secrets after a rotation, and the disabling of an endpoint whose deliveries all failed for five days. The operator API's
 * sequences around them (a manual retry, the views) stay in the e2e spec.
 */
describe('medium: webhook dispatch rules', () => {
  let m: MediumContext;
  let receiver: WebhookReceiver;
  let counter = 0;

  beforeAll(async () => {
    m = await createMediumContext({ env: WEBHOOK_MEDIUM_ENV });
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await m?.close();
  });

  const path = () => `/dispatch/${++counter}`;
  const drain = () => m.get(WebhookDispatcher).drain();
  const endpoints = () => m.get(WebhookEndpointsService);
  const project = async (): Promise<string> => m.newProject();
  const grant = async (scope: TenantScope, customerId: string, entitlementKey = 'pro') =>
    m.get(ManualEntitlementService).grant(scope, customerId, { entitlementKey, duration: 'P30D', reason: 'dispatch rules' }, ACTOR);
  const endpointAt = (scope: TenantScope, hookPath: string, eventTypes?: string[]) => newEndpoint(m, scope, { url: receiver.url(hookPath), eventTypes });
  const latestDelivery = async (endpointId: string) => (await endpoints().deliveries(endpointId, {})).data[0]!;

  it('each enabled endpoint of the scope receives the event types it subscribed to; a disabled one and the other environment receive nothing', async () => {
    const projectId = await project();
    const sandbox = testScope(projectId, 'sandbox');
    const production = testScope(projectId, 'production');
    const [every, granted, updated, disabled, live] = [path(), path(), path(), path(), path()];
    await endpointAt(sandbox, every);
    await endpointAt(sandbox, granted, ['entitlement.granted_manually']);
    await endpointAt(sandbox, updated, ['customer.entitlements.updated']);
    await disableEndpoint(m, await endpointAt(sandbox, disabled));
    await endpointAt(production, live);
    const customerId = await m.newCustomer(sandbox);
    const liveCustomer = await m.newCustomer(production);

    await grant(sandbox, customerId);
    await grant(production, liveCustomer);
    await drain();

    const types = (hookPath: string) =>
      receiver
        .of(hookPath)
        .map((r) => r.json.type as string)
        .sort();
    expect(types(every)).toEqual(['customer.entitlements.updated', 'entitlement.granted_manually']);
    expect(types(granted)).toEqual(['entitlement.granted_manually']);
    expect(types(updated)).toEqual(['customer.entitlements.updated']);
    expect(types(disabled)).toEqual([]);
    // Environments never cross.
    expect(new Set(receiver.of(every).map((r) => r.json.env))).toEqual(new Set(['sandbox']));
    expect(new Set(receiver.of(live).map((r) => r.json.env))).toEqual(new Set(['production']));
    expect(receiver.of(live).every((r) => r.json.data.serviceCustomerId === liveCustomer)).toBe(true);
    expect(receiver.of(every).every((r) => r.json.data.serviceCustomerId === customerId)).toBe(true);
  });

  it('a failing delivery is tried again after each delay of the schedule (service clock), never before, and is dead after the last attempt', async () => {
    const scope = testScope(await project(), 'sandbox');
    const hook = path();
    receiver.on(hook, 500);
    const endpointId = await endpointAt(scope, hook, ['entitlement.granted_manually']);
    const customerId = await m.newCustomer(scope);
    // The service clock runs with the wall between the test's moves: each attempt is bracketed by
    // the clock's readings around the drain that made it, and the moves are relative to the due time.
    let before = m.clock.nowMs();
    await grant(scope, customerId);
    await drain();
    let after = m.clock.nowMs();
    expect(receiver.of(hook)).toHaveLength(1);

    for (const [i, delayMs] of RETRY_DELAYS_MS.entries()) {
      const failed = await latestDelivery(endpointId);
      expect(failed).toEqual(expect.objectContaining({ status: 'failed', attempts: i + 1, lastStatusCode: 500, lastError: 'HTTP 500' }));
      // Due `delayMs` after the attempt (the view is in seconds).
      const dueMs = failed.nextAttemptAt! * 1000;
      expect(dueMs).toBeGreaterThan(before + delayMs - 1_000);
      expect(dueMs).toBeLessThanOrEqual(after + delayMs + 1_000);
      // Before it is due (by half the delay, at most a minute): not tried.
      m.clock.advance(Math.max(0, dueMs - Math.min(delayMs / 2, 60_000) - m.clock.nowMs()) / 1000);
      await drain();
      expect(receiver.of(hook)).toHaveLength(i + 1);
      // Once due: tried.
      m.clock.advance(Math.max(0, dueMs + 2_000 - m.clock.nowMs()) / 1000);
      before = m.clock.nowMs();
      await drain();
      after = m.clock.nowMs();
      expect(receiver.of(hook)).toHaveLength(i + 2);
    }
    expect(await latestDelivery(endpointId)).toEqual(expect.objectContaining({ status: 'dead', attempts: MAX_ATTEMPTS, nextAttemptAt: null }));
    m.clock.advance(7 * 86_400);
    await drain();
    expect(receiver.of(hook)).toHaveLength(MAX_ATTEMPTS);
    // Every attempt carries the same event id.
    expect(new Set(receiver.of(hook).map((r) => r.json.id)).size).toBe(1);
  });

  it('an endpoint whose deliveries all failed for five days is disabled_failing; a success in between starts the streak anew', async () => {
    const scope = testScope(await project(), 'sandbox');
    const [failing, recovered] = [path(), path()];
    receiver.on(failing, 500);
    receiver.on(recovered, 500);
    const failingId = await endpointAt(scope, failing, ['entitlement.granted_manually']);
    const recoveredId = await endpointAt(scope, recovered, ['entitlement.granted_manually']);
    const customerId = await m.newCustomer(scope);
    const status = async (endpointId: string) => (await endpoints().get(endpointId)).status;

    await grant(scope, customerId, 'first');
    await drain();
    expect([await status(failingId), await status(recoveredId)]).toEqual(['enabled', 'enabled']);

    // One endpoint answers again: its streak ends with the success.
    receiver.on(recovered, 204);
    m.clock.advance(RETRY_DELAYS_MS[0] / 1000);
    await drain();
    expect((await latestDelivery(recoveredId)).status).toBe('succeeded');
    receiver.on(recovered, 500);

    // A failure short of five days after the first keeps both enabled.
    m.clock.advance(FAILING_DISABLE_AFTER_MS / 1000 - 3_600);
    await grant(scope, customerId, 'second');
    await drain();
    expect([await status(failingId), await status(recoveredId)]).toEqual(['enabled', 'enabled']);

    // Five days after its first failure: the failing endpoint is disabled; the other's streak began only later.
    m.clock.advance(3_600);
    await grant(scope, customerId, 'third');
    await drain();
    expect([await status(failingId), await status(recoveredId)]).toEqual(['disabled_failing', 'enabled']);
  });

  it('after a rotation the previous secret signs too, last, until 24 h after the rotation; then the new one alone', async () => {
    const scope = testScope(await project(), 'sandbox');
    const hook = path();
    const created = await endpoints().create(
      scope.projectId,
      { url: receiver.url(hook), env: scope.env, eventTypes: ['entitlement.granted_manually'] },
      'req_rotation',
    );
    const rotated = await endpoints().rotate(created.id, 'req_rotation');
    const [previousSecret, newSecret] = [created.secret!, rotated.secret!];
    const customerId = await m.newCustomer(scope);
    const signatureOf = (i: number) => String(receiver.of(hook)[i]!.headers['service-signature']);

    await grant(scope, customerId, 'first');
    await drain();
    const both = signatureOf(0);
    expect(both.match(/v1=/g)).toHaveLength(2);
    expect(verifyServiceSignature(receiver.of(hook)[0]!.body, both, previousSecret)).toBe(true); // the previous secret's is last
    expect(verifyServiceSignature(receiver.of(hook)[0]!.body, both.replace(/,v1=[0-9a-f]+$/, ''), newSecret)).toBe(true);

    // A minute before the window ends: both still sign.
    m.clock.advance(PREVIOUS_SECRET_TTL_MS / 1000 - 60);
    await grant(scope, customerId, 'second');
    await drain();
    expect(signatureOf(1).match(/v1=/g)).toHaveLength(2);

    m.clock.advance(61);
    await grant(scope, customerId, 'third');
    await drain();
    expect(signatureOf(2).match(/v1=/g)).toHaveLength(1);
    expect(verifyServiceSignature(receiver.of(hook)[2]!.body, signatureOf(2), newSecret)).toBe(true);
    expect(verifyServiceSignature(receiver.of(hook)[2]!.body, signatureOf(2), previousSecret)).toBe(false);
  });
});
