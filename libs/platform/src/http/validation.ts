import { ValidationPipe, type ValidationError } from '@nestjs/common';
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

/** Strips unknown fields (never rejects them) and reports the first failure with its path. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: false,
    transform: true,
    stopAtFirstError: true,
    exceptionFactory: validationErrorToApiError,
  });
}
