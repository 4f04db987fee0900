import 'reflect-metadata';
import { Writable } from 'node:stream';
import { type ArgumentsHost, BadRequestException, HttpException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsArray, IsIn, IsInt, IsOptional, IsString, MaxLength, Min, ValidateNested, type ValidationError } from 'class-validator';
import { pino } from 'pino';
import { QueryFailedError } from 'typeorm';
import { AllExceptionsFilter } from '../../libs/platform/src/errors/all-exceptions.filter.js';
import { ApiError, createValidationPipe, assignRequestId, newRequestId, validationErrorToApiError } from '#platform';

/** The parts of Fastify's reply the filter uses. */
interface FakeResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: any;
  sent: boolean;
  ended: boolean;
  raw: { headersSent: boolean; writableEnded: boolean; end(): void; setHeader(name: string, value: string): void };
  header(name: string, value: string): FakeResponse;
  getHeader(name: string): string | undefined;
  status(code: number): FakeResponse;
  send(payload: string): FakeResponse;
}

function fakeResponse(): FakeResponse {
  const res: FakeResponse = {
    statusCode: 200,
    headers: {},
    body: undefined,
    sent: false,
    ended: false,
    raw: {
      headersSent: false,
      writableEnded: false,
      end() {
        res.ended = true;
        res.raw.writableEnded = true;
      },
      setHeader(name, value) {
        res.headers[name.toLowerCase()] = String(value);
      },
    },
    header(name, value) {
      res.headers[name.toLowerCase()] = String(value);
      return res;
    },
    getHeader: (name) => res.headers[name.toLowerCase()],
    status(code) {
      res.statusCode = code;
      return res;
    },
    send(payload) {
      res.body = JSON.parse(payload);
      res.sent = true;
      res.raw.headersSent = true;
      res.raw.end();
      return res;
    },
  };
  return res;
}

function fakeRequest(method = 'POST', url = '/v1/events?x=1'): any {
  return { method, url, originalUrl: url, path: url.split('?')[0], headers: {} };
}

function setup() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const filter = new AllExceptionsFilter(pino({ level: 'info', base: undefined }, stream));
  const req = fakeRequest();
  const res = fakeResponse();
  // As in the app: the edge assigns the request id first.
  assignRequestId(req, res as any);
  const host = {
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => res, getNext: () => undefined }),
    getType: () => 'http',
    getArgs: () => [req, res],
    getArgByIndex: (i: number) => [req, res][i],
  } as unknown as ArgumentsHost;
  const logs = () =>
    chunks
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  return { filter, req, res, host, logs, requestId: res.headers['x-request-id'] };
}

