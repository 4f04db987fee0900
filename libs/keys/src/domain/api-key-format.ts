import { hash } from 'node:crypto';
import { type Env, randomBase62 } from '#platform';
import type { KeyKind } from '../auth/auth-context.js';

export const KEY_RANDOM_LENGTH = 32;

export { randomBase62 };

export function newId(prefix: 'proj' | 'app' | 'key' | 'ws'): string {
  return `${prefix}_${randomBase62(24)}`;
}

const ENV_TO_PREFIX: Record<Env, 'test' | 'live'> = { sandbox: 'test', production: 'live' };
const KIND_TO_PREFIX: Record<KeyKind, 'pub' | 'sk'> = { publishable: 'pub', secret: 'sk' };

export function mintApiKey(kind: KeyKind, env: Env): string {
  return `cd_${KIND_TO_PREFIX[kind]}_${ENV_TO_PREFIX[env]}_${randomBase62(KEY_RANDOM_LENGTH)}`;
}

/** One-shot `hash`: a third of `createHash(…).update(…).digest()`'s time for a key (every secret-key request hashes it). */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

export type PresentedKey =
  | { status: 'missing' }
  | { status: 'malformed' }
  /** Well-formed but of a kind no endpoint accepts here (e.g. a workspace key). */
  | { status: 'unsupported' }
  /** A workspace key (`cd_wk_…`): accepted only by the routes that declare it. */
  | { status: 'workspace'; key: string }
  | { status: 'ok'; key: string; kind: KeyKind; env: Env };

const KEY_PATTERN = /^cd_(pub|sk)_(test|live)_([A-Za-z0-9]{16,128})$/;
const WORKSPACE_PATTERN = /^cd_wk_[A-Za-z0-9_]{8,128}$/;

export function parseApiKey(raw: string | undefined): PresentedKey {
  if (raw === undefined || raw.trim() === '') return { status: 'missing' };
  const value = raw.trim();
  const match = KEY_PATTERN.exec(value);
  if (match) {
    return { status: 'ok', key: value, kind: match[1] === 'pub' ? 'publishable' : 'secret', env: match[2] === 'test' ? 'sandbox' : 'production' };
  }
  return WORKSPACE_PATTERN.test(value) ? { status: 'workspace', key: value } : { status: 'malformed' };
}

/**
 * Alias headers carrying the bare key, in the order they are read: the documented wire name
 * first, then the spelling the published clients send. Lower case, as Node
 * delivers header names.
 */
export const API_KEY_ALIAS_HEADERS = ['service-api-key', 'crossdeck-api-key'] as const;

/**
 * `Authorization: Bearer <key>` first, then `Service-Api-Key: <key>`, then
 * `Crossdeck-Api-Key: <key>`: the first header present (non-empty) decides.
 */
export function extractApiKey(headers: Record<string, string | string[] | undefined>): PresentedKey {
  const authorization = headers['authorization'];
  if (typeof authorization === 'string' && authorization.trim() !== '') {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return bearer ? parseApiKey(bearer[1]) : { status: 'malformed' };
  }
  for (const name of API_KEY_ALIAS_HEADERS) {
    const alias = headers[name];
    if (typeof alias === 'string' && alias.trim() !== '') return parseApiKey(alias);
  }
  return { status: 'missing' };
}

export function mintWorkspaceKey(): string {
  return `cd_wk_${randomBase62(KEY_RANDOM_LENGTH)}`;
}

export function last4(key: string): string {
  return key.slice(-4);
}
