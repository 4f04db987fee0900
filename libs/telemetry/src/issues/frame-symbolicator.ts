import type { TenantScope } from '#platform';

/** A minified stack position: file URL as reported, 1-based line and column. */
export interface FramePosition {
  fileUrl: string;
  line: number;
  column: number;
}

/** Where a frame came from in the original source (1-based line and column). */
export interface OriginalFramePosition {
  source: string;
  line: number;
  column: number;
  name: string | null;
  contextLine: string | null;
}

/** What error reads need from the source-maps context (SourceMapSymbolicator, bound in telemetry.module.ts). */
export interface FrameSymbolicator {
  symbolicate(scope: TenantScope, release: string, positions: readonly FramePosition[]): Promise<(OriginalFramePosition | null)[]>;
}

export const ERROR_FRAME_SYMBOLICATOR = Symbol('ERROR_FRAME_SYMBOLICATOR');
