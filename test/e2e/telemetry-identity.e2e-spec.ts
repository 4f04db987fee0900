import { randomUUID } from 'node:crypto';
import { ErasureWorker } from '#identity';
import { EventIdentityResolver, anonymiseCustomerEvents } from '#telemetry';
import { Sql } from '#platform';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { operatorAuth, type TestApp } from '../support/test-app.js';
import { testScope } from '../support/scopes.js';
import { telemetryHarness } from '../support/harness/telemetry.js';

describe('telemetry: identity resolution of events and their erasure', () => {
  const h = telemetryHarness({ ownDatabase: true });
  let t: TestApp;
  let p: ProjectFixture;
  beforeAll(() => {
    ({ t, p } = h);
  });
  const { ev, send, rows, countProjectEvents } = h;

  describe('identity resolution (out of band) and erasure', () => {
    const identify = (body: object) => t.http.post('/v1/identify').set(keyHeaders(p, p.keys.pubTest)).send(body);
    /** A fresh user on a fresh device, identified: its customer id. */
    const identifiedDevice = async () => {
      const userId = `user_${randomUUID().slice(0, 8)}`;
      const anonymousId = `anon_${randomUUID().slice(0, 8)}`;
      const customerId: string = (await identify({ userId, anonymousId })).body.serviceCustomerId;
      return { userId, anonymousId, customerId };
    };

    async function hintSet(anonymousId: string | null, developerUserId: string | null = null, serviceCustomerId: string | null = null) {
      const found = await t.dataSource.query(
        `SELECT pending, attempts, resolve_after_ms::float8 AS resolve_after_ms, customer_id FROM event_identity_hints
          WHERE project_id = $1 AND env = 'sandbox' AND anonymous_id IS NOT DISTINCT FROM $2 AND developer_user_id IS NOT DISTINCT FROM $3 AND service_customer_id IS NOT DISTINCT FROM $4`,
        [p.projectId, anonymousId, developerUserId, serviceCustomerId],
      );
      return found[0];
    }

    it('hints are resolved to the customer by the background resolver, once per hint set; misses are retried later', async () => {
      const userId = `user_${randomUUID().slice(0, 8)}`;
      const anonymousId = `anon_${randomUUID().slice(0, 8)}`;
      const who = await identify({ userId, anonymousId });
      expect(who.status).toBe(200);
      const customerId = who.body.serviceCustomerId;
      const byUser = ev({ anonymousId: undefined, developerUserId: userId });
      const byAnon = [ev({ anonymousId }), ev({ anonymousId }), ev({ anonymousId })];
      const byCustomer = ev({ anonymousId: undefined, serviceCustomerId: customerId });
      const stranger = ev({ anonymousId: `anon_${randomUUID().slice(0, 8)}` });
      const all = [byUser, ...byAnon, byCustomer, stranger];
      await send({ events: all });
      const ids = all.map((e) => e.eventId as string);
      expect((await rows(ids)).every((r: any) => r.customer_id === null)).toBe(true);
      expect(await hintSet(anonymousId)).toMatchObject({ pending: true, attempts: 0, customer_id: null });

      const resolver = t.app.get(EventIdentityResolver);
      // Several replicas at once: the claim keeps them apart, the result is the same.
      const runs = await Promise.all([resolver.runOnce(), resolver.runOnce()]);
      expect(runs[0].resolvedSets + runs[1].resolvedSets).toBeGreaterThanOrEqual(3);
      expect(runs[0].eventsResolved + runs[1].eventsResolved).toBeGreaterThanOrEqual(5);
      const stored = new Map<string, any>((await rows(ids)).map((r: any) => [r.event_id, r]));
      for (const e of [byUser, ...byAnon, byCustomer]) expect(stored.get(e.eventId as string).customer_id).toBe(customerId);
      expect(stored.get(stranger.eventId as string).customer_id).toBeNull();
      expect(await hintSet(anonymousId)).toMatchObject({ pending: false, customer_id: customerId });
      expect(await hintSet(stranger.anonymousId as string)).toMatchObject({ pending: true, attempts: 1, customer_id: null });

      // New events of a resolved set are resolved on the next run.
      const later = ev({ anonymousId });
      await send({ events: [later] });
      expect(await hintSet(anonymousId)).toMatchObject({ pending: true });
      await resolver.runOnce();
      expect((await rows([later.eventId as string]))[0].customer_id).toBe(customerId);

      // Idempotent: nothing due now; the miss is retried after its back-off.
      await resolver.runOnce();
      expect((await hintSet(stranger.anonymousId as string)).attempts).toBe(1);
      await identify({ userId: `user_${randomUUID().slice(0, 8)}`, anonymousId: stranger.anonymousId });
      await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 61 });
      await resolver.runOnce();
      expect((await rows([stranger.eventId as string]))[0].customer_id).toMatch(/^cdcust_/);
    });

    it('hints never reach another project or environment: a foreign serviceCustomerId stays unresolved, a foreign appId is not stored', async () => {
      const other = await createProjectWithApp(t);
      const foreignCustomer = (
        await t.http
          .post('/v1/identify')
          .set(keyHeaders(other, other.keys.pubTest))
          .send({ userId: `user_${randomUUID().slice(0, 8)}`, anonymousId: `anon_${randomUUID().slice(0, 8)}` })
      ).body.serviceCustomerId;
      const liveCustomer = (
        await t.http
          .post('/v1/identify')
          .set(keyHeaders(p, p.keys.pubLive))
          .send({ userId: `user_${randomUUID().slice(0, 8)}`, anonymousId: `anon_${randomUUID().slice(0, 8)}` })
      ).body.serviceCustomerId;
      expect(foreignCustomer).toMatch(/^cdcust_/);
      expect(liveCustomer).toMatch(/^cdcust_/);
      const byForeign = ev({ anonymousId: undefined, serviceCustomerId: foreignCustomer });
      const byLive = ev({ anonymousId: undefined, serviceCustomerId: liveCustomer });
      expect((await send({ events: [byForeign, byLive], appId: other.appId })).status).toBe(202);
      await t.app.get(EventIdentityResolver).runOnce();
      const stored = await rows([byForeign.eventId as string, byLive.eventId as string]);
      expect(stored).toHaveLength(2);
      for (const r of stored) expect(r).toMatchObject({ env: 'sandbox', app_id: p.appId, customer_id: null });
      expect(await countProjectEvents(other)).toBe(0);
    });

    it('a set that keeps missing backs off, then waits for new events', async () => {
      const anonymousId = `anon_${randomUUID().slice(0, 8)}`;
      await send({ events: [ev({ anonymousId })] });
      const resolver = t.app.get(EventIdentityResolver);
      for (let i = 0; i < 5; i++) {
        await resolver.runOnce();
        await t.http
          .post('/admin/v1/test-clock/advance')
          .set(operatorAuth())
          .send({ seconds: 6 * 3600 + 1 });
      }
      expect(await hintSet(anonymousId)).toMatchObject({ pending: false, attempts: 5, customer_id: null });
      await resolver.runOnce();
      expect((await hintSet(anonymousId)).attempts).toBe(5);
      await send({ events: [ev({ anonymousId })] });
      expect((await hintSet(anonymousId)).pending).toBe(true);
    });

    it('a retry with different hints is resolved again', async () => {
      const { anonymousId, customerId } = await identifiedDevice();
      const e = ev({ anonymousId });
      await send({ events: [e] });
      await t.app.get(EventIdentityResolver).runOnce();
      expect((await rows([e.eventId as string]))[0].customer_id).toBe(customerId);
      await send({ events: [e] });
      expect((await rows([e.eventId as string]))[0].customer_id).toBe(customerId);
      await send({ events: [{ ...e, anonymousId: `anon_${randomUUID().slice(0, 8)}` }] });
      expect((await rows([e.eventId as string]))[0].customer_id).toBeNull();
    });

    it('forgetting a customer anonymises their events (hints, customer and properties)', async () => {
      const { userId, anonymousId, customerId } = await identifiedDevice();
      const resolved = ev({ anonymousId: undefined, developerUserId: userId, properties: { email: 'a@b.c' }, tags: { plan: 'pro' } });
      await send({ events: [resolved] });
      await t.app.get(EventIdentityResolver).runOnce();
      const pending = ev({ anonymousId, properties: { email: 'a@b.c' } });
      const error = ev({ anonymousId, name: 'error.unhandled', properties: { fingerprint: 'abcdef12' } });
      const bystander = ev({ anonymousId: `anon_${randomUUID().slice(0, 8)}`, properties: { keep: true } });
      await send({ events: [pending, error, bystander] });

      const forget = await t.http.post('/v1/identity/forget').set(keyHeaders(p, p.keys.skTest)).send({ customerId });
      expect(forget.status).toBe(200);
      await t.app.get(ErasureWorker).runOnce({ projectId: p.projectId });

      const stored = new Map<string, any>((await rows([resolved, pending, error, bystander].map((e) => e.eventId as string))).map((r: any) => [r.event_id, r]));
      for (const e of [resolved, pending, error]) {
        expect(stored.get(e.eventId as string)).toMatchObject({
          developer_user_id: null,
          anonymous_id: null,
          service_customer_id: null,
          customer_id: null,
          properties: {},
          tags: null,
        });
      }
      expect(await hintSet(anonymousId)).toBeUndefined();
      expect(await hintSet(null, userId)).toBeUndefined();
      expect(stored.get(error.eventId as string)).toMatchObject({ name: 'error.unhandled', fingerprint: 'abcdef12' });
      expect(stored.get(bystander.eventId as string)).toMatchObject({ properties: { keep: true }, anonymous_id: bystander.anonymousId });
    });
    it('erasure locks the hint sets before the events, in the order of ingestion and the resolver, so it cannot deadlock with them', async () => {
      const { userId, anonymousId, customerId } = await identifiedDevice();
      const e = ev({ anonymousId });
      await send({ events: [e] });
      await t.app.get(EventIdentityResolver).runOnce();
      expect((await rows([e.eventId as string]))[0].customer_id).toBe(customerId);

      // A writer in the ingestion's lock order (a retry of the event): its hint set, then the event row.
      const writer = t.dataSource.createQueryRunner();
      await writer.connect();
      await writer.startTransaction();
      try {
        await writer.query(`SELECT 1 FROM event_identity_hints WHERE project_id = $1 AND env = 'sandbox' AND anonymous_id = $2 FOR UPDATE`, [
          p.projectId,
          anonymousId,
        ]);
        const sql = t.app.get(Sql);
        const erasure = sql
          .transaction(() => anonymiseCustomerEvents(testScope(p.projectId, 'sandbox'), { customerId, userIds: [userId], anonymousIds: [anonymousId] }, sql))
          .then(
            () => 'erased',
            (err: Error) => err.message,
          );
        // The erasure is now blocked on a lock (the hint set); it must not hold the event row.
        for (let waited = 0; ; waited += 20) {
          const [{ n }] = await t.dataSource.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          if (n > 0) break;
          if (waited > 5000) throw new Error('the erasure never waited on the hint set');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await writer.query(`UPDATE events SET deliveries = deliveries + 1 WHERE project_id = $1 AND env = 'sandbox' AND event_id = $2`, [
          p.projectId,
          e.eventId,
        ]);
        await writer.commitTransaction();
        expect(await erasure).toBe('erased');
      } finally {
        if (writer.isTransactionActive) await writer.rollbackTransaction();
        await writer.release();
      }
      expect((await rows([e.eventId as string]))[0]).toMatchObject({ anonymous_id: null, customer_id: null, properties: {}, deliveries: 2 });
      expect(await hintSet(anonymousId)).toBeUndefined();
    });

    it("an anonymous-only forget of an identified customer anonymises only that device's events", async () => {
      const userId = `user_${randomUUID().slice(0, 8)}`;
      const phone = `anon_${randomUUID().slice(0, 8)}`;
      const laptop = `anon_${randomUUID().slice(0, 8)}`;
      await identify({ userId, anonymousId: phone });
      await identify({ userId, anonymousId: laptop });
      const fromPhone = ev({ anonymousId: phone, properties: { screen: 'home' } });
      const fromLaptop = ev({ anonymousId: laptop, properties: { screen: 'cart' } });
      await send({ events: [fromPhone, fromLaptop] });
      await t.app.get(EventIdentityResolver).runOnce();

      const forget = await t.http.post('/v1/identity/forget').set(keyHeaders(p, p.keys.pubTest)).send({ anonymousId: phone });
      expect(forget.status).toBe(200);
      // The device-only answer names the matched customer.
      expect(forget.body).toMatchObject({ serviceCustomerId: expect.stringMatching(/^cdcust_/), scope: 'device' });

      const stored = new Map<string, any>((await rows([fromPhone.eventId as string, fromLaptop.eventId as string])).map((r: any) => [r.event_id, r]));
      expect(stored.get(fromPhone.eventId as string)).toMatchObject({ anonymous_id: null, customer_id: null, properties: {} });
      expect(stored.get(fromLaptop.eventId as string)).toMatchObject({ anonymous_id: laptop, properties: { screen: 'cart' } });
      expect(stored.get(fromLaptop.eventId as string).customer_id).toBe(forget.body.serviceCustomerId);
    });
  });

  // Last: moves the clock far ahead and drops partitions.
});
