import { ApiError } from '../errors/api-error.js';
import { type Env, isEnv } from '../tenancy/tenant-scope.js';

/** `?env=` of an operator read: `sandbox` or `production`, `production` when absent or empty. */
export function operatorEnv(raw: unknown): Env {
  if (raw === undefined || raw === '') return 'production';
  if (!isEnv(raw)) throw ApiError.invalidParam('env must be sandbox or production');
  return raw;
}

/** An integer query parameter in [min, max], `fallback` when absent; a bad value is 400 naming `name`. */
export function queryInt(raw: unknown, name: string, min: number, max: number, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (typeof raw !== 'string' || !/^\d{1,9}$/.test(raw)) throw ApiError.invalidParam(`${name} must be an integer from ${min} to ${max}`);
  const value = Number(raw);
  if (value < min || value > max) throw ApiError.invalidParam(`${name} must be an integer from ${min} to ${max}`);
  return value;
}

/** An optional string query parameter of at most `maxLength` characters (a repeated parameter is 400). */
export function queryString(raw: unknown, name: string, maxLength: number): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || raw.length > maxLength) throw ApiError.invalidParam(`${name} must be a string of at most ${maxLength} characters`);
  return raw;
}
