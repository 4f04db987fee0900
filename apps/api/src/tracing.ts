/**
 * Preloaded before the application (`node --import ./dist/apps/api/src/tracing.js
 * dist/apps/api/src/main.js`, as the start scripts and the image do). With
 * `OTEL_EXPORTER_OTLP_ENDPOINT` unset it does nothing: no SDK is loaded and no module is
 * patched. When set, it starts the SDK and then loads, through `require`, the CommonJS
 * packages the instrumentations patch (`pg`, `ioredis`, `node:http`, `node:https`): the
 * instrumentations' require hook patches their exports in place, and the application's later
 * `import` of them gets the same, patched, objects from the CommonJS cache (`pg`'s ES module
 * entry re-exports its CommonJS one). So no ESM loader hook is registered: import-in-the-middle
 * would put a loader thread in front of every one of the application's imports, on Node 20 and
 * 24 alike, for two packages that are CommonJS anyway. Fastify and undici (`fetch`) are
 * instrumented through diagnostics channels, which need no hook either. This file imports
 * nothing of the application but the tracing module itself.
 */
import { createRequire } from 'node:module';
// The preload must load the tracing module alone: the platform's index would import `pg` and
// `ioredis` before the instrumentations are registered.
// eslint-disable-next-line contexts/import-by-index
import { INSTRUMENTED_PACKAGES, startTracing, tracingRequested } from '../../../libs/platform/src/tracing/tracing.js';

if (tracingRequested()) {
  await startTracing();
  const require = createRequire(import.meta.url);
  for (const name of INSTRUMENTED_PACKAGES) require(name);
}
