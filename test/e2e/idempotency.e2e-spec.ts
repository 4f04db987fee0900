import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import { IsBoolean, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { Idempotent, IDEMPOTENCY_WAIT_MS, Sql } from '#platform';
import { type AuthContext, CurrentKey, RequireApiKey } from '#keys';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';

class ProbeDto {
  @IsString() value: string;
  @IsOptional() @IsBoolean() fail?: boolean;
  @IsOptional() @IsInt() @Min(0) @Max(20_000) delayMs?: number;
}

/** A test-only idempotent route: one write, then an answer (or a crash between the two). */
@Controller('v1/test-probes/idempotent')
class IdempotencyProbeController {
  constructor(private readonly sql: Sql) {}

  @Post()
  @HttpCode(200)
  @RequireApiKey({ kinds: ['publishable', 'secret'] })
  @Idempotent()
  async write(@CurrentKey() auth: AuthContext, @Body() body: ProbeDto): Promise<Record<string, unknown>> {
    await this.sql.run('INSERT INTO probe_writes (project_id, env, value) VALUES ($1, $2, $3)', [auth.projectId, auth.env, body.value]);
    if (body.delayMs) await new Promise((resolve) => setTimeout(resolve, body.delayMs));
    if (body.fail) throw new Error('simulated crash after the write, before the answer');
    const [{ n }] = await this.sql.rows<{ n: number }>('SELECT count(*)::int AS n FROM probe_writes WHERE project_id = $1', [auth.projectId]);
    return { object: 'probe', value: body.value, writesSoFar: n };
  }
}

@Module({ controllers: [IdempotencyProbeController] })
class IdempotencyProbeModule {}

describe('idempotency (platform primitive, Stripe semantics) on a test-only route', () => {
  let t: TestApp;
  let fx: ProjectFixture;
  let n = 0;
  const key = () => `key-${Date.now()}-${++n}`;
  const post = (idempotencyKey: string | undefined, body: Record<string, unknown>, app = t, apiKey = fx.keys.skTest) => {
    const req = app.http.post('/v1/test-probes/idempotent').set(keyHeaders(fx, apiKey));
    if (idempotencyKey !== undefined) req.set('Idempotency-Key', idempotencyKey);
    return req.send(body);
  };
  const writes = async (value: string): Promise<number> =>
    (await t.dataSource.query('SELECT count(*)::int AS n FROM probe_writes WHERE project_id = $1 AND value = $2', [fx.projectId, value]))[0].n;
  const stored = async (idempotencyKey: string): Promise<number> =>
    (
      await t.dataSource.query('SELECT count(*)::int AS n FROM idempotency_keys WHERE project_id = $1 AND idempotency_key = $2', [fx.projectId, idempotencyKey])
    )[0].n;

  beforeAll(async () => {
    t = await createTestApp({}, { extraModules: [IdempotencyProbeModule], ownDatabase: true });
    await t.dataSource.query('CREATE TABLE IF NOT EXISTS probe_writes (project_id text NOT NULL, env text NOT NULL, value text NOT NULL)');
    fx = await createProjectWithApp(t);
  });
  afterAll(async () => t.close());

  it('the same key and body replays the first answer: idempotent_replay in the body, Idempotent-Replayed on the wire, one execution', async () => {
    const k = key();
    const first = await post(k, { value: 'replay' });
    expect(first.status).toBe(200);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(first.body).toEqual({ object: 'probe', value: 'replay', writesSoFar: expect.any(Number) });
    const again = await post(k, { value: 'replay' });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual({ ...first.body, idempotent_replay: true });
    expect(await writes('replay')).toBe(1);
  });

  it('the body is compared canonically: the same fields in another order replay', async () => {
    const k = key();
    expect((await post(k, { value: 'order', fail: false })).status).toBe(200);
    const again = await post(k, { fail: false, value: 'order' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await writes('order')).toBe(1);
  });

  it('the same key with another body is 400 idempotency_key_in_use, and nothing runs', async () => {
    const k = key();
    expect((await post(k, { value: 'mismatch-a' })).status).toBe(200);
    const other = await post(k, { value: 'mismatch-b' });
    expectError(other, 400, 'idempotency_key_in_use');
    expect(await writes('mismatch-b')).toBe(0);
  });

  it('without the header every request executes', async () => {
    await post(undefined, { value: 'no-key' });
    await post(undefined, { value: 'no-key' });
    expect(await writes('no-key')).toBe(2);
  });

  it('a malformed key (empty, over 255 characters, not printable) is 400 invalid_param_value naming the header', async () => {
    for (const bad of ['', 'a'.repeat(256), 'tab\there']) {
      const res = await post(bad, { value: 'bad-key' });
      expectError(res, 400, 'invalid_param_value');
      expect(res.body.error.message).toContain('Idempotency-Key');
    }
    expect((await post('a'.repeat(255), { value: 'long-key' })).status).toBe(200);
    expect(await writes('bad-key')).toBe(0);
  });

  it('keys are scoped by project and environment', async () => {
    const k = key();
    expect((await post(k, { value: 'scoped' })).headers['idempotent-replayed']).toBeUndefined();
    expect((await post(k, { value: 'scoped' }, t, fx.keys.skLive)).headers['idempotent-replayed']).toBeUndefined();
    expect(await writes('scoped')).toBe(2);
  });

  it('answers expire after 24 hours on the service clock; then the key executes afresh', async () => {
    const k = key();
    await post(k, { value: 'expiry' });
    await t.http
      .post('/admin/v1/test-clock/advance')
      .set(operatorAuth())
      .send({ seconds: 23 * 3600 });
    expect((await post(k, { value: 'expiry' })).headers['idempotent-replayed']).toBe('true');
    await t.http.post('/admin/v1/test-clock/advance').set(operatorAuth()).send({ seconds: 3601 });
    const after = await post(k, { value: 'expiry' });
    expect(after.status).toBe(200);
    expect(after.headers['idempotent-replayed']).toBeUndefined();
    expect(await writes('expiry')).toBe(2);
  });

  it('20 concurrent duplicates execute once; every one answers the first answer', async () => {
    const k = key();
    const results = await Promise.all(Array.from({ length: 20 }, () => post(k, { value: 'concurrent', delayMs: 300 })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    const bodies = new Set(results.map((r) => JSON.stringify({ ...r.body, idempotent_replay: undefined })));
    expect(bodies.size).toBe(1);
    expect(await writes('concurrent')).toBe(1);
  });

  it('duplicates on two replicas (one database) execute once: the second waits on the key and replays', async () => {
    const replica = await createTestApp({ DATABASE_URL: t.config.databaseUrl }, { extraModules: [IdempotencyProbeModule] });
    // Replicas share one time; the expiry test above moved only t's clock (by over 24 hours),
    // and a replica a day behind would rightly take t's answer as expired and execute again.
    replica.clock.advance(t.clock.offsetSeconds);
    try {
      const k = key();
      const [a, b] = await Promise.all([post(k, { value: 'two-replicas', delayMs: 500 }), post(k, { value: 'two-replicas', delayMs: 500 }, replica)]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect([a.headers['idempotent-replayed'], b.headers['idempotent-replayed']].filter((h) => h === 'true')).toHaveLength(1);
      expect(await writes('two-replicas')).toBe(1);
    } finally {
      await replica.close();
    }
  });

  it('a crash between the write and the answer leaves nothing half-stored: no write, no stored key, and the retry executes', async () => {
    const k = key();
    const crashed = await post(k, { value: 'crash', fail: true });
    expectError(crashed, 500, 'internal_error');
    expect(await writes('crash')).toBe(0);
    expect(await stored(k)).toBe(0);
    const retried = await post(k, { value: 'crash', fail: false });
    expect(retried.status).toBe(200);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await writes('crash')).toBe(1);
    expect(await stored(k)).toBe(1);
  });

  it(`a duplicate that waits longer than ${IDEMPOTENCY_WAIT_MS} ms for the first answers 429 rate_limited with Retry-After: 1`, async () => {
    const k = key();
    // supertest sends on then(): start the slow request now.
    const slow = post(k, { value: 'slow', delayMs: IDEMPOTENCY_WAIT_MS + 1500 }).then((res) => res);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const duplicate = await post(k, { value: 'slow', delayMs: IDEMPOTENCY_WAIT_MS + 1500 });
    expectError(duplicate, 429, 'rate_limited');
    expect(duplicate.headers['retry-after']).toBe('1');
    expect((await slow).status).toBe(200);
    const later = await post(k, { value: 'slow', delayMs: IDEMPOTENCY_WAIT_MS + 1500 });
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(await writes('slow')).toBe(1);
  }, 30_000);

  it('expired answers are purged', async () => {
    const k = key();
    await post(k, { value: 'purge' });
    await t.http
      .post('/admin/v1/test-clock/advance')
      .set(operatorAuth())
      .send({ seconds: 25 * 3600 });
    const { IdempotencyService, crossTenant } = await import('#platform');
    expect(await t.app.get(IdempotencyService).purgeExpired(crossTenant('test'), t.clock.nowMs())).toBeGreaterThanOrEqual(1);
    expect(await stored(k)).toBe(0);
  });
});
