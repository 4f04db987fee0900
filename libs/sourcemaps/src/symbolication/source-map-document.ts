import type { SectionedSourceMapInput } from '@jridgewell/trace-mapping';

/** A parsed version-3 source map (plain or index map with `sections`), structurally checked. */
export type SourceMapDocument = SectionedSourceMapInput;

export type ParsedSourceMap = { ok: true; document: SourceMapDocument } | { ok: false; reason: string };

/** Base64 VLQ digits and the two separators: the only characters `mappings` may hold. */
const MAPPINGS = /^[A-Za-z0-9+/,;]*$/;
/** The anti-XSSI prefix a map may start with (source map spec: the first line is then ignored). */
const XSSI_PREFIX = ")]}'";
/** Index maps inside index maps are not in the spec; one level of nesting is tolerated. */
const MAX_SECTION_DEPTH = 2;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonNegativeInteger(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function stringsOrNulls(value: unknown): boolean {
  return Array.isArray(value) && value.every((s) => s === null || typeof s === 'string');
}

/** Why `map` is not a usable version-3 map, or null when it is. */
function problemOf(map: unknown, depth: number): string | null {
  if (!isObject(map)) return 'is not a JSON object';
  if (map.version !== 3) return 'is not a version 3 source map';
  if (map.sections !== undefined) {
    if (depth >= MAX_SECTION_DEPTH) return 'nests index maps too deeply';
    if (!Array.isArray(map.sections)) return 'has sections that are not an array';
    for (let i = 0; i < map.sections.length; i++) {
      const section: unknown = map.sections[i];
      if (!isObject(section) || !isObject(section.offset) || !isNonNegativeInteger(section.offset.line) || !isNonNegativeInteger(section.offset.column)) {
        return `has an invalid sections[${i}].offset`;
      }
      if (section.map === undefined) return `has sections[${i}] without an embedded map (url sections are not supported)`;
      const inner = problemOf(section.map, depth + 1);
      if (inner !== null) return `sections[${i}].map ${inner}`;
    }
    return null;
  }
  if (typeof map.mappings !== 'string') return 'has no mappings string';
  if (!MAPPINGS.test(map.mappings)) return 'has mappings that are not base64 VLQ';
  if (!stringsOrNulls(map.sources)) return 'has no sources array';
  if (map.names !== undefined && !(Array.isArray(map.names) && map.names.every((n) => typeof n === 'string'))) return 'has names that are not strings';
  if (map.sourcesContent !== undefined && map.sourcesContent !== null && !stringsOrNulls(map.sourcesContent)) return 'has sourcesContent that are not strings';
  if (map.sourceRoot !== undefined && map.sourceRoot !== null && typeof map.sourceRoot !== 'string') return 'has a sourceRoot that is not a string';
  return null;
}

/**
 * Parses and checks map text: JSON, version 3, `mappings`/`sources` (or `sections` whose
 * entries embed their map). The mappings are not decoded here: that happens lazily when a
 * position is first looked up.
 */
export function parseSourceMapText(text: string): ParsedSourceMap {
  let body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.startsWith(XSSI_PREFIX)) {
    const newline = body.indexOf('\n');
    body = newline === -1 ? '' : body.slice(newline + 1);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'is not JSON' };
  }
  const problem = problemOf(parsed, 0);
  if (problem !== null) return { ok: false, reason: problem };
  return { ok: true, document: parsed as SourceMapDocument };
}
