// `node dist/apps/api/src/openapi-document.js <folder>` (after the build; `npm run openapi:write`):
// writes the OpenAPI documents `/docs/json` serves, without a database or a listener:
// `openapi.json` (the public API: what clients are generated from) and `openapi-operator.json`
// (with the operator API, as served with OPERATOR_TOKEN and DOCS_OPERATOR=true). The Nest
// application is built in preview mode: modules and routes are scanned, no provider is created.
import 'reflect-metadata';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ServiceHttpAdapter, buildOpenApiDocument, createAppLogger, loadConfig, loadSdkVersionsManifest } from '#platform';
import { AppModule } from './app.module.js';
import { DATABASE_SCHEMA } from './database-schema.js';

async function writeDocuments(folder: string | undefined): Promise<void> {
  if (!folder) throw new Error('usage: openapi-document.js <folder>');
  // No database is reached in preview mode; a placeholder URL satisfies production's validation.
  const config = loadConfig({ DATABASE_URL: 'postgres://openapi@127.0.0.1:1/openapi', ...process.env, LOG_LEVEL: 'silent' });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.register({ config, logger: createAppLogger('silent'), sdkVersions: loadSdkVersionsManifest(), schema: DATABASE_SCHEMA }),
    new ServiceHttpAdapter(),
    { preview: true, logger: false, abortOnError: false },
  );
  mkdirSync(folder, { recursive: true });
  for (const [file, operatorApi] of [
    ['openapi.json', false],
    ['openapi-operator.json', true],
  ] as const) {
    // Each document is built from a fresh scan: polishing edits the scanned document in place.
    const document = buildOpenApiDocument(app, { operatorApi });
    writeFileSync(path.join(folder, file), `${JSON.stringify(document, null, 2)}\n`);
    process.stdout.write(`wrote ${path.join(folder, file)} (${Object.keys(document.paths).length} paths)\n`);
  }
}

writeDocuments(process.argv[2]).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`openapi document failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
