import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * The console's files over HTTP: precompressed variants (`.br`, `.gz`) chosen by
 * Accept-Encoding with `Vary: Accept-Encoding`, the same bytes once decoded, and the icon.
 * Raw node:http requests: no client decompresses the answer before it is checked.
 */
describe('console: compressed assets and the icon', () => {
  const token = `op_console_${randomBytes(12).toString('hex')}`;
  const script = Buffer.from(`export const lines = ${JSON.stringify(Array.from({ length: 400 }, (_, i) => `line ${i} of the console bundle`))};\n`);
  const icon = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0b5cad"/></svg>\n');
  let t: TestApp;
  let dir: string;
  let port = 0;

  const get = (path: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-static-'));
    mkdirSync(join(dir, 'assets'));
    const index = Buffer.from('<!doctype html><html><head><link rel="icon" href="/console/favicon.svg"></head><body></body></html>');
    writeFileSync(join(dir, 'index.html'), index);
    writeFileSync(join(dir, 'index.html.br'), brotliCompressSync(index));
    writeFileSync(join(dir, 'index.html.gz'), gzipSync(index));
    writeFileSync(join(dir, 'assets', 'app-1a2b3c.js'), script);
    writeFileSync(join(dir, 'assets', 'app-1a2b3c.js.br'), brotliCompressSync(script));
    writeFileSync(join(dir, 'assets', 'app-1a2b3c.js.gz'), gzipSync(script));
    writeFileSync(join(dir, 'assets', 'plain-4d5e6f.js'), 'console.log(1);');
    writeFileSync(join(dir, 'favicon.svg'), icon);
    t = await createTestApp({ OPERATOR_TOKEN: token, CONSOLE_DIR: dir });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the brotli file to a browser that accepts br, the same bytes once decoded', async () => {
    const res = await get('/console/assets/app-1a2b3c.js', { 'Accept-Encoding': 'gzip, deflate, br, zstd' });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe('br');
    expect(res.headers.vary).toMatch(/Accept-Encoding/);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(Number(res.headers['content-length'])).toBe(res.body.length);
    expect(res.body.length).toBeLessThan(script.length / 4);
    expect(brotliDecompressSync(res.body).equals(script)).toBe(true);
  });

  it('sends the gzip file when br is not accepted (or refused with q=0)', async () => {
    for (const accept of ['gzip, deflate', 'br;q=0, gzip', 'x-gzip']) {
      const res = await get('/console/assets/app-1a2b3c.js', { 'Accept-Encoding': accept });
      expect([accept, res.headers['content-encoding']]).toEqual([accept, 'gzip']);
      expect(res.headers.vary).toMatch(/Accept-Encoding/);
      expect(gunzipSync(res.body).equals(script)).toBe(true);
    }
  });

  it('sends the file as it is without Accept-Encoding or with identity only, still varying by it', async () => {
    for (const headers of [{}, { 'Accept-Encoding': 'identity' }, { 'Accept-Encoding': 'gzip;q=0, br;q=0' }] as Record<string, string>[]) {
      const res = await get('/console/assets/app-1a2b3c.js', headers);
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers.vary).toMatch(/Accept-Encoding/);
      expect(res.body.equals(script)).toBe(true);
    }
  });

  it('compresses index.html the same way (no-store), and leaves a file without variants alone', async () => {
    const page = await get('/console/customers/cdcust_1', { 'Accept-Encoding': 'br' });
    expect(page.headers['content-encoding']).toBe('br');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(brotliDecompressSync(page.body).toString()).toContain('/console/favicon.svg');
    const plain = await get('/console/assets/plain-4d5e6f.js', { 'Accept-Encoding': 'gzip, br' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary ?? '').not.toMatch(/Accept-Encoding/);
    expect(plain.body.toString()).toBe('console.log(1);');
  });

  it('serves the icon at /console/favicon.svg and /console/favicon.ico', async () => {
    for (const path of ['/console/favicon.svg', '/console/favicon.ico']) {
      const res = await get(path);
      expect([path, res.status, res.headers['content-type']]).toEqual([path, 200, 'image/svg+xml']);
      expect(res.body.equals(icon)).toBe(true);
    }
  });
});
