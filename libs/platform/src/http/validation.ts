import { type ArgumentMetadata, ValidationPipe, type ValidationError } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { ApiError } from '../errors/api-error.js';

function firstFailure(errors: ValidationError[], parentPath: string): { path: string; error: ValidationError } | undefined {
  for (const error of errors) {
    const segment = /^\d+$/.test(error.property) ? `[${error.property}]` : parentPath ? `.${error.property}` : error.property;
    const path = `${parentPath}${segment}`;
    if (error.constraints && Object.keys(error.constraints).length > 0) return { path, error };
    const nested = firstFailure(error.children ?? [], path);
    if (nested) return nested;
  }
  return undefined;
}

/** Maps class-validator output to the envelope: the first failure, named by its full path. */
export function validationErrorToApiError(errors: ValidationError[]): ApiError {
  const failure = firstFailure(errors, '');
  if (!failure) return ApiError.invalidParam('Invalid request');
  const { path, error } = failure;
  if (error.value === undefined || error.value === null) {
    return ApiError.missingParam(`${path} is required`);
  }
  const message = Object.values(error.constraints ?? {})[0] ?? 'is invalid';
  const named = message.startsWith(`${error.property} `) ? `${path}${message.slice(error.property.length)}` : `${path}: ${message}`;
  return ApiError.invalidParam(named);
}

/** NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const UNSTORABLE_CHAR = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** False when PostgreSQL cannot store the string as sent (it refuses NUL; UTF-8 turns a lone surrogate into U+FFFD). */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE_CHAR.test(value);
}

const OWN_TEXT_RULES = Symbol('ownTextRules');

/**
 * Marks a DTO property whose content has its own, documented rule for unstorable text
 * (identify `traits` drop such a value instead of failing the call): the validation layer's
 * NUL and surrogate check does not look inside it.
 */
export function OwnTextRules(): PropertyDecorator {
  return (target, property) => {
    const ctor = target.constructor as { [OWN_TEXT_RULES]?: Set<string | symbol> };
    // A subclass starts from its parent's set (reached through the constructor's prototype).
    const own = Object.hasOwn(ctor, OWN_TEXT_RULES) ? ctor[OWN_TEXT_RULES]! : new Set(ctor[OWN_TEXT_RULES] ?? []);
    own.add(property);
    Object.defineProperty(ctor, OWN_TEXT_RULES, { value: own, enumerable: false, configurable: true });
  };
}

function exemptProperties(value: object): Set<string | symbol> | undefined {
  return (value.constructor as { [OWN_TEXT_RULES]?: Set<string | symbol> } | undefined)?.[OWN_TEXT_RULES];
}

function childPath(parent: string, key: string, index: boolean): string {
  if (index) return `${parent}[${key}]`;
  return parent ? `${parent}.${key}` : key;
}

/**
 * The path of the first string (or object key) in an accepted input that cannot be stored
 * as sent, or null. Iterative; the input's depth is already bounded (json-bounds.ts).
 */
export function findUnstorableText(root: unknown, rootPath = ''): string | null {
  const pending: { value: unknown; path: string }[] = [{ value: root, path: rootPath }];
  while (pending.length > 0) {
    const { value, path } = pending.pop()!;
    if (typeof value === 'string') {
      if (!isStorableText(value)) return path || 'body';
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i], path: childPath(path, String(i), true) });
      continue;
    }
    const exempt = exemptProperties(value);
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      if (exempt?.has(key)) continue;
      if (!isStorableText(key)) return `${path || 'body'} (a key)`;
      pending.push({ value: (value as Record<string, unknown>)[key], path: childPath(path, key, false) });
    }
  }
  return null;
}

/**
 * Strips unknown fields (never rejects them), reports the first failure with its path, then
 * refuses any accepted string PostgreSQL cannot store as sent (NUL, an unpaired UTF-16
 * surrogate): one check for every body, query and path parameter, instead of one per field.
 */
class PlatformValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const result: unknown = await super.transform(value, metadata);
    // Only what a DTO class declared: a handler that takes the raw body (POST /v1/events)
    // validates it itself, with the same isStorableText.
    if (!this.toValidate(metadata)) return result;
    const path = findUnstorableText(result, metadata.type === 'body' ? '' : (metadata.data ?? ''));
    if (path !== null) throw ApiError.invalidParam(`${path}: must not contain NUL characters or unpaired surrogates`);
    return result;
  }
}

type MetadataStorage = ReturnType<typeof getMetadataStorage>;
type TargetMetadatas = ReturnType<MetadataStorage['getTargetValidationMetadatas']>;
type GroupedMetadatas = ReturnType<MetadataStorage['groupByPropertyName']>;

const MEMOIZED = Symbol('memoizedValidationMetadata');

/**
 * class-validator works out a class's rules on every call: it filters the class's own
 * metadata, walks every class that has any to find its ancestors, and groups the result by
 * property, for each DTO it validates. The answer only changes when a decorator registers
 * more, so it is kept per class and options until then (every `add…` of the storage clears
 * it). The arrays and groups are the ones class-validator built; it only reads them.
 */
export function memoizeValidationMetadata(storage: MetadataStorage = getMetadataStorage()): void {
  const memo = storage as MetadataStorage & { [MEMOIZED]?: true };
  if (memo[MEMOIZED]) return;
  memo[MEMOIZED] = true;
  let targets = new Map<unknown, Map<string, TargetMetadatas>>();
  let groupings = new WeakMap<TargetMetadatas, GroupedMetadatas>();
  const clear = () => {
    targets = new Map();
    groupings = new WeakMap();
  };
  const targetsOf = storage.getTargetValidationMetadatas.bind(storage);
  const groupBy = storage.groupByPropertyName.bind(storage);
  storage.getTargetValidationMetadatas = (targetConstructor, targetSchema, always, strictGroups, groups) => {
    const key = `${targetSchema}\u0000${always}\u0000${strictGroups}\u0000${groups === undefined ? '' : JSON.stringify(groups)}`;
    let byOptions = targets.get(targetConstructor);
    if (!byOptions) targets.set(targetConstructor, (byOptions = new Map()));
    let found = byOptions.get(key);
    if (!found) byOptions.set(key, (found = targetsOf(targetConstructor, targetSchema, always, strictGroups, groups)));
    return found;
  };
  storage.groupByPropertyName = (metadata) => {
    let grouped = groupings.get(metadata);
    if (!grouped) groupings.set(metadata, (grouped = groupBy(metadata)));
    return grouped;
  };
  for (const method of ['addValidationSchema', 'addValidationMetadata', 'addConstraintMetadata'] as const) {
    const add = (storage[method] as (arg: unknown) => void).bind(storage);
    (storage as unknown as Record<string, (arg: unknown) => void>)[method] = (arg) => {
      clear();
      add(arg);
    };
  }
}

export function createValidationPipe(): ValidationPipe {
  memoizeValidationMetadata();
  return new PlatformValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: false,
    transform: true,
    stopAtFirstError: true,
    // What ValidationPipe sets on every call anyway. Declared here, its per-call
    // `{ ...validatorOptions, validationError }` overwrites a property instead of adding one,
    // which on Node 20 (V8 11) would build a new hidden class per request (docs/performance.md).
    validationError: { target: false },
    exceptionFactory: validationErrorToApiError,
  });
}
