import { tracing } from '@opentelemetry/sdk-node';
import { startTracing, stopTracing, type TracingInstrumentation } from '#platform';

/**
 * The modules whose patches are applied by hand: the packages jest loads through its own
 * registry, and Node's `http`/`https` (jest's own copies of them were required before the
 * hook existed).
 */
const RUNNER_LOADED = new Set(['http', 'https', 'pg', 'pg-pool', 'ioredis']);

interface ModulePatch {
  name: string;
  patch?: (exports: unknown, version?: string) => unknown;
  unpatch?: (exports: unknown, version?: string) => void;
}

/** Undoes the patches applied by hand: `http` is shared by every test file of the worker. */
const undo: (() => void)[] = [];
interface ModuleDefinition extends ModulePatch {
  files: ModulePatch[];
}

/**
 * Starts the application's tracing (the same SDK, instrumentations and propagators as
 * production) with an in-memory exporter, before the test builds its application. The
 * instrumentations' require hook sees Node's own module loader, which jest bypasses for
 * packages: their patches are applied here to the copies of `pg`, `pg-pool` and `ioredis`
 * that jest's registry hands the application, and to `http`/`https`. Fastify and undici are
 * instrumented through diagnostics channels, which need nothing of the kind.
 */
export async function startInMemoryTracing(): Promise<tracing.InMemorySpanExporter> {
  const exporter = new tracing.InMemorySpanExporter();
  const instrumentations = await startTracing({ spanProcessors: [new tracing.SimpleSpanProcessor(exporter)] });
  patchRunnerModules(instrumentations);
  return exporter;
}

/** Stops the SDK and removes every patch (in `afterAll`). */
export async function stopInMemoryTracing(): Promise<void> {
  undo.splice(0).forEach((fn) => fn());
  await stopTracing();
}

function patchRunnerModules(instrumentations: TracingInstrumentation[]): void {
  /* eslint-disable @typescript-eslint/no-require-imports -- jest's registry, on purpose */
  const load = (name: string): unknown => {
    try {
      return require(name);
    } catch {
      return undefined; // an optional part (pg's native client) that is not installed
    }
  };
  for (const instrumentation of instrumentations) {
    const definitions = (instrumentation as unknown as { getModuleDefinitions?: () => ModuleDefinition[] }).getModuleDefinitions?.() ?? [];
    for (const definition of definitions.filter((d) => RUNNER_LOADED.has(d.name))) {
      const builtin = definition.name.startsWith('http');
      const version = builtin ? process.versions.node : (load(`${definition.name}/package.json`) as { version?: string } | undefined)?.version;
      const apply = (patch: ModulePatch, exports: unknown) => {
        if (exports === undefined || !patch.patch) return;
        patch.patch(exports, version);
        undo.push(() => patch.unpatch?.(exports, version));
      };
      apply(definition, load(definition.name));
      for (const file of definition.files) apply(file, load(file.name));
    }
  }
  /* eslint-enable @typescript-eslint/no-require-imports */
}
