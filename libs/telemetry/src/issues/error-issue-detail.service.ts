import { Inject, Injectable } from '@nestjs/common';
import { ApiError, type TenantScope } from '#platform';
import { ERROR_FRAME_SYMBOLICATOR, type FramePosition, type FrameSymbolicator } from './frame-symbolicator.js';
import { ErrorIssuesRepository, type LatestErrorEventRow } from './error-issues.repository.js';
import type { ErrorEventView, ErrorFrameView, ErrorIssueDetailView } from './error-issues.views.js';

const seconds = (ms: number) => Math.floor(ms / 1000);

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The release of an error event: `properties.release`, else `context.appVersion`. */
export function releaseOf(properties: Record<string, unknown>, context: Record<string, unknown> | null): string | null {
  const fromProperties = stringOrNull(properties.release);
  if (fromProperties !== null && fromProperties.length > 0) return fromProperties;
  const fromContext = stringOrNull(context?.appVersion);
  return fromContext !== null && fromContext.length > 0 ? fromContext : null;
}

/** The minified position of a frame, when it names a file and a positive line and column. */
export function framePosition(frame: unknown): FramePosition | null {
  if (!isObject(frame)) return null;
  const { filename, lineno, colno } = frame;
  if (typeof filename !== 'string' || filename.length === 0) return null;
  if (typeof lineno !== 'number' || !Number.isSafeInteger(lineno) || lineno < 1) return null;
  if (typeof colno !== 'number' || !Number.isSafeInteger(colno) || colno < 1) return null;
  return { fileUrl: filename, line: lineno, column: colno };
}

/**
 * GET /v1/server/errors/issues/{fingerprint}: the issue's counters and its latest event,
 * whose frames are symbolicated now, on read (ingestion only stores them).
 */
@Injectable()
export class ErrorIssueDetailService {
  constructor(
    private readonly issues: ErrorIssuesRepository,
    @Inject(ERROR_FRAME_SYMBOLICATOR) private readonly symbolicator: FrameSymbolicator,
  ) {}

  async read(scope: TenantScope, fingerprint: string): Promise<ErrorIssueDetailView> {
    const issue = await this.issues.findOne(scope, fingerprint);
    if (issue === null) throw ApiError.invalidParam(`No error issue with fingerprint ${fingerprint} in this environment`);
    const latest = await this.issues.latestEvent(scope, fingerprint);
    return {
      object: 'error_issue',
      fingerprint: issue.fingerprint,
      count: issue.eventCount,
      firstSeenAt: seconds(issue.firstSeenMs),
      lastSeenAt: seconds(issue.lastSeenMs),
      lastEventName: issue.lastEventName,
      lastLevel: issue.lastLevel,
      latestEvent: latest === null ? null : await this.eventView(scope, latest),
      env: scope.env,
    };
  }

  /** One stored error event with its frames symbolicated now. */
  async eventView(scope: TenantScope, event: LatestErrorEventRow): Promise<ErrorEventView> {
    const properties = isObject(event.properties) ? event.properties : {};
    const context = isObject(event.context) ? event.context : null;
    const release = releaseOf(properties, context);
    const sent: unknown[] = Array.isArray(properties.frames) ? properties.frames : [];
    const positions = sent.map(framePosition);
    const resolvable = positions.filter((p): p is FramePosition => p !== null);
    const originals = release !== null && resolvable.length > 0 ? await this.symbolicator.symbolicate(scope, release, resolvable) : [];
    let next = 0;
    const frames = sent.map((frame, i): ErrorFrameView => {
      if (positions[i] === null) return frame as ErrorFrameView;
      const original = originals[next++] ?? null;
      return original === null ? (frame as ErrorFrameView) : { ...(frame as ErrorFrameView), original };
    });
    return {
      eventId: event.eventId,
      name: event.name,
      timestamp: event.timestampMs,
      level: event.level,
      message: stringOrNull(properties.message),
      errorType: stringOrNull(properties.errorType) ?? stringOrNull(properties.type),
      release,
      stack: stringOrNull(properties.stack),
      frames,
      context: context as Record<string, string> | null,
    };
  }
}
