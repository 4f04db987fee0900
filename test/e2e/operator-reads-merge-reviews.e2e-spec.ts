import { randomUUID } from 'node:crypto';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { testScope } from '../support/scopes.js';
import { subscriptionHeldBy } from '../support/factories/identity.js';
import { attributedEvent } from '../support/factories/telemetry.js';

describe('operator: merge review approve and dismiss', () => {
  let t: TestApp;
  let p: ProjectFixture;
  let other: ProjectFixture;
  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
    other = await createProjectWithApp(t);
  });
  afterAll(async () => t.close());

  const uid = (prefix: string) => `${prefix}_${randomUUID().slice(0, 8)}`;
  const identify = (body: object) => t.http.post('/v1/identify').set(keyHeaders(p, p.keys.pubTest)).send(body);
  const act = (reviewId: string, action: 'approve' | 'dismiss', fx = p) =>
    t.http.post(`/admin/v1/projects/${fx.projectId}/merge-reviews/${reviewId}/${action}`).set(operatorAuth());

  /** Two customers and an identify call that names both: the queued review. */
  async function conflict() {
    const a = { userId: uid('user'), anonymousId: uid('anon') };
    const b = { userId: uid('user'), anonymousId: uid('anon') };
    const canonical: string = (await identify(a)).body.serviceCustomerId;
    const otherCustomer: string = (await identify(b)).body.serviceCustomerId;
    const clash = await identify({ userId: a.userId, anonymousId: b.anonymousId });
    expect(clash.body.mergePending).toBe(true);
    const list = await t.http.get(`/admin/v1/projects/${p.projectId}/merge-reviews?env=sandbox`).set(operatorAuth());
    const review = list.body.data.find((r: { otherCustomerId: string }) => r.otherCustomerId === otherCustomer);
    expect(review).toBeDefined();
    return { a, b, canonical, otherCustomer, reviewId: review.id as string };
  }

  it("approve merges the other customer's ids, subscriptions and events into the canonical one, journaled; a second action is 409", async () => {
    const c = await conflict();
    await subscriptionHeldBy(t.dataSource, testScope(p.projectId), c.otherCustomer);
    await attributedEvent(t.dataSource, testScope(p.projectId), { appId: p.appId, customerId: c.otherCustomer, timestampMs: t.clock.nowMs() });
    const res = await act(c.reviewId, 'approve');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'merge_review',
      id: c.reviewId,
      env: 'sandbox',
      developerUserId: c.a.userId,
      anonymousId: c.b.anonymousId,
      canonicalCustomerId: c.canonical,
      otherCustomerId: c.otherCustomer,
      status: 'approved',
      createdAt: expect.any(Number),
      decidedAt: expect.any(Number),
      auditEventId: expect.stringMatching(/^srv_merge_/),
    });
    // The anonymous id of the conflict (and the other customer's own ids) now resolve to the canonical customer.
    for (const q of [c.b.anonymousId, c.b.userId]) {
      const found = await t.http.get(`/admin/v1/projects/${p.projectId}/customers?env=sandbox&q=${q}`).set(operatorAuth());
      expect(found.body.data.map((h: { serviceCustomerId: string }) => h.serviceCustomerId)).toEqual([c.canonical]);
    }
    const page = await t.http.get(`/admin/v1/projects/${p.projectId}/customers/${c.canonical}?env=sandbox`).set(operatorAuth());
    expect(page.body.subscriptions).toHaveLength(1);
    expect(page.body.recentEvents).toHaveLength(1);
    expect(page.body.identities.merges).toEqual([
      expect.objectContaining({ id: c.reviewId, role: 'canonical', status: 'approved', otherCustomerId: c.otherCustomer }),
    ]);
    const timeline = await t.http.get(`/admin/v1/projects/${p.projectId}/customers/${c.canonical}/timeline?env=sandbox`).set(operatorAuth());
    expect(timeline.body.data[0]).toMatchObject({ eventId: res.body.auditEventId, eventType: 'identity.merge_approved', actor: 'operator' });
    // No longer pending; the decision is final.
    const list = await t.http.get(`/admin/v1/projects/${p.projectId}/merge-reviews?env=sandbox`).set(operatorAuth());
    expect(list.body.data.map((r: { id: string }) => r.id)).not.toContain(c.reviewId);
    expectError(await act(c.reviewId, 'approve'), 409, 'review_already_decided');
    expectError(await act(c.reviewId, 'dismiss'), 409, 'review_already_decided');
  });

  it('dismiss leaves both customers as they are', async () => {
    const c = await conflict();
    const res = await act(c.reviewId, 'dismiss');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: c.reviewId, status: 'dismissed' });
    const found = await t.http.get(`/admin/v1/projects/${p.projectId}/customers?env=sandbox&q=${c.b.anonymousId}`).set(operatorAuth());
    expect(found.body.data.map((h: { serviceCustomerId: string }) => h.serviceCustomerId)).toEqual([c.otherCustomer]);
    expectError(await act(c.reviewId, 'approve'), 409, 'review_already_decided');
  });

  it("an unknown review, or another project's, is 404", async () => {
    const c = await conflict();
    expectError(await act('mrev_nope', 'approve'), 404, 'resource_missing');
    expectError(await act(c.reviewId, 'approve', other), 404, 'resource_missing');
    expectError(await t.http.post(`/admin/v1/projects/proj_nope/merge-reviews/${c.reviewId}/dismiss`).set(operatorAuth()), 404, 'resource_missing');
    expect((await t.http.post(`/admin/v1/projects/${p.projectId}/merge-reviews/${c.reviewId}/approve`)).status).toBe(401);
  });
});