describe('request ids', () => {
  it('are req_ and 24 hex characters, distinct across refills of the random pool', () => {
    const ids = Array.from({ length: 2_000 }, () => newRequestId());
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('AllExceptionsFilter', () => {
  it('turns an unexpected Error into a 500 internal_error envelope without the stack', () => {
    const { filter, res, host, requestId, logs } = setup();
    const error = new TypeError("Cannot read properties of undefined (reading 'secretThing')");
    filter.catch(error, host);
    expect(requestId).toMatch(/^req_[0-9a-f]{24}$/);
    expect(res.statusCode).toBe(500);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({
      error: { type: 'internal_error', code: 'internal_error', message: 'An internal error occurred', request_id: requestId },
    });
    const text = JSON.stringify(res.body);
    expect(text).not.toContain('secretThing');
    expect(text).not.toMatch(/\bat \S+ \(/);
    expect(text).not.toContain('TypeError');

    const [line] = logs();
    expect(line).toEqual(expect.objectContaining({ level: 50, requestId, method: 'POST', path: '/v1/events', msg: 'unhandled error' }));
    expect(line.err.name).toBe('TypeError');
    expect(line.err.message).toContain('secretThing');
    expect(line.err.stack).toContain('errors.spec');
  });

  it('turns a TypeORM QueryFailedError into a 500 with no SQL in the body', () => {
    const { filter, res, host, requestId, logs } = setup();
    const driverError = Object.assign(new Error('relation "api_keys" does not exist'), { code: '42P01' });
    const error = new QueryFailedError('SELECT "secret_hash" FROM "api_keys" WHERE "id" = $1', ['key_123'], driverError);
    filter.catch(error, host);
    expect(res.statusCode).toBe(500);
    expect(res.body.error).toEqual({ type: 'internal_error', code: 'internal_error', message: 'An internal error occurred', request_id: requestId });
    const text = JSON.stringify(res.body);
    for (const leak of ['SELECT', 'api_keys', 'secret_hash', 'key_123', '42P01', 'relation']) expect(text).not.toContain(leak);
    const [line] = logs();
    expect(line.requestId).toBe(requestId);
    expect(line.err).toEqual(expect.objectContaining({ name: 'QueryFailedError', code: '42P01' }));
    // The query text and its parameters are not logged either.
    expect(JSON.stringify(line)).not.toContain('key_123');
  });

  it("text PostgreSQL cannot store (NUL, unpaired surrogate in jsonb) is the client's 400, not a 500", () => {
    const cases: [string, string][] = [
      ['22021', 'invalid byte sequence for encoding "UTF8": 0x00'],
      ['22P05', 'unsupported Unicode escape sequence'],
      ['22P02', 'invalid input syntax for type json'],
    ];
    for (const [code, message] of cases) {
      const { filter, res, host, logs } = setup();
      const error = new QueryFailedError('SELECT $1::text', ['a\u0000b'], Object.assign(new Error(message), { code }));
      filter.catch(error, host);
      expect({ code, status: res.statusCode, error: res.body.error.code }).toEqual({ code, status: 400, error: 'invalid_param_value' });
      expect(res.body.error.message).toMatch(/cannot store/);
      expect(logs()).toHaveLength(0);
    }
    // Any other invalid_text_representation stays a server fault.
    const { filter, res, host } = setup();
    filter.catch(
      new QueryFailedError('SELECT $1::int', ['x'], Object.assign(new Error('invalid input syntax for type integer: "x"'), { code: '22P02' })),
      host,
    );
    expect(res.statusCode).toBe(500);
  });

  it('a thrown non-Error value is a 500 too', () => {
    const { filter, res, host, logs } = setup();
    filter.catch('a string', host);
    expect(res.statusCode).toBe(500);
    expect(res.body.error.code).toBe('internal_error');
    expect(logs()).toHaveLength(1);
  });

  it('writes an ApiError as it is, with its headers, and does not log 4xx', () => {
    const { filter, res, host, requestId, logs } = setup();
    filter.catch(ApiError.rateLimited(1500, 0.25), host);
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('2');
    expect(res.headers['x-service-sample-rate']).toBe('0.25');
    expect(res.body).toEqual({ error: { type: 'rate_limit_error', code: 'rate_limited', message: expect.any(String), request_id: requestId } });
    expect(logs()).toHaveLength(0);
  });

  it('writes minVersion and surface of a 426 into the error and at the top level', () => {
    const { filter, res, host } = setup();
    filter.catch(ApiError.sdkVersionUnsupported('0.3.0', 'web'), host);
    expect(res.statusCode).toBe(426);
    expect(res.body).toEqual(
      expect.objectContaining({
        minVersion: '0.3.0',
        surface: 'web',
        error: expect.objectContaining({ type: 'version_error', code: 'sdk_version_unsupported', minVersion: '0.3.0', surface: 'web' }),
      }),
    );
  });

  it("maps Nest's 404 to an unknown-route missing_required_param naming method and path", () => {
    const { filter, res, host } = setup();
    filter.catch(new NotFoundException('Cannot POST /v1/events'), host);
    expect(res.statusCode).toBe(400);
    expect(res.body.error).toEqual(expect.objectContaining({ type: 'invalid_request_error', code: 'missing_required_param' }));
    expect(res.body.error.message).toBe('Unknown route: POST /v1/events');
  });

  it('maps body-parser failures wrapped by the adapter to invalid_param_value', () => {
    const cases: Array<[unknown, RegExp]> = [
      [
        new BadRequestException('x', { cause: Object.assign(new SyntaxError('Unexpected token'), { type: 'entity.parse.failed', status: 400 }) }),
        /Malformed JSON/,
      ],
      [
        new PayloadTooLargeException('x', { cause: Object.assign(new Error('too large'), { type: 'entity.too.large', status: 413, limit: 1024 * 1024 }) }),
        /exceeds the 1 MB limit/,
      ],
      [new HttpException('x', 415, { cause: Object.assign(new Error('bad charset'), { type: 'charset.unsupported' }) }), /charset/],
      [new PayloadTooLargeException(), /too large/],
      [new URIError('URI malformed'), /percent-encoding/],
    ];
    for (const [exception, message] of cases) {
      const { filter, res, host, logs } = setup();
      filter.catch(exception, host);
      expect(res.statusCode).toBe(400);
      expect(res.body.error).toEqual(
        expect.objectContaining({ type: 'invalid_request_error', code: 'invalid_param_value', message: expect.stringMatching(message) }),
      );
      expect(logs()).toHaveLength(0);
    }
  });

  it('only ends the response when headers were already sent', () => {
    const { filter, res, host } = setup();
    res.raw.headersSent = true;
    filter.catch(new Error('late failure'), host);
    expect(res.ended).toBe(true);
    expect(res.body).toBeUndefined();
    expect(res.statusCode).toBe(200);
  });

  it('gives a request id to a request that has none yet', () => {
    const { filter, host, res, req } = setup();
    delete res.headers['x-request-id'];
    for (const symbol of Object.getOwnPropertySymbols(req)) delete req[symbol];
    filter.catch(ApiError.invalidParam('bad'), host);
    expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
    expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
  });
});

class EventDto {
  @IsString()
  @MaxLength(10)
  name: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  count?: number;
}

class BatchDto {
  @IsIn(['sandbox', 'production'])
  environment: string;

  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => EventDto)
  events: EventDto[];
}

function validEvents(n: number): Array<{ name: string }> {
  return Array.from({ length: n }, (_, i) => ({ name: `e${i}` }));
}

async function pipeError(body: unknown): Promise<ApiError> {
  const pipe = createValidationPipe();
  try {
    await pipe.transform(body, { type: 'body', metatype: BatchDto, data: undefined });
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('the pipe accepted the body');
}

describe('validationErrorToApiError and the validation pipe', () => {
  it('names a nested array element by its path: events[3].name (missing)', async () => {
    const events: any[] = validEvents(5);
    delete events[3].name;
    const error = await pipeError({ environment: 'sandbox', events });
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.code).toBe('missing_required_param');
    expect(error.message).toBe('events[3].name is required');
  });

  it('names a nested array element by its path: events[3].name (invalid)', async () => {
    const events: any[] = validEvents(5);
    events[3].name = 'x'.repeat(11);
    const error = await pipeError({ environment: 'sandbox', events });
    expect(error.code).toBe('invalid_param_value');
    expect(error.message).toMatch(/^events\[3\]\.name must be shorter than or equal to 10 characters$/);
  });

  it('an explicit null is reported as missing', async () => {
    const events: any[] = validEvents(2);
    events[1].name = null;
    const error = await pipeError({ environment: 'sandbox', events });
    expect(error.code).toBe('missing_required_param');
    expect(error.message).toBe('events[1].name is required');
  });

  it('reports a wrong value at the top level as invalid_param_value with the field name', async () => {
    const error = await pipeError({ environment: 'staging', events: [] });
    expect(error.code).toBe('invalid_param_value');
    expect(error.message).toMatch(/^environment must be one of/);
  });

  it('reports a missing top-level field as missing_required_param', async () => {
    const error = await pipeError({ events: [] });
    expect(error.code).toBe('missing_required_param');
    expect(error.message).toBe('environment is required');
  });

  it('reports only the first failure', async () => {
    const events: any[] = validEvents(3);
    events[0].count = -1;
    events[2].name = 5;
    const error = await pipeError({ environment: 'sandbox', events });
    expect(error.message).toMatch(/^events\[0\]\.count /);
  });

  it('strips unknown fields instead of rejecting them', async () => {
    const pipe = createValidationPipe();
    const out = await pipe.transform(
      { environment: 'sandbox', events: [{ name: 'a', extra: 1 }], unknown: true },
      { type: 'body', metatype: BatchDto, data: undefined },
    );
    expect(out).toBeInstanceOf(BatchDto);
    expect(out).toEqual({ environment: 'sandbox', events: [{ name: 'a' }] });
  });

  it('builds paths from hand-made ValidationErrors too', () => {
    const errors: ValidationError[] = [
      {
        property: 'events',
        children: [
          {
            property: '3',
            children: [{ property: 'name', value: 42, constraints: { isString: 'name must be a string' }, children: [] }],
          },
        ],
      },
    ];
    const error = validationErrorToApiError(errors);
    expect(error.code).toBe('invalid_param_value');
    expect(error.message).toBe('events[3].name must be a string');

    const custom = validationErrorToApiError([{ property: 'kind', value: 'x', constraints: { custom: 'Unsupported kind' }, children: [] }]);
    expect(custom.message).toBe('kind: Unsupported kind');
  });

  it('falls back to a generic invalid_param_value when no failure has constraints', () => {
    const error = validationErrorToApiError([{ property: 'x', children: [] }]);
    expect(error.code).toBe('invalid_param_value');
    expect(error.status).toBe(400);
  });
});
