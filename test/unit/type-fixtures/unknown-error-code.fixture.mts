/*
 * A fixture that must NOT compile (test/unit/error-code-types.spec.ts compiles it with the
 * project's compiler options). `.mts` keeps it out of `npm run typecheck` ("test/**\/*.ts").
 * Each line that must fail ends with `// error: TS<code>`; every other line must compile.
 */
// The error's own file, not the platform's index: fewer declarations to load, a faster check.
import { ApiError } from '../../../libs/platform/src/errors/api-error.js';
import type { ErrorCodes } from '../../../libs/platform/src/openapi/error-codes.js';

// 1. A code the catalogue does not hold.
export const unknown = new ApiError(400, 'invalid_request_error', 'no_such_code', 'message'); // error: TS2345

// 2. A misspelt code through a helper.
export const misspelt = ApiError.invalidRequest('invalid_customers', 'message'); // error: TS2345

// 3. A catalogue code of another error type: missing_api_key is an authentication error.
export const wrongType = ApiError.permission('missing_api_key', 'message'); // error: TS2345

// 4. Any string is not a code.
declare const fromOutside: string;
export const widened = ApiError.authentication(fromOutside, 'message'); // error: TS2345

// 5. An endpoint's declared codes (@ApiErrors) come from the catalogue too.
export const declared: ErrorCodes = { 400: ['invalid_param_value', 'no_such_code'] }; // error: TS2322

// The catalogue's codes compile (the positive controls).
export const known = new ApiError(503, 'internal_error', 'rail_unavailable', 'The android API could not be read; retry later');
export const helper = ApiError.authentication('key_revoked', 'This API key has been revoked');
export const permission = ApiError.permission('env_mismatch', 'message');
export const declaredKnown: ErrorCodes = { 400: ['invalid_param_value'], 503: ['rail_unavailable'] };
