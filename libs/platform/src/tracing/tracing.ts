import { ROOT_CONTEXT, SpanKind, context, propagation, trace } from '@opentelemetry/api';
import type { Instrumentation } from '@opentelemetry/instrumentation';
import type { tracing as sdkTracing } from '@opentelemetry/sdk-node';

export type TracingInstrumentation = Instrumentation;

/**
 * OpenTelemetry tracing, on only when an OTLP endpoint is configured. The SDK and the
 * instrumentations are imported here lazily: with tracing off the process loads none of them
 * and registers no module hook, so it costs nothing. Everything this file imports statically
 * (`@opentelemetry/api` alone) is small and patches nothing.
 *
 * Instrumentations: HTTP in and out (`node:http`, used by Fastify and stripe), Fastify's
 * request lifecycle and route handlers (`@fastify/otel`, the layer Nest routes through), `pg`,
 * `ioredis`, and undici (Node's `fetch`: the Android publisher client, its token exchange and
 * Apple's library). W3C trace context (`traceparent`, `tracestate`) and baggage are accepted
 * on incoming requests and injected into every outgoing one.
 */

/** Process-wide state, on `globalThis` so that every copy of this module sees the same SDK. */
const STATE = Symbol.for('entitlements-service.tracing');
interface TracingState {
  shutdown: () => Promise<void>;
}
type WithState = { [STATE]?: TracingState };

/**
 * The CommonJS modules the instrumentations patch when they are first required. The preload
 * requires them right after the SDK starts (see apps/api/src/tracing.ts).
 */
export const INSTRUMENTED_PACKAGES = ['node:http', 'node:https', 'pg', 'ioredis'] as const;

/** Paths of probes and scrapes: answered often and of no interest in a trace. */
const UNTRACED_PATHS = new Set(['/v1/healthz', '/v1/readyz', '/metrics']);

/** True when the environment asks for traces: an OTLP endpoint is set and the SDK is not disabled. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return Boolean(endpoint && endpoint.trim()) && env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true';
}

/** True once `startTracing` has started the SDK in this process. */
export function tracingActive(): boolean {
  return (globalThis as WithState)[STATE] !== undefined;
}

export interface StartTracingOptions {
  /**
   * Span processors instead of the OTLP exporter the SDK builds from the `OTEL_*` variables
   * (tests pass an in-memory exporter).
   */
  spanProcessors?: sdkTracing.SpanProcessor[];
  /** Service name when `OTEL_SERVICE_NAME` is not set (default `SERVICE_NAME`, else `entitlements`). */
  serviceName?: string;
}

/**
 * Starts the SDK with the instrumentations. It must run before the modules it instruments are
 * loaded: the API's start scripts preload `apps/api/src/tracing.js`, which calls this.
 * Returns the instrumentations (tests apply them to modules their runner loads itself);
 * starting twice returns nothing more.
 */
export async function startTracing(options: StartTracingOptions = {}): Promise<TracingInstrumentation[]> {
  if (tracingActive()) return [];
  // Traces only: metrics stay on the Prometheus endpoint and logs on stdout, unless asked for.
  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  const [{ NodeSDK }, { HttpInstrumentation }, { UndiciInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }, { FastifyOtelInstrumentation }] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-undici'),
      import('@opentelemetry/instrumentation-pg'),
      import('@opentelemetry/instrumentation-ioredis'),
      import('@fastify/otel'),
    ]);
  const instrumentations = [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]!),
    }),
    // Fastify announces each new instance on a diagnostics channel: the plugin is added to
    // the instance Nest creates without touching how the application is built. One span for
    // the request and one for the route handler; none per lifecycle hook (a dozen per request).
    new FastifyOtelInstrumentation({ registerOnInitialization: true, instrumentHooks: false }),
    new PgInstrumentation({ requireParentSpan: true }),
    new IORedisInstrumentation({ requireParentSpan: true }),
    new UndiciInstrumentation(),
  ];
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME || options.serviceName || process.env.SERVICE_NAME || 'entitlements',
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors } : {}),
    instrumentations,
  });
  sdk.start();
  (globalThis as WithState)[STATE] = {
    shutdown: async () => {
      for (const instrumentation of instrumentations) instrumentation.disable();
      await sdk.shutdown();
    },
  };
  return instrumentations;
}

/** Flushes the spans still buffered, stops the SDK and the instrumentations (on shutdown); a no-op when tracing is off. */
export async function stopTracing(): Promise<void> {
  const state = (globalThis as WithState)[STATE];
  if (!state) return;
  delete (globalThis as WithState)[STATE];
  await state.shutdown();
}

/** The active span's ids for a log line, or nothing outside a sampled span. */
export function activeTraceFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  // Unsampled spans are not exported: their ids would lead nowhere, except the incoming trace id.
  return traceFlags & 1 ? { trace_id: traceId, span_id: spanId } : { trace_id: traceId };
}

/** A W3C trace context as carried between processes. */
export interface TraceHeaders {
  traceparent: string | null;
  tracestate: string | null;
}

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The W3C `traceparent` / `tracestate` of the active span, for work that continues later
 * elsewhere (an outbound webhook delivered after the change's commit); nulls when tracing is
 * off or no span is active.
 */
export function currentTraceHeaders(): TraceHeaders {
  if (!trace.getSpan(context.active())) return { traceparent: null, tracestate: null };
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  const traceparent = carrier.traceparent && TRACEPARENT.test(carrier.traceparent) ? carrier.traceparent : null;
  const tracestate = traceparent && carrier.tracestate ? carrier.tracestate.slice(0, 512) : null;
  return { traceparent, tracestate };
}

/**
 * Runs `fn` in a span named `name` whose parent is the given trace context (kept from an
 * earlier request), so that the outgoing calls it makes continue that trace; with tracing off
 * or no stored context it just runs `fn`.
 */
export async function withRemoteParent<T>(name: string, headers: TraceHeaders, attributes: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  if (!tracingActive() || !headers.traceparent) return fn();
  const carrier: Record<string, string> = { traceparent: headers.traceparent, ...(headers.tracestate ? { tracestate: headers.tracestate } : {}) };
  const parent = propagation.extract(ROOT_CONTEXT, carrier);
  const tracer = trace.getTracer('entitlements-service');
  return tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent, async (span) => {
    try {
      return await fn();
    } finally {
      span.end();
    }
  });
}
