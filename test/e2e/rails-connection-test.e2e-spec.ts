import { createProjectWithApp } from '../support/fixtures.js';
import { operatorAuth } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { railReadHarness } from '../support/harness/rails-read.js';

describe('rails: test connection with the rail credentials, last worked on the rails page', () => {
  const h = railReadHarness({}, { ownDatabase: true });

  const test = (projectId: string, rail: string, env = 'sandbox') =>
    h.t.http.post(`/admin/v1/projects/${projectId}/rails/${rail}/test?env=${env}`).set(operatorAuth()).send();
  const panel = async (projectId: string, rail: string) =>
    ((await h.t.http.get(`/admin/v1/projects/${projectId}/rails?env=sandbox`).set(operatorAuth())).body.rails as { rail: string; connection: unknown }[]).find(
      (r) => r.rail === rail,
    );

  it('each rail: one authenticated read of an id the store does not hold; "not found" is success', async () => {
    const { fx } = h;
    for (const rail of ['card_payments', 'ios_store', 'android_store']) {
      const res = await test(fx.projectId, rail);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'rail_connection_test',
        rail,
        env: 'sandbox',
        ok: true,
        message: expect.stringContaining('accepted'),
        checkedAt: expect.any(Number),
        lastWorkedAt: res.body.checkedAt,
      });
      expect((await panel(fx.projectId, rail))?.connection).toEqual(res.body);
    }
    expect(h.card.calls.some((c) => c.includes('cus_connection_test'))).toBe(true);
  });

  it('credentials the store refuses fail with the reason and keep when they last worked', async () => {
    const project = await h.railProject();
    const worked = await test(project.projectId, 'card_payments');
    expect(worked.body.ok).toBe(true);
    h.writeSecrets({
      [project.projectId]: { card_payments: { webhookSecrets: ['whsec_x'], apiKey: 'rk_test_refused' } },
    });
    const refused = await test(project.projectId, 'card_payments');
    expect(refused.body).toMatchObject({ ok: false, message: expect.stringContaining('HTTP 401'), lastWorkedAt: worked.body.checkedAt });
    expect(JSON.stringify(refused.body)).not.toContain('rk_test_refused');
    expect((await test(project.projectId, 'ios_store')).body).toMatchObject({
      ok: false,
      message: expect.stringContaining('no ios_store API key'),
      lastWorkedAt: null,
    });
    const android = await test(project.projectId, 'android_store');
    expect(android.body).toMatchObject({ ok: false, message: 'no android_store.serviceAccount in the rail secrets file', lastWorkedAt: null });
  });

  it('a rail without settings or secrets fails with what is missing; unknown rail and project are refused', async () => {
    const bare = await createProjectWithApp(h.t);
    expect((await test(bare.projectId, 'android_store')).body).toMatchObject({
      ok: false,
      message: 'no android_store.serviceAccount in the rail secrets file',
    });
    expect((await panel(bare.projectId, 'ios_store'))?.connection).toBeNull();
    expectError(await test(bare.projectId, 'fax_store'), 400, 'invalid_param_value');
    expectError(await test('proj_missing', 'card_payments'), 404, 'resource_missing');
  });
});
