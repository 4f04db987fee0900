import { createHash } from 'node:crypto';
import { ApiError, type TenantScope, isEnv } from '#platform';
import { assertDeclaredEnv } from '#keys';
import { parseSourceMapText } from '../symbolication/source-map-document.js';

/**
 * The request rules of POST /v1/releases/sourcemaps as pure functions. Request-level
 * failures throw (the whole batch is refused); per-file failures are returned as a code and
 * a message and become one `error` row of the batch.
 */

export const RELEASE_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
export const MAX_FILES_PER_BATCH = 100;
/** Decoded size of one map (the spec leaves it open); see docs/decisions.md, "Source maps". */
export const MAX_SOURCEMAP_BYTES = 16 * 1024 * 1024;
export const MAX_FILE_URL_CHARS = 2048;

/** `scheme://` then at least one character; no whitespace or control characters anywhere. */
const FILE_URL = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s\u0000-\u001f\u007f]+$/;
/** Standard or URL-safe base64; line breaks and spaces (wrapped output of `base64`) are ignored. */
const BASE64 = /^[A-Za-z0-9+/_\-\s]*(?:=\s*){0,2}$/;
// PostgreSQL text cannot hold NUL, nor unpaired UTF-16 surrogates.
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export type PerFileCode = 'invalid_runtime_url' | 'missing_sourcemap' | 'invalid_sourcemap' | 'sourcemap_too_large';

export interface FileFailure {
  code: PerFileCode;
  message: string;
}

export interface UploadRequest {
  release: string;
  environment: string;
  /** The raw entries, checked one by one (per-file failures never fail the batch). */
  files: unknown[];
}

/** SHA-256 (hex) of the file URL's UTF-8 bytes: the server's `fileUrlHash`. */
export function fileUrlHash(fileUrl: string): string {
  return createHash('sha256').update(fileUrl, 'utf8').digest('hex');
}

/**
 * Request-level rules, in field order: release (`invalid_release`), environment
 * (`invalid_param_value`, or `403 env_mismatch` when it names the other environment), files
 * (`missing_required_param` when absent or empty, `invalid_param_value` when not an array or
 * over 100 entries).
 */
export function readUploadRequest(scope: TenantScope, body: Record<string, unknown>): UploadRequest {
  const { release, environment, files } = body;
  if (release === undefined || release === null) throw ApiError.missingParam('release is required');
  if (typeof release !== 'string' || !RELEASE_PATTERN.test(release)) {
    throw ApiError.invalidRequest('invalid_release', 'release must be 1 to 64 characters from letters, digits, ".", "_" and "-"');
  }
  if (environment === undefined || environment === null) throw ApiError.missingParam('environment is required');
  if (!isEnv(environment)) throw ApiError.invalidParam('environment must be one of: production, sandbox');
  assertDeclaredEnv(scope, environment);
  if (files === undefined || files === null) throw ApiError.missingParam('files is required');
  if (!Array.isArray(files)) throw ApiError.invalidParam('files must be an array');
  if (files.length === 0) throw ApiError.missingParam('files must contain at least one file');
  if (files.length > MAX_FILES_PER_BATCH) throw ApiError.invalidParam(`files must contain 1 to ${MAX_FILES_PER_BATCH} files (got ${files.length})`);
  return { release, environment, files };
}

/** The entry's fileUrl when it is a string (for the result row), else null. */
export function fileUrlOf(entry: unknown): string | null {
  if (typeof entry !== 'object' || entry === null) return null;
  const url = (entry as Record<string, unknown>).fileUrl;
  return typeof url === 'string' ? url : null;
}

/** `invalid_runtime_url` unless fileUrl is a `scheme://` URL of at most 2048 characters. */
export function checkFileUrl(index: number, entry: unknown): FileFailure | null {
  const path = `files[${index}]`;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    return { code: 'invalid_runtime_url', message: `${path} must be an object with fileUrl and sourceMap` };
  }
  const url = (entry as Record<string, unknown>).fileUrl;
  if (typeof url !== 'string' || url.length === 0) return { code: 'invalid_runtime_url', message: `${path}.fileUrl is required (a scheme:// URL)` };
  if (url.length > MAX_FILE_URL_CHARS || !FILE_URL.test(url) || UNPAIRED_SURROGATE.test(url)) {
    return {
      code: 'invalid_runtime_url',
      message: `${path}.fileUrl must be a scheme:// URL (for example https://, app:/// or webpack://) of at most ${MAX_FILE_URL_CHARS} characters`,
    };
  }
  return null;
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
