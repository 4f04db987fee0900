import { DecodePool } from '../../libs/sourcemaps/src/upload/decode-pool.js';
import type { AppConfig, AppLogger } from '#platform';

describe('source-map decode pool (worker thread)', () => {
  const logger = { warn: () => undefined, error: () => undefined } as unknown as AppLogger;
  let pool: DecodePool;
  beforeAll(() => {
    pool = new DecodePool({ sourcemapDecodeWorkers: 1 } as AppConfig, logger);
  });
  afterAll(() => pool.onModuleDestroy());

  it('answers a body nested thousands of levels deep (only what the rules read comes back)', async () => {
    const deep = '{"k":'.repeat(8_000) + '1' + '}'.repeat(8_000);
    const body = Buffer.from(`{"release":["x"],"environment":${deep},"files":[{"fileUrl":${deep},"sourceMap":"e30="}]}`);
    const result = await pool.decode(body, 100);
    expect(result).toEqual(expect.objectContaining({ ok: true, release: [], environment: {}, files: [{ fileUrl: {} }] }));
    // The pool still serves the next upload.
    expect(await pool.decode(Buffer.from('{"release":"1","environment":"sandbox","files":[]}'), 100)).toEqual(
      expect.objectContaining({ ok: true, release: '1', environment: 'sandbox', decoded: null }),
    );
  }, 30_000);
});
