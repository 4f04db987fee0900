import { FlattenMap, type TraceMap, originalPositionFor, sourceContentFor } from '@jridgewell/trace-mapping';
import type { SourceMapDocument } from './source-map-document.js';

/** Where a minified position came from. Lines and columns are 1-based, like stack frames. */
export interface OriginalPosition {
  source: string;
  line: number;
  column: number;
  /** The original identifier at that position, when the map names it. */
  name: string | null;
  /** The original source line (from `sourcesContent`, at most 200 characters), when the map embeds it. */
  contextLine: string | null;
}

export const MAX_CONTEXT_LINE_CHARS = 200;

/** A parsed map ready for lookups (FlattenMap returns a plain TraceMap for plain maps, flattens index maps with `sections`). */
export function traceMapOf(document: SourceMapDocument): TraceMap {
  return new FlattenMap(document);
}

/** Line `line` (1-based) of `content`, without scanning past it. */
export function lineOf(content: string, line: number): string | null {
  let start = 0;
  for (let i = 1; i < line; i++) {
    const newline = content.indexOf('\n', start);
    if (newline === -1) return null;
    start = newline + 1;
  }
  let end = content.indexOf('\n', start);
  if (end === -1) end = content.length;
  if (end > start && content.charCodeAt(end - 1) === 13 /* \r */) end--;
  return content.slice(start, end);
}

/**
 * The original position of a generated (line, column), both 1-based as stack frames report
 * them (trace-mapping takes 0-based columns). The closest mapping at or before the column on
 * that line answers; a position with no mapping (or one mapped to no source) is null.
 */
export function originalPosition(map: TraceMap, line: number, column: number): OriginalPosition | null {
  if (!Number.isSafeInteger(line) || !Number.isSafeInteger(column) || line < 1 || column < 1) return null;
  const found = originalPositionFor(map, { line, column: column - 1 });
  if (found.source === null || found.line === null || found.column === null) return null;
  const content = sourceContentFor(map, found.source);
  const text = content === null ? null : lineOf(content, found.line);
  return {
    source: found.source,
    line: found.line,
    column: found.column + 1,
    name: found.name,
    contextLine: text === null ? null : text.slice(0, MAX_CONTEXT_LINE_CHARS),
  };
}
