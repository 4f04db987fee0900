import { createHash } from 'node:crypto';
import { brotliCompressSync } from 'node:zlib';
import type { AppLogger, TenantScope } from '#platform';
import type { SourceMapKey, SourceMapStore, StoredSourceMap, StoredSourceMapInput } from '../../libs/sourcemaps/src/storage/source-map-store.js';
import { LruCache } from '../../libs/sourcemaps/src/symbolication/lru-cache.js';
import { parseSourceMapText } from '../../libs/sourcemaps/src/symbolication/source-map-document.js';
import { lineOf } from '../../libs/sourcemaps/src/symbolication/source-map-resolver.js';
import { SourceMapSymbolicator, withoutQuery } from '../../libs/sourcemaps/src/symbolication/source-map-symbolicator.service.js';
import { MAX_SOURCEMAP_BYTES, checkFileUrl, decodeSourceMap, fileUrlHash } from '../../libs/sourcemaps/src/upload/sourcemap-upload.rules.js';
import { sanitizeContext } from '../../libs/telemetry/src/ingest/event-batch.validator.js';
import { INSERT_PARAM_TYPES, buildInsertStatement } from '../../libs/telemetry/src/storage/event-insert.sql.js';
import { framePosition, releaseOf } from '../../libs/telemetry/src/issues/error-issue-detail.service.js';
import { testScope } from '../support/scopes.js';
import { asText, decodeBinaryArray } from '../support/pg-binary-array.js';

const scope: TenantScope = testScope('proj_1', 'sandbox');
const RELEASE = '1.2.3';
const sha256 = (value: string | Buffer) => createHash('sha256').update(value).digest('hex');

/** The SourceMapStore contract in memory (the PostgreSQL one is covered by the e2e spec). */
class MemoryStore implements SourceMapStore {
  readonly maps = new Map<string, StoredSourceMap>();
  gets = 0;
  private key = (s: TenantScope, release: string, hash: string) => `${s.projectId}|${s.env}|${release}|${hash}`;

  async digests(s: TenantScope, release: string, hashes: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const hash of hashes) {
      const found = this.maps.get(this.key(s, release, hash));
      if (found) out.set(hash, found.contentSha256);
    }
    return out;
  }
  async put(s: TenantScope, map: StoredSourceMapInput): Promise<'inserted' | 'replaced' | 'unchanged'> {
    const key = this.key(s, map.release, map.fileUrlHash);
    const previous = this.maps.get(key);
    if (previous?.contentSha256 === map.contentSha256) return 'unchanged';
    this.maps.set(key, {
      release: map.release,
      fileUrlHash: map.fileUrlHash,
      contentSha256: map.contentSha256,
      sizeBytes: map.sizeBytes,
      encoding: 'br',
      body: map.body,
    });
    return previous ? 'replaced' : 'inserted';
  }
  async get(s: TenantScope, key: SourceMapKey): Promise<StoredSourceMap | null> {
    this.gets++;
    return this.maps.get(this.key(s, key.release, key.fileUrlHash)) ?? null;
  }
  /** Stores `text` as the upload path does (Brotli); `sizeBytes` can be overridden to simulate older rows. */
  async store(fileUrl: string, text: string, sizeBytes = Buffer.byteLength(text), release = RELEASE): Promise<void> {
    const bytes = Buffer.from(text);
    await this.put(scope, {
      release,
      fileUrl,
      fileUrlHash: fileUrlHash(fileUrl),
      contentSha256: sha256(bytes),
      sizeBytes,
      encoding: 'br',
      body: brotliCompressSync(bytes),
    });
  }
}

function logger(): AppLogger & { warn: jest.Mock } {
  return { warn: jest.fn(), info: jest.fn(), debug: jest.fn(), error: jest.fn() } as unknown as AppLogger & { warn: jest.Mock };
}

