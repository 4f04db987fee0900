import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The page at /docs: Redoc from a bundle served by the service itself (no CDN, telemetry off). */
export interface DocsReply {
  header(name: string, value: string): unknown;
  type(value: string): unknown;
  status(code: number): unknown;
  send(body: string | Buffer): unknown;
}

/** Where the Redoc bundle is: copied into dist/ by the build, or straight from the dev dependency (tests, `npm start`). */
export const REDOC_BUNDLE_PATHS = ['dist/docs/redoc.standalone.js', 'node_modules/@redocly/cli/lib/chunks/redoc.standalone.js'];

let redocBundleCache: Buffer | null | undefined;
export function redocBundle(): Buffer | null {
  if (redocBundleCache === undefined) {
    const found = REDOC_BUNDLE_PATHS.map((file) => resolve(file)).find((file) => existsSync(file));
    redocBundleCache = found ? readFileSync(found) : null;
  }
  return redocBundleCache;
}

export const REDOC_INIT = `import { init } from './redoc.standalone.js';
init('./json', { disableTelemetry: true }, document.getElementById('redoc'));
`;

export function docsPage(title: string): string {
  const escaped = title.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escaped}</title>
<base href="/docs/">
</head>
<body>
<div id="redoc"></div>
<script type="module" src="./redoc-init.js"></script>
<noscript>The API reference needs JavaScript; the document itself is at <a href="./json">/docs/json</a> and <a href="./yaml">/docs/yaml</a>.</noscript>
</body>
</html>
`;
}
