// The operator console: a static bundle under dist/console, served at /console by the API.
// No inline scripts or styles (the console's Content-Security-Policy forbids them): CSS is emitted
// as files and the module preload polyfill (an inline script) is off. Every text file is also
// written brotli- and gzip-compressed next to itself (`.br`, `.gz`): the API sends the variant
// the browser's Accept-Encoding prefers, so nothing is compressed per request.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const root = fileURLToPath(new URL('.', import.meta.url));
const outDir = fileURLToPath(new URL('../../dist/console', import.meta.url));
const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt)$/;

/** Writes `<file>.br` (quality 11) and `<file>.gz` (level 9) beside every text file of the build. */
function precompress() {
  return {
    name: 'console-precompress',
    apply: 'build',
    closeBundle() {
      for (const entry of readdirSync(outDir, { recursive: true, withFileTypes: true })) {
        if (!entry.isFile() || !COMPRESSIBLE.test(entry.name)) continue;
        const file = join(entry.parentPath, entry.name);
        const body = readFileSync(file);
        writeFileSync(
          `${file}.br`,
          brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
        );
        writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  root,
  base: '/console/',
  plugins: [react(), precompress()],
  logLevel: 'warn',
  build: {
    outDir,
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    cssCodeSplit: false,
    sourcemap: false,
  },
});