describe('source maps: resolver (SourceMapSymbolicator over a SourceMapStore)', () => {
  let store: MemoryStore;
  let log: ReturnType<typeof logger>;
  let symbolicator: SourceMapSymbolicator;

  beforeEach(() => {
    store = new MemoryStore();
    log = logger();
    symbolicator = new SourceMapSymbolicator(store, log);
  });

  it('resolves an index map with sections, each section at its own offset', async () => {
    const indexMap = {
      version: 3,
      file: 'bundle.js',
      sections: [
        { offset: { line: 0, column: 0 }, map: { version: 3, sources: ['a.ts'], names: ['alpha'], mappings: 'AAAAA' } },
        { offset: { line: 10, column: 0 }, map: { version: 3, sources: ['b.ts'], names: ['bar'], mappings: 'AACEA' } },
        { offset: { line: 20, column: 5 }, map: { version: 3, sources: ['c.ts'], names: [], mappings: 'AAAA' } },
      ],
    };
    await store.store('https://cdn.example.com/bundle.js', JSON.stringify(indexMap));
    const [a, b, c, outside] = await symbolicator.symbolicate(scope, RELEASE, [
      { fileUrl: 'https://cdn.example.com/bundle.js', line: 1, column: 1 },
      { fileUrl: 'https://cdn.example.com/bundle.js', line: 11, column: 3 },
      { fileUrl: 'https://cdn.example.com/bundle.js', line: 21, column: 6 },
      { fileUrl: 'https://cdn.example.com/bundle.js', line: 15, column: 1 },
    ]);
    expect(a).toEqual({ source: 'a.ts', line: 1, column: 1, name: 'alpha', contextLine: null });
    expect(b).toEqual({ source: 'b.ts', line: 2, column: 3, name: 'bar', contextLine: null });
    expect(c).toEqual({ source: 'c.ts', line: 1, column: 1, name: null, contextLine: null });
    expect(outside).toBeNull();
  });

  it('returns the original line from sourcesContent (CRLF trimmed), and honours sourceRoot', async () => {
    const map = {
      version: 3,
      sourceRoot: 'webpack://app/',
      sources: ['src/x.ts'],
      sourcesContent: ['line one\nline two\r\nline three'],
      names: [],
      mappings: 'AAAA;AACA;AACE',
    };
    await store.store('app:///dist/x.js', JSON.stringify(map));
    const [first, second, third] = await symbolicator.symbolicate(scope, RELEASE, [
      { fileUrl: 'app:///dist/x.js', line: 1, column: 1 },
      { fileUrl: 'app:///dist/x.js', line: 2, column: 40 },
      { fileUrl: 'app:///dist/x.js', line: 3, column: 1 },
    ]);
    expect(first).toEqual({ source: 'webpack://app/src/x.ts', line: 1, column: 1, name: null, contextLine: 'line one' });
    expect(second).toEqual(expect.objectContaining({ line: 2, column: 1, contextLine: 'line two' }));
    expect(third).toEqual(expect.objectContaining({ line: 3, column: 3, contextLine: 'line three' }));
    expect(lineOf('a\nb', 3)).toBeNull();
  });

  it('missing mappings stay unresolved: an unmapped line, a segment without source, beyond the file, bad positions, no map', async () => {
    // Line 1: nothing; line 2: a generated-column-only segment; line 3: a real mapping at column 4.
    const map = { version: 3, sources: ['m.ts'], names: [], mappings: ';A;IAAA' };
    await store.store('app:///m.js', JSON.stringify(map));
    const answers = await symbolicator.symbolicate(scope, RELEASE, [
      { fileUrl: 'app:///m.js', line: 1, column: 1 },
      { fileUrl: 'app:///m.js', line: 2, column: 1 },
      { fileUrl: 'app:///m.js', line: 3, column: 2 },
      { fileUrl: 'app:///m.js', line: 3, column: 9 },
      { fileUrl: 'app:///m.js', line: 99, column: 1 },
      { fileUrl: 'app:///m.js', line: 0, column: 1 },
      { fileUrl: 'app:///m.js', line: 3, column: 0 },
      { fileUrl: 'app:///other.js', line: 3, column: 9 },
    ]);
    expect(answers).toEqual([null, null, null, { source: 'm.ts', line: 1, column: 1, name: null, contextLine: null }, null, null, null, null]);
    expect(await symbolicator.symbolicate(scope, 'not a release!', [{ fileUrl: 'app:///m.js', line: 3, column: 9 }])).toEqual([null]);
    expect(await symbolicator.symbolicate({ ...scope, env: 'production' }, RELEASE, [{ fileUrl: 'app:///m.js', line: 3, column: 9 }])).toEqual([null]);
  });

  it('a map over the size limit is never parsed (stored size or decompressed size), and the upload refuses it', async () => {
    const small = new SourceMapSymbolicator(store, log, { maxMapBytes: 200 });
    const big = JSON.stringify({ version: 3, sources: ['big.ts'], names: [], mappings: 'AAAA', sourcesContent: ['x'.repeat(500)] });
    await store.store('app:///big.js', big);
    // A row whose recorded size is wrong: the decompression itself is capped.
    await store.store('app:///lying.js', big, 10);
    const answers = await small.symbolicate(scope, RELEASE, [
      { fileUrl: 'app:///big.js', line: 1, column: 1 },
      { fileUrl: 'app:///lying.js', line: 1, column: 1 },
    ]);
    expect(answers).toEqual([null, null]);
    expect(log.warn).toHaveBeenCalledTimes(2);
    // The default limit resolves the same map.
    expect((await symbolicator.symbolicate(scope, RELEASE, [{ fileUrl: 'app:///big.js', line: 1, column: 1 }]))[0]).toEqual(
      expect.objectContaining({ source: 'big.ts' }),
    );

    expect(decodeSourceMap(0, Buffer.from(big).toString('base64'), 200)).toEqual(expect.objectContaining({ ok: false, code: 'sourcemap_too_large' }));
    expect(decodeSourceMap(0, 'A'.repeat(Math.ceil((MAX_SOURCEMAP_BYTES * 4) / 3) + 8))).toEqual(
      expect.objectContaining({ ok: false, code: 'sourcemap_too_large' }),
    );
    expect(decodeSourceMap(0, Buffer.from(big).toString('base64'))).toEqual(expect.objectContaining({ ok: true }));
  });

  it('parses each map once, reloads it when its digest changes, and remembers broken maps', async () => {
    await store.store('app:///c.js', JSON.stringify({ version: 3, sources: ['one.ts'], names: [], mappings: 'AAAA' }));
    const at = [{ fileUrl: 'app:///c.js', line: 1, column: 1 }];
    expect((await symbolicator.symbolicate(scope, RELEASE, at))[0]?.source).toBe('one.ts');
    expect((await symbolicator.symbolicate(scope, RELEASE, at))[0]?.source).toBe('one.ts');
    expect(store.gets).toBe(1);
    await store.store('app:///c.js', JSON.stringify({ version: 3, sources: ['two.ts'], names: [], mappings: 'AAAA' }));
    expect((await symbolicator.symbolicate(scope, RELEASE, at))[0]?.source).toBe('two.ts');
    expect(store.gets).toBe(2);

    await store.store('app:///broken.js', '{"version":3,"sources":["b.ts"],"mappings":"A!!"}');
    const broken = [{ fileUrl: 'app:///broken.js', line: 1, column: 1 }];
    expect(await symbolicator.symbolicate(scope, RELEASE, broken)).toEqual([null]);
    expect(await symbolicator.symbolicate(scope, RELEASE, broken)).toEqual([null]);
    expect(store.gets).toBe(3);
    expect(symbolicator.cacheStats().maps).toBe(2);
  });

  it('finds a map by the file URL without its query string or fragment', async () => {
    await store.store('https://app.example.com/main.js', JSON.stringify({ version: 3, sources: ['main.ts'], names: [], mappings: 'AAAA' }));
    const [found] = await symbolicator.symbolicate(scope, RELEASE, [{ fileUrl: 'https://app.example.com/main.js?v=42#top', line: 1, column: 1 }]);
    expect(found?.source).toBe('main.ts');
    expect(withoutQuery('app:///a.js')).toBeNull();
    expect(withoutQuery('app:///a.js#x')).toBe('app:///a.js');
  });

  it('loads at most maxMapsPerCall distinct maps in one call', async () => {
    const limited = new SourceMapSymbolicator(store, log, { maxMapsPerCall: 2 });
    for (const name of ['a', 'b', 'c'])
      await store.store(`app:///${name}.js`, JSON.stringify({ version: 3, sources: [`${name}.ts`], names: [], mappings: 'AAAA' }));
    const answers = await limited.symbolicate(
      scope,
      RELEASE,
      ['a', 'b', 'c', 'a'].map((name) => ({ fileUrl: `app:///${name}.js`, line: 1, column: 1 })),
    );
    expect(answers.map((a) => a?.source ?? null)).toEqual(['a.ts', 'b.ts', null, 'a.ts']);
  });
});

