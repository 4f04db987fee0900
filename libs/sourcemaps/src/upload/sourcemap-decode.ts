/**
 * The CPU- and memory-heavy part of a source-map upload, free of framework imports so it can
 * run in a worker thread (sourcemap-decode.worker.ts): parsing the request body, decoding and
 * checking each map, hashing and compressing it. Pure apart from node:crypto and node:zlib.
 */
import { createHash } from 'node:crypto';
import { brotliCompressSync, constants as zlib } from 'node:zlib';
import { parseSourceMapText } from '../symbolication/source-map-document.js';

/** Decoded size of one map (the public API leaves it open); see docs/decisions/upload.md. */
export const MAX_SOURCEMAP_BYTES = 16 * 1024 * 1024;
/** Brotli quality 5: most of the ratio of 11 at a small fraction of its CPU (maps are JSON text). */
const BROTLI_QUALITY = 5;
/** Standard or URL-safe base64; line breaks and spaces (wrapped output of `base64`) are ignored. */
const BASE64 = /^[A-Za-z0-9+/_\-\s]*(?:=\s*){0,2}$/;

export type PerFileCode = 'invalid_runtime_url' | 'missing_sourcemap' | 'invalid_sourcemap' | 'sourcemap_too_large';

export interface FileFailure {
  code: PerFileCode;
  message: string;
}

function countWhitespace(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) count++;
  }
  return count;
}

/** Upper bound of the decoded size of a base64 text (whitespace counted, so never below). */
function decodedSizeBound(base64: string): number {
  return Math.floor((base64.length * 3) / 4);
}

/** The decoded bytes only: the parsed document is dropped at once (it is only needed to check the map). */
export type DecodedSourceMap = { ok: true; bytes: Buffer } | ({ ok: false } & FileFailure);

/**
 * `sourceMap`: `missing_sourcemap` when absent or empty; `sourcemap_too_large` over the limit
 * (checked on the encoded length first, so an oversized map is never decoded);
 * `invalid_sourcemap` when it is not base64, not JSON, or not a version-3 map.
 */
export function decodeSourceMap(index: number, raw: unknown, maxBytes = MAX_SOURCEMAP_BYTES): DecodedSourceMap {
  const path = `files[${index}].sourceMap`;
  if (raw === undefined || raw === null || raw === '') return { ok: false, code: 'missing_sourcemap', message: `${path} is required` };
  if (typeof raw !== 'string') return { ok: false, code: 'invalid_sourcemap', message: `${path} must be a base64 string` };
  const tooLarge = (): DecodedSourceMap => ({
    ok: false,
    code: 'sourcemap_too_large',
    message: `${path} is larger than ${maxBytes} bytes decoded`,
  });
  if (decodedSizeBound(raw) > maxBytes) {
    // Whitespace may inflate the encoded length: count only base64 characters before refusing.
    const significant = raw.length - countWhitespace(raw);
    if (Math.floor((significant * 3) / 4) - 2 > maxBytes) return tooLarge();
  }
  if (!BASE64.test(raw)) return { ok: false, code: 'invalid_sourcemap', message: `${path} is not base64` };
  const bytes = Buffer.from(raw, 'base64');
  if (bytes.length > maxBytes) return tooLarge();
  if (bytes.length === 0) return { ok: false, code: 'missing_sourcemap', message: `${path} is empty` };
  const parsed = parseSourceMapText(bytes.toString('utf8'));
  if (!parsed.ok) return { ok: false, code: 'invalid_sourcemap', message: `${path} ${parsed.reason}` };
  return { ok: true, bytes };
}

/** One file of a decoded upload: its entry without the map text, and the map decoded, hashed and compressed (or why not). */
export interface DecodedUploadFile {
  /** The entry as sent, `sourceMap` left out (a non-object entry as it was). */
  entry: unknown;
  map: { ok: true; size: number; contentSha256: string; compressed: Uint8Array } | ({ ok: false } & FileFailure);
}

export type DecodedUpload =
  { ok: true; release: unknown; environment: unknown; files: unknown; decoded: DecodedUploadFile[] | null } | { ok: false; reason: 'not_json' | 'not_object' };

/**
 * What the request rules read of a value: primitives as they are, any object or array as an
 * empty one of its kind. The result crosses back from the worker thread, and a body may nest
 * thousands of levels deep, which structured cloning cannot always carry (the message is then
 * lost on the receiving side); the rules only ever ask whether such a value is a string.
 */
function skeleton(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  return Array.isArray(value) ? [] : {};
}

/** An entry's fields, each as its skeleton (the rules read `fileUrl`, a string). */
function entrySkeleton(entry: unknown): unknown {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return skeleton(entry);
  return Object.fromEntries(Object.entries(entry).map(([key, value]) => [key, skeleton(value)]));
}

/**
 * Parses the upload body and decodes every file of it; the request-level rules are the
 * caller's (on the skeleton this returns). `decoded` is null when `files` is not an array or
 * holds more than `maxFiles` entries (nothing is decoded for a batch that will be refused).
 */
export function decodeUpload(raw: Uint8Array, maxFiles: number, maxBytes = MAX_SOURCEMAP_BYTES): DecodedUpload {
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8'));
  } catch {
    return { ok: false, reason: 'not_json' };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, reason: 'not_object' };
  const { release: rawRelease, environment: rawEnvironment, files } = body as Record<string, unknown>;
  const release = skeleton(rawRelease);
  const environment = skeleton(rawEnvironment);
  if (!Array.isArray(files) || files.length === 0 || files.length > maxFiles) {
    // The rules read only whether `files` is an array and its length.
    return { ok: true, release, environment, files: Array.isArray(files) ? files.map(() => null) : skeleton(files), decoded: null };
  }
  const decoded: DecodedUploadFile[] = [];
  for (let i = 0; i < files.length; i++) {
    const entry: unknown = files[i];
    files[i] = undefined; // the base64 text can be collected as soon as this file is done
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      decoded.push({
        entry: skeleton(entry),
        map: { ok: false, code: 'invalid_runtime_url', message: `files[${i}] must be an object with fileUrl and sourceMap` },
      });
      continue;
    }
    const { sourceMap, ...fields } = entry as Record<string, unknown>;
    const rest = entrySkeleton(fields);
    const map = decodeSourceMap(i, sourceMap, maxBytes);
    if (!map.ok) {
      decoded.push({ entry: rest, map });
      continue;
    }
    const compressed = brotliCompressSync(map.bytes, {
      params: {
        [zlib.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT,
        [zlib.BROTLI_PARAM_SIZE_HINT]: map.bytes.length,
      },
    });
    const contentSha256 = createHash('sha256').update(map.bytes).digest('hex');
    // A copy of its own (small), so it can be transferred back alone.
    decoded.push({ entry: rest, map: { ok: true, size: map.bytes.length, contentSha256, compressed: new Uint8Array(compressed) } });
  }
  return { ok: true, release, environment, files: decoded.map((file) => file.entry), decoded };
}
