import { createHash, randomUUID } from 'node:crypto';
import vm from 'node:vm';
import ts from 'typescript';
import { createProjectWithApp, keyHeaders, type ProjectFixture } from '../support/fixtures.js';
import { createTestApp, operatorAuth, type TestApp } from '../support/test-app.js';
import { expectError } from '../support/expect-error.js';

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64');
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
const release = () => `1.0.${randomUUID().slice(0, 8)}`;
const smallMap = (source = 'a.ts') => ({ version: 3, sources: [source], names: [], mappings: 'AAAA' });
const MAX_SOURCEMAP_BYTES = 16 * 1024 * 1024;

describe('source maps: POST /v1/releases/sourcemaps and symbolicated error reads', () => {
  let t: TestApp;
  let p: ProjectFixture;

  beforeAll(async () => {
    t = await createTestApp();
    p = await createProjectWithApp(t);
  });
  afterAll(async () => t.close());

  const upload = (key: string | null, body: unknown) => {
    const req = t.http.post('/v1/releases/sourcemaps');
    if (key !== null) req.set({ Authorization: `Bearer ${key}` });
    return req.send(body as object);
  };
  const batch = (files: unknown[], rel = release(), environment = 'sandbox') => ({ release: rel, environment, files });
  const storedRows = async (projectId: string, rel: string) =>
    Number((await t.dataSource.query(`SELECT count(*) AS n FROM source_maps WHERE project_id = $1 AND release = $2`, [projectId, rel]))[0].n);

  describe('authentication', () => {
    it('a publishable key is 401 invalid_api_key, no key is 401 missing_api_key', async () => {
      const body = batch([{ fileUrl: 'app:///a.js', sourceMap: b64(smallMap()) }]);
      const pub = await t.http.post('/v1/releases/sourcemaps').set(keyHeaders(p, p.keys.pubTest)).send(body);
      expect(pub.status).toBe(401);
      expect(pub.body.error).toEqual(expect.objectContaining({ type: 'authentication_error', code: 'invalid_api_key' }));
      const none = await upload(null, body);
      expect(none.status).toBe(401);
      expect(none.body.error.code).toBe('missing_api_key');
      expect(await storedRows(p.projectId, body.release)).toBe(0);
    });

    it('both endpoints are in the OpenAPI document', async () => {
      const doc = await t.http.get('/docs/json');
      expect(doc.status).toBe(200);
      expect(doc.body.paths['/v1/releases/sourcemaps'].post).toBeDefined();
      expect(doc.body.paths['/v1/server/errors/issues/{fingerprint}'].get).toBeDefined();
    });

    it('the prefix-less path is the same endpoint', async () => {
      const res = await t.http
        .post('/releases/sourcemaps')
        .set({ Authorization: `Bearer ${p.keys.skTest}` })
        .send(batch([{ fileUrl: 'app:///a.js', sourceMap: b64(smallMap()) }]));
      expect(res.status).toBe(200);
      expect(res.body.uploaded).toBe(1);
    });
  });

  describe('request-level errors refuse the whole batch', () => {
    const file = { fileUrl: 'app:///dist/index.js', sourceMap: b64(smallMap()) };
    const uploadRefused = async (body: unknown, status: number, code: string, key = p.keys.skTest) => {
      const res = await upload(key, body);
      expectError(res, status, code);
      return res;
    };

    it('invalid_release: bad characters, too long, empty, not a string', async () => {
      for (const bad of ['1.0 beta', 'v1/2', 'x'.repeat(65), '', 12, ['1.0']]) {
        const res = await uploadRefused({ release: bad, environment: 'sandbox', files: [file] }, 400, 'invalid_release');
        expect(res.body.error.type).toBe('invalid_request_error');
      }
      expect((await upload(p.keys.skTest, { release: 'x'.repeat(64), environment: 'sandbox', files: [file] })).status).toBe(200);
    });

    it('a missing release, environment or files is missing_required_param', async () => {
      await uploadRefused({ environment: 'sandbox', files: [file] }, 400, 'missing_required_param');
      await uploadRefused({ release: release(), files: [file] }, 400, 'missing_required_param');
      await uploadRefused({ release: release(), environment: 'sandbox' }, 400, 'missing_required_param');
    });

    it('an environment outside the enum is invalid_param_value; the other environment is 403 env_mismatch', async () => {
      await uploadRefused(batch([file], release(), 'staging'), 400, 'invalid_param_value');
      await uploadRefused(batch([file], release(), 'Sandbox'), 400, 'invalid_param_value');
      const mismatch = await uploadRefused(batch([file], release(), 'production'), 403, 'env_mismatch');
      expect(mismatch.body.error.type).toBe('permission_error');
      await uploadRefused(batch([file], release(), 'sandbox'), 403, 'env_mismatch', p.keys.skLive);
    });

    it('empty files is missing_required_param, more than 100 or not an array is invalid_param_value', async () => {
      const rel = release();
      await uploadRefused(batch([], rel), 400, 'missing_required_param');
      const many = Array.from({ length: 101 }, (_, i) => ({ fileUrl: `app:///f${i}.js`, sourceMap: b64(smallMap()) }));
      await uploadRefused(batch(many, rel), 400, 'invalid_param_value');
      await uploadRefused({ release: rel, environment: 'sandbox', files: { fileUrl: 'app:///a.js' } }, 400, 'invalid_param_value');
      expect(await storedRows(p.projectId, rel)).toBe(0);
    });
  });

  describe('per-file outcomes never fail the batch', () => {
    it('a mixed batch: each per-file code as a row, the good files stored', async () => {
      const rel = release();
      const files = [
        { fileUrl: 'https://app.example.com/static/main.js', sourceMap: b64(smallMap('main.ts')) },
        { fileUrl: 'main.js', sourceMap: b64(smallMap()) },
        { fileUrl: '/static/main.js', sourceMap: b64(smallMap()) },
        { sourceMap: b64(smallMap()) },
        { fileUrl: 'https://app.example.com/static/empty.js' },
        { fileUrl: 'https://app.example.com/static/blank.js', sourceMap: '' },
        { fileUrl: 'https://app.example.com/static/notb64.js', sourceMap: '{not base64!}' },
        { fileUrl: 'https://app.example.com/static/notjson.js', sourceMap: b64('this is not json') },
        { fileUrl: 'https://app.example.com/static/v2.js', sourceMap: b64({ ...smallMap(), version: 2 }) },
        { fileUrl: 'https://app.example.com/static/nomappings.js', sourceMap: b64({ version: 3, sources: ['x.ts'] }) },
        { fileUrl: 'webpack://app/./src/vendor.js', sourceMap: b64(smallMap('vendor.ts')) },
        'not an object',
      ];
      const res = await upload(p.keys.skTest, batch(files, rel));
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.body).toEqual(
        expect.objectContaining({ object: 'sourcemap_batch', release: rel, environment: 'sandbox', uploaded: 2, skipped: 0, results: expect.any(Array) }),
      );
      const codes = res.body.results.map((r: { status: string; error: { code: string } | null }) => (r.status === 'error' ? r.error!.code : r.status));
      expect(codes).toEqual([
        'uploaded',
        'invalid_runtime_url',
        'invalid_runtime_url',
        'invalid_runtime_url',
        'missing_sourcemap',
        'missing_sourcemap',
        'invalid_sourcemap',
        'invalid_sourcemap',
        'invalid_sourcemap',
        'invalid_sourcemap',
        'uploaded',
        'invalid_runtime_url',
      ]);
      const first = res.body.results[0];
      expect(first).toEqual({
        index: 0,
        fileUrl: 'https://app.example.com/static/main.js',
        status: 'uploaded',
        error: null,
        fileUrlHash: sha256('https://app.example.com/static/main.js'),
        size: JSON.stringify(smallMap('main.ts')).length,
        replaced: false,
      });
      expect(res.body.errors).toHaveLength(10);
      expect(res.body.errors[0]).toEqual(
        expect.objectContaining({
          fileUrl: 'main.js',
          status: 'error',
          error: { code: 'invalid_runtime_url', message: expect.stringContaining('files[1].fileUrl') },
        }),
      );
      expect(res.body.errors.every((e: { status: string }) => e.status === 'error')).toBe(true);
      expect(await storedRows(p.projectId, rel)).toBe(2);
    });

    it('sourcemap_too_large: over 16 MiB decoded is refused without failing the other files', async () => {
      const rel = release();
      const huge = Buffer.alloc(MAX_SOURCEMAP_BYTES + 3, 0x20).toString('base64');
      const res = await upload(
        p.keys.skTest,
        batch(
          [
            { fileUrl: 'app:///dist/huge.js', sourceMap: huge },
            { fileUrl: 'app:///dist/ok.js', sourceMap: b64(smallMap()) },
          ],
          rel,
        ),
      );
      expect(res.status).toBe(200);
      expect(res.body.results[0]).toEqual(expect.objectContaining({ status: 'error', error: expect.objectContaining({ code: 'sourcemap_too_large' }) }));
      expect(res.body.results[1].status).toBe('uploaded');
      expect(res.body.uploaded).toBe(1);
    });

    it('a client fileUrlHash is ignored: the server recomputes it', async () => {
      const res = await upload(p.keys.skTest, batch([{ fileUrl: 'app:///dist/h.js', fileUrlHash: 'forged', sourceMap: b64(smallMap()) }]));
      expect(res.body.results[0].fileUrlHash).toBe(sha256('app:///dist/h.js'));
    });
  });

  it('re-upload: identical content is skipped, different content replaces (and the row says so)', async () => {
    const rel = release();
    const files = [
      { fileUrl: 'app:///dist/a.js', sourceMap: b64(smallMap('a.ts')) },
      { fileUrl: 'app:///dist/b.js', sourceMap: b64(smallMap('b.ts')) },
    ];
    const first = await upload(p.keys.skTest, batch(files, rel));
    expect(first.body).toEqual(expect.objectContaining({ uploaded: 2, skipped: 0 }));

    const again = await upload(p.keys.skTest, batch(files, rel));
    expect(again.body).toEqual(expect.objectContaining({ uploaded: 0, skipped: 2, errors: [] }));
    expect(again.body.results.map((r: { status: string; replaced: boolean }) => [r.status, r.replaced])).toEqual([
      ['skipped', false],
      ['skipped', false],
    ]);

    const changed = await upload(p.keys.skTest, batch([files[0], { fileUrl: 'app:///dist/b.js', sourceMap: b64(smallMap('b-v2.ts')) }], rel));
    expect(changed.body).toEqual(expect.objectContaining({ uploaded: 1, skipped: 1 }));
    expect(changed.body.results[1]).toEqual(expect.objectContaining({ status: 'uploaded', replaced: true, fileUrlHash: sha256('app:///dist/b.js') }));
    expect(await storedRows(p.projectId, rel)).toBe(2);

    // The same file under another release is another map.
    const otherRelease = await upload(p.keys.skTest, batch(files, release()));
    expect(otherRelease.body).toEqual(expect.objectContaining({ uploaded: 2, skipped: 0 }));
  });

  it('environments are isolated: the same release and file are separate maps per environment', async () => {
    const rel = release();
    const files = [{ fileUrl: 'app:///dist/env.js', sourceMap: b64(smallMap()) }];
    expect((await upload(p.keys.skTest, batch(files, rel, 'sandbox'))).body.uploaded).toBe(1);
    const live = await upload(p.keys.skLive, batch(files, rel, 'production'));
    expect(live.body).toEqual(expect.objectContaining({ environment: 'production', uploaded: 1, skipped: 0 }));
    const envs = await t.dataSource.query(`SELECT env FROM source_maps WHERE project_id = $1 AND release = $2 ORDER BY env`, [p.projectId, rel]);
    expect(envs.map((r: { env: string }) => r.env)).toEqual(['production', 'sandbox']);
    // Another project's identical upload is its own as well.
    const other = await createProjectWithApp(t);
    expect((await upload(other.keys.skTest, batch(files, rel))).body.uploaded).toBe(1);
  });

  it('a batch of 100 files is stored in one request, compressed', async () => {
    const rel = release();
    const files = Array.from({ length: 100 }, (_, i) => ({
      fileUrl: `https://cdn.example.com/assets/chunk-${i}.js`,
      sourceMap: b64({ version: 3, sources: [`src/chunk-${i}.ts`], names: [], mappings: 'AAAA;'.repeat(2000), sourcesContent: ['x'.repeat(5000)] }),
    }));
    const res = await upload(p.keys.skTest, batch(files, rel));
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expect.objectContaining({ uploaded: 100, skipped: 0, errors: [] }));
    expect(res.body.results).toHaveLength(100);
    const [sizes] = await t.dataSource.query(
      `SELECT count(*)::int AS n, sum(size_bytes)::bigint AS decoded, sum(octet_length(body))::bigint AS stored FROM source_maps WHERE project_id = $1 AND release = $2`,
      [p.projectId, rel],
    );
    expect(sizes.n).toBe(100);
    expect(Number(sizes.stored)).toBeLessThan(Number(sizes.decoded) / 10);
  });

  describe('symbolicated error reads', () => {
    const source = [
      'export function greetUser(name: string): string {',
      '  const message: string = `hello ${name}`;',
      '  throw new Error(message);',
      '}',
      '',
    ].join('\n');
    const compiled = ts.transpileModule(source, {
      compilerOptions: { target: ts.ScriptTarget.ES2020, module: ts.ModuleKind.CommonJS, sourceMap: true },
      fileName: 'src/greet.ts',
    });
    const prefix = 'app:///dist/';
    const fileUrl = `${prefix}greet.js`;

    /** Runs the compiled file under its runtime URL and returns the frames of the stack it throws. */
    function thrownFrames(): { function: string; filename: string; lineno: number; colno: number; in_app: boolean }[] {
      const exports: Record<string, (name: string) => string> = {};
      vm.runInNewContext(compiled.outputText, { exports }, { filename: fileUrl });
      try {
        exports.greetUser('world');
      } catch (err) {
        return ((err as Error).stack ?? '')
          .split('\n')
          .map((line) => /at (\S+) \((.+):(\d+):(\d+)\)/.exec(line))
          .filter((m): m is RegExpExecArray => m !== null && m[2] === fileUrl)
          .map((m) => ({ function: m[1], filename: m[2], lineno: Number(m[3]), colno: Number(m[4]), in_app: true }));
      }
      throw new Error('greetUser did not throw');
    }

    const sendError = async (key: string, fingerprint: string, properties: Record<string, unknown>, context?: Record<string, unknown>) => {
      const res = await t.http
        .post('/v1/events')
        .set({ Authorization: `Bearer ${key}` })
        .send({
          events: [
            {
              name: 'error.unhandled',
              eventId: `err_${randomUUID()}`,
              timestamp: t.clock.nowMs(),
              level: 'error',
              anonymousId: 'anon_sourcemaps',
              properties: { fingerprint, level: 'error', errorType: 'Error', message: 'hello world', ...properties },
              ...(context ? { context } : {}),
            },
          ],
        });
      expect(res.status).toBe(202);
    };
    const readIssue = (key: string, fingerprint: string) => t.http.get(`/v1/server/errors/issues/${fingerprint}`).set({ Authorization: `Bearer ${key}` });

    it('compiles TypeScript, uploads its map under a URL prefix, and reads the error back at the original .ts line', async () => {
      const rel = release();
      const frames = thrownFrames();
      expect(frames[0]).toEqual(expect.objectContaining({ function: expect.stringContaining('greetUser'), filename: fileUrl, lineno: 6 }));
      const up = await upload(p.keys.skTest, batch([{ fileUrl, sourceMap: b64(compiled.sourceMapText!) }], rel));
      expect(up.body.uploaded).toBe(1);

      const unmapped = { function: 'runMain', filename: 'node:internal/modules/run_main', lineno: 135, colno: 12, in_app: false };
      const fingerprint = 'a1b2c3d4';
      await sendError(
        p.keys.skTest,
        fingerprint,
        {
          stack: 'Error: hello world\n    at greetUser (app:///dist/greet.js:6:11)',
          frames: [...frames, unmapped, 'junk'],
          filename: fileUrl,
          lineno: 6,
          colno: 11,
        },
        { appVersion: rel, os: 'Linux', browser: 'Node', sdkName: '@service/node', sdkVersion: '1.2.0', locale: 'en-GB', nested: { dropped: true } },
      );

      const res = await readIssue(p.keys.skTest, fingerprint.toUpperCase());
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe('private, no-store');
      expect(res.body).toEqual(
        expect.objectContaining({ object: 'error_issue', fingerprint, count: 1, lastEventName: 'error.unhandled', lastLevel: 'error', env: 'sandbox' }),
      );
      const event = res.body.latestEvent;
      expect(event).toEqual(
        expect.objectContaining({
          name: 'error.unhandled',
          message: 'hello world',
          errorType: 'Error',
          release: rel,
          stack: expect.stringContaining('greetUser'),
          context: { appVersion: rel, os: 'Linux', browser: 'Node', sdkName: '@service/node', sdkVersion: '1.2.0', locale: 'en-GB' },
        }),
      );
      expect(event.frames[0]).toEqual({
        ...frames[0],
        original: { source: 'greet.ts', line: 3, column: 9, name: null, contextLine: null },
      });
      expect(source.split('\n')[event.frames[0].original.line - 1]).toContain('throw new Error(message)');
      // Unresolved frames come back exactly as sent.
      expect(event.frames.slice(frames.length)).toEqual([unmapped, 'junk']);
    });

    it('properties.release wins over context.appVersion; a query string still finds the map; names and sourcesContent are returned', async () => {
      const rel = release();
      const map = { ...JSON.parse(compiled.sourceMapText!), sources: ['src/greet.ts'], sourcesContent: [source] };
      // Give the `new` at the throw a name, as a minifier's map would.
      map.names = ['Error'];
      map.mappings = map.mappings.replace('IACxC,MAAM,IAAI', 'IACxC,MAAMA,IAAI');
      const web = 'https://app.example.com/static/greet.js';
      expect((await upload(p.keys.skTest, batch([{ fileUrl: web, sourceMap: b64(map) }], rel))).body.uploaded).toBe(1);
      const fingerprint = 'b1b2c3d4';
      await sendError(
        p.keys.skTest,
        fingerprint,
        { release: rel, frames: [{ function: 'a', filename: `${web}?v=3`, lineno: 6, colno: 11, in_app: true }] },
        { appVersion: 'not-this-one' },
      );
      const event = (await readIssue(p.keys.skTest, fingerprint)).body.latestEvent;
      expect(event.release).toBe(rel);
      expect(event.frames[0].original).toEqual({ source: 'src/greet.ts', line: 3, column: 9, name: 'Error', contextLine: '  throw new Error(message);' });
    });

    it('a replaced map is used at once; another environment, another release or no release stays unresolved', async () => {
      const rel = release();
      const frames = thrownFrames();
      await upload(p.keys.skTest, batch([{ fileUrl, sourceMap: b64(compiled.sourceMapText!) }], rel));
      const fingerprint = 'c1b2c3d4';
      await sendError(p.keys.skTest, fingerprint, { release: rel, frames });
      expect((await readIssue(p.keys.skTest, fingerprint)).body.latestEvent.frames[0].original.source).toBe('greet.ts');

      const renamed = { ...JSON.parse(compiled.sourceMapText!), sources: ['greet-v2.ts'] };
      const replaced = await upload(p.keys.skTest, batch([{ fileUrl, sourceMap: b64(renamed) }], rel));
      expect(replaced.body.results[0].replaced).toBe(true);
      expect((await readIssue(p.keys.skTest, fingerprint)).body.latestEvent.frames[0].original.source).toBe('greet-v2.ts');

      // The production environment has no map for this release: frames stay as sent.
      await sendError(p.keys.skLive, fingerprint, { release: rel, frames });
      const live = (await readIssue(p.keys.skLive, fingerprint)).body.latestEvent;
      expect(live.frames).toEqual(frames);

      const otherRelease = 'd1b2c3d4';
      await sendError(p.keys.skTest, otherRelease, { release: release(), frames });
      expect((await readIssue(p.keys.skTest, otherRelease)).body.latestEvent.frames).toEqual(frames);

      const noRelease = 'e1b2c3d4';
      await sendError(p.keys.skTest, noRelease, { frames });
      const bare = (await readIssue(p.keys.skTest, noRelease)).body.latestEvent;
      expect(bare.release).toBeNull();
      expect(bare.frames).toEqual(frames);
      expect(bare.context).toBeNull();
    });

    it('the issue read: unknown or malformed fingerprint is 400, publishable keys 401, a key without errors:read 403', async () => {
      const unknown = await readIssue(p.keys.skTest, 'ffffffff');
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.code).toBe('invalid_param_value');
      expect((await readIssue(p.keys.skTest, 'nothex!!')).status).toBe(400);
      const pub = await t.http.get('/v1/server/errors/issues/a1b2c3d4').set(keyHeaders(p, p.keys.pubTest));
      expect(pub.status).toBe(401);
      expect(pub.body.error.code).toBe('invalid_api_key');
      const other = await createProjectWithApp(t);
      const rotated = await t.http
        .post(`/admin/v1/keys/${other.keyIds.skTest}/rotate`)
        .set(operatorAuth())
        .send({ scopes: ['revenue:read'] });
      const scoped = await readIssue(rotated.body.key.key, 'a1b2c3d4');
      expect(scoped.status).toBe(403);
      expect(scoped.body.error.code).toBe('insufficient_scope');
      // Another project never sees this project's issue.
      expect((await readIssue(other.keys.skLive, 'a1b2c3d4')).status).toBe(400);
    });
  });
});
