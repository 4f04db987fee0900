import { createHash } from 'node:crypto';
import { ApiError, type TenantScope, isEnv } from '#platform';
import { assertDeclaredEnv } from '#keys';

/**
 * The request rules of POST /v1/releases/sourcemaps as pure functions. Request-level
 * failures throw (the whole batch is refused); per-file failures are returned as a code and
 * a message and become one `error` row of the batch.
 */

export const RELEASE_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
export const MAX_FILES_PER_BATCH = 100;
export const MAX_FILE_URL_CHARS = 2048;

/** `scheme://` then at least one character; no whitespace or control characters anywhere. */
const FILE_URL = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s\u0000-\u001f\u007f]+$/;
// PostgreSQL text cannot hold NUL, nor unpaired UTF-16 surrogates.
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export { MAX_SOURCEMAP_BYTES, type PerFileCode, type FileFailure, type DecodedSourceMap, decodeSourceMap } from './sourcemap-decode.js';
import type { FileFailure } from './sourcemap-decode.js';

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
