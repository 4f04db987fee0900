import type { LoggerService } from '@nestjs/common';
import { pino, type DestinationStream, type Logger } from 'pino';
import { errorCodeOf } from '../errors/error-response.js';
import { type HttpRequest, type HttpResponse, originalPathOf } from '../http/http-types.js';
import { requestIdOf } from '../http/request-id.js';
import type { AppConfig } from '../config/app-config.js';
import { activeTraceFields, tracingActive } from '../tracing/tracing.js';

export type AppLogger = Logger;
export const APP_LOGGER = Symbol('APP_LOGGER');

/**
 * JSON lines on stdout. Keys, tokens and bodies are never passed to the logger; the
 * redaction list is a second line of defence should a header object slip through. With
 * tracing on, every line written inside a span carries its `trace_id` and `span_id`.
 */
export function createAppLogger(level: string, destination?: DestinationStream): AppLogger {
  const options = {
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    redact: {
      paths: [
        'headers.authorization',
        'headers["service-api-key"]',
        'headers["crossdeck-api-key"]',
        '*.authorization',
        '*["service-api-key"]',
        '*["crossdeck-api-key"]',
        'key',
        'token',
        'idToken',
        '*.idToken',
        'secret',
        '*.secret',
      ],
      censor: '[redacted]',
    },
    ...(tracingActive() ? { mixin: activeTraceFields } : {}),
  };
  return destination ? pino(options, destination) : pino(options);
}

const NEST_CHATTY_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication']);

/** Routes Nest's own log lines into the same JSON logger. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: AppLogger) {}
  log(message: unknown, context?: string): void {
    // Start-up is a handful of info lines: Nest's per-module and per-route lines go to debug.
    if (context && NEST_CHATTY_CONTEXTS.has(context)) this.logger.debug({ context }, String(message));
    else this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}

/** One access-log line per request: method, path without query string, status, duration, and the error code of a 4xx/5xx. */
export function logAccess(logger: AppLogger, req: HttpRequest, res: HttpResponse): void {
  const line: Record<string, unknown> = {
    requestId: requestIdOf(req),
    method: req.method,
    path: originalPathOf(req),
    status: res.statusCode,
    ms: Math.round(res.elapsedTime * 10) / 10,
  };
  if (res.statusCode >= 400) line.code = errorCodeOf(res) ?? 'unknown';
  logger.info(line, 'request');
}

/** The fields of the "API listening" line: the docs path only where `/docs` is served (DOCS_ENABLED). */
export function listeningLogFields(
  config: Pick<AppConfig, 'port' | 'host' | 'docsEnabled'>,
  metricsPort: number | null,
): { port: number; host: string; docs?: string; metricsPort: number | null } {
  return { port: config.port, host: config.host, ...(config.docsEnabled ? { docs: '/docs' } : {}), metricsPort };
}