describe('source maps: bounded LRU cache', () => {
  it('evicts the least recently used entry by count and by cost', () => {
    const cache = new LruCache<string, number>(2, 100);
    cache.set('a', 1, 10);
    cache.set('b', 2, 10);
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3, 10);
    expect(cache.get('b')).toBeUndefined();
    expect([cache.get('a'), cache.get('c')]).toEqual([1, 3]);
    cache.set('d', 4, 85);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.cost).toBe(95);
    cache.set('huge', 5, 101);
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.size).toBe(2);
  });
});

describe('source maps: upload rules', () => {
  it('file URLs need a scheme://', () => {
    for (const good of ['https://app.example.com/static/main.js', 'app:///dist/index.js', 'webpack://app/./src/a.ts', 'file:///srv/app.js']) {
      expect(checkFileUrl(0, { fileUrl: good })).toBeNull();
    }
    for (const bad of ['main.js', '/static/main.js', 'https://', 'https://a b.js', '://x', 'https://x\n', 'x'.repeat(3000), 42, null]) {
      expect(checkFileUrl(0, { fileUrl: bad })?.code).toBe('invalid_runtime_url');
    }
    expect(checkFileUrl(3, 'nope')?.message).toContain('files[3]');
  });

  it('maps: missing, not base64, not JSON, not version 3, accepted forms', () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    const map = JSON.stringify({ version: 3, sources: ['a.ts'], names: [], mappings: 'AAAA' });
    expect(decodeSourceMap(0, undefined)).toEqual(expect.objectContaining({ code: 'missing_sourcemap' }));
    expect(decodeSourceMap(0, '')).toEqual(expect.objectContaining({ code: 'missing_sourcemap' }));
    expect(decodeSourceMap(0, 12)).toEqual(expect.objectContaining({ code: 'invalid_sourcemap' }));
    expect(decodeSourceMap(0, 'not*base64')).toEqual(expect.objectContaining({ code: 'invalid_sourcemap', message: expect.stringContaining('base64') }));
    expect(decodeSourceMap(0, b64('{nope'))).toEqual(expect.objectContaining({ code: 'invalid_sourcemap', message: expect.stringContaining('JSON') }));
    expect(decodeSourceMap(0, b64('{"version":2,"sources":[],"mappings":""}'))).toEqual(expect.objectContaining({ code: 'invalid_sourcemap' }));
    expect(decodeSourceMap(0, b64('[3]'))).toEqual(expect.objectContaining({ code: 'invalid_sourcemap' }));
    // Wrapped base64 (the `base64` tool's 76-column lines) and URL-safe base64 are accepted.
    const wrapped = b64(map).replace(/(.{76})/g, '$1\n');
    expect(decodeSourceMap(0, wrapped)).toEqual(expect.objectContaining({ ok: true }));
    expect(decodeSourceMap(0, b64(map).replace(/\+/g, '-').replace(/\//g, '_'))).toEqual(expect.objectContaining({ ok: true }));
  });

  it('map documents: XSSI prefix and BOM tolerated, url sections and bad mappings refused', () => {
    expect(parseSourceMapText(`)]}'\n{"version":3,"sources":[],"mappings":""}`).ok).toBe(true);
    expect(parseSourceMapText(`\ufeff{"version":3,"sources":[null],"mappings":";;"}`).ok).toBe(true);
    expect(parseSourceMapText('{"version":3,"sections":[{"offset":{"line":0,"column":0},"url":"a.map"}]}')).toEqual({
      ok: false,
      reason: expect.stringContaining('url sections'),
    });
    expect(parseSourceMapText('{"version":3,"sections":[{"offset":{"line":-1,"column":0},"map":{}}]}').ok).toBe(false);
    expect(parseSourceMapText('{"version":3,"sources":["a"],"mappings":"A A"}').ok).toBe(false);
    expect(parseSourceMapText('{"version":3,"sources":["a"],"names":[1],"mappings":"AAAA"}').ok).toBe(false);
  });
});

describe('telemetry: context and error-read helpers', () => {
  it('context keeps string values only, bounded (32 entries, keys 1..64, values up to 256 chars)', () => {
    expect(sanitizeContext(undefined)).toEqual({ json: null, dropped: 0 });
    expect(sanitizeContext('Linux')).toEqual({ json: null, dropped: 1 });
    expect(sanitizeContext({ appVersion: '1.0', os: 'Linux' })).toEqual({ json: '{"appVersion":"1.0","os":"Linux"}', dropped: 0 });
    const messy = { appVersion: '1.0', n: 3, nested: { a: 'b' }, long: 'x'.repeat(257), ['k'.repeat(65)]: 'v', '': 'empty', ok: 'y'.repeat(256) };
    const cleaned = sanitizeContext(messy);
    expect(JSON.parse(cleaned.json!)).toEqual({ appVersion: '1.0', ok: 'y'.repeat(256) });
    expect(cleaned.dropped).toBe(5);
    // Values PostgreSQL cannot store (NUL, a lone surrogate) are dropped, the rest kept.
    expect(sanitizeContext({ os: 'Linux', bad: 'a\u0000b', lone: '\ud800x' })).toEqual({ json: '{"os":"Linux"}', dropped: 2 });
    expect(sanitizeContext({ emoji: '😀' })).toEqual({ json: '{"emoji":"😀"}', dropped: 0 });
    expect(sanitizeContext({})).toEqual({ json: null, dropped: 0 });
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, 'v']));
    const capped = sanitizeContext(many);
    expect(Object.keys(JSON.parse(capped.json!))).toHaveLength(32);
    expect(capped.dropped).toBe(8);
  });

  it('the insert parameters carry context only when there is one', () => {
    const row = {
      eventId: 'e1',
      clientDay: 1,
      name: 'error.unhandled',
      timestampMs: 1,
      clientTimestampMs: null,
      level: 'error',
      fingerprint: 'abcdef01',
      propertiesJson: null,
      tagsJson: null,
      categoryTagsJson: null,
      developerUserId: null,
      anonymousId: 'a',
      serviceCustomerId: null,
    };
    const meta = { projectId: 'p', env: 'sandbox', appId: 'a', receivedAtMs: 1, sdkName: null, sdkVersion: null };
    const { params } = buildInsertStatement(meta, [
      { ...row, contextJson: '{"appVersion":"1.0"}' },
      { ...row, eventId: 'e2' },
    ]);
    // The context column is the eleventh event column (json[]), after the seven leading parameters.
    expect(INSERT_PARAM_TYPES[17]).toBe('json[]');
    expect(decodeBinaryArray(params[17] as Buffer).values.map(asText)).toEqual(['{"appVersion":"1.0"}', null]);
  });

  it('release: properties.release, else context.appVersion; frame positions need file, line and column', () => {
    expect(releaseOf({ release: '2.0' }, { appVersion: '1.0' })).toBe('2.0');
    expect(releaseOf({ release: '' }, { appVersion: '1.0' })).toBe('1.0');
    expect(releaseOf({ release: 5 }, null)).toBeNull();
    expect(framePosition({ filename: 'app:///a.js', lineno: 2, colno: 7 })).toEqual({ fileUrl: 'app:///a.js', line: 2, column: 7 });
    expect(framePosition({ filename: 'app:///a.js', lineno: 2 })).toBeNull();
    expect(framePosition({ filename: 'app:///a.js', lineno: 0, colno: 1 })).toBeNull();
    expect(framePosition('at a.js:1:1')).toBeNull();
  });
});
