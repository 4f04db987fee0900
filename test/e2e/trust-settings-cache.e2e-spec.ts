import { createProjectWithApp, setRateLimits, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';
import { bearer } from '../support/read-api.js';

/** The trust settings cache (a replace is seen at once on the replica that took it, the version moves) and the trust bucket. */
describe('trust settings cache and the trust endpoints’ bucket', () => {
  let t: TestApp;
  let p: ProjectFixture;

  const putTrust = (body: object) => t.http.put(`/admin/v1/projects/${p.projectId}/trust`).set(operatorAuth()).send(body);
  const gate = (email: string) => t.http.post('/v1/trust/gate').set(bearer(p.keys.skTest)).send({ email });

  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
  });
  afterAll(async () => t.close());

  it('a replace is answered by the next gate call; each replace raises the settings version', async () => {
    expect((await gate('mallory@example.com')).body.action).toBe('allow');
    expect((await putTrust({ blocks: [{ kind: 'email', value: 'mallory@example.com', reason: 'fraud' }] })).status).toBe(200);
    expect((await gate('mallory@example.com')).body.action).toBe('block');
    expect((await putTrust({ blocks: [] })).status).toBe(200);
    expect((await gate('mallory@example.com')).body.action).toBe('allow');
    const [{ version }] = await t.dataSource.query(`SELECT version FROM trust_settings WHERE project_id = $1`, [p.projectId]);
    expect(Number(version)).toBe(2);
  });

  it('the trust endpoints charge the alias bucket: past it 429 rate_limited', async () => {
    await setRateLimits(t, p.projectId, { alias: { sustained: 0.001, burst: 2 } });
    expect((await gate('a@example.com')).status).toBe(200);
    expect((await t.http.get('/v1/trust/status?email=a@example.com').set(bearer(p.keys.skTest))).status).toBe(200);
    expectError(await gate('a@example.com'), 429, 'rate_limited');
  });
});
