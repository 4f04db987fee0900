import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import { ApiError, type ErrorCode, type ErrorCodeOf } from '#platform';

/**
 * Error codes come from the error catalogue (libs/platform/src/openapi/error-codes.ts): a code
 * the catalogue does not hold, or one of another error type, does not compile. Proven by a
 * fixture compiled with the compiler API (type-fixtures/unknown-error-code.fixture.mts, outside
 * `npm run typecheck`), and by `@ts-expect-error` lines that `npm run typecheck` checks.
 */
const ROOT = resolve(__dirname, '../..');
const FIXTURE = join(__dirname, 'type-fixtures', 'unknown-error-code.fixture.mts');

function compile(file: string): { found: string[]; messages: string[] } {
  const configPath = join(ROOT, 'tsconfig.json');
  const read = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const options = { ...ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(configPath)).options, noEmit: true };
  const program = ts.createProgram({ rootNames: [file], options });
  const diagnostics = [...program.getSyntacticDiagnostics(), ...program.getSemanticDiagnostics(program.getSourceFile(file)), ...program.getGlobalDiagnostics()];
  const found: string[] = [];
  const messages: string[] = [];
  for (const d of diagnostics) {
    const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    found.push(`${line}:TS${d.code}`);
    messages.push(`${line}: ${ts.flattenDiagnosticMessageText(d.messageText, ' / ')}`);
  }
  return { found: found.sort(), messages };
}

function expectedMarkers(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((text, i) => [...text.matchAll(/\/\/ error: (TS\d+)/g)].map((m) => `${i + 1}:${m[1]}`))
    .sort();
}

describe('error codes typed by the catalogue', () => {
  it('an unknown code, a misspelt one, one of another error type, any string or an unknown declared code does not compile', () => {
    const expected = expectedMarkers(FIXTURE);
    expect(expected).toHaveLength(5);
    const { found, messages } = compile(FIXTURE);
    expect({ found, messages }).toEqual({ found: expected, messages: expect.any(Array) });
    expect(messages.filter((m) => /'"no_such_code"' is not assignable to parameter of type 'ErrorCode'/.test(m))).toHaveLength(1);
    expect(messages.filter((m) => /'"missing_api_key"' is not assignable to parameter of type '"/.test(m))).toHaveLength(1);
  }, 20000);

  it('the typed checks below run under npm run typecheck', () => {
    expect(typeChecks).toBeInstanceOf(Function);
    expect(new ApiError(503, 'internal_error', 'rail_unavailable', 'm').code).toBe('rail_unavailable');
  });
});

/** Never called: only compiled, by `npm run typecheck`. */
function typeChecks(): void {
  // @ts-expect-error not a code of the catalogue
  void new ApiError(400, 'invalid_request_error', 'no_such_code', 'message');
  // @ts-expect-error invalid_api_key is an authentication error, not a permission error
  void ApiError.permission('invalid_api_key', 'message');
  // @ts-expect-error an ErrorCode is one of the catalogue's literals, not any string
  const code: ErrorCode = 'whatever';
  const authentication: ErrorCodeOf<'authentication_error'> = 'identity_token_invalid';
  void code;
  void authentication;
}
