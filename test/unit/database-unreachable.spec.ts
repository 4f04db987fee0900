import { HttpException } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { isDatabaseUnreachable } from '../../libs/platform/src/errors/database-unreachable.js';
import { ApiError } from '#platform';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });
const queryFailed = (code: string, message = 'failed') => new QueryFailedError('SELECT 1', [], withCode(message, code));

describe('isDatabaseUnreachable (503) versus a database that answers slowly (500)', () => {
  it.each([
    ['a refused connection', withCode('connect ECONNREFUSED 10.0.0.5:5432', 'ECONNREFUSED')],
    ['a reset connection', withCode('read ECONNRESET', 'ECONNRESET')],
    ['an unknown host', withCode('getaddrinfo ENOTFOUND db', 'ENOTFOUND')],
    ['the server shutting down (57P01)', queryFailed('57P01', 'terminating connection due to administrator command')],
    ['the server starting (57P03)', withCode('the database system is starting up', '57P03')],
    ['a connection exception (08006)', queryFailed('08006')],
    ['a dropped connection', new Error('Connection terminated unexpectedly')],
    ['a connect timeout', new Error('Connection terminated due to connection timeout')],
    ['a server that stopped answering a sent query', new Error('Query read timeout')],
  ])('%s is unreachable', (_name, error) => {
    expect(isDatabaseUnreachable(error)).toBe(true);
  });

  it.each([
    ['a statement past DB_STATEMENT_TIMEOUT_MS (57014)', queryFailed('57014', 'canceling statement due to statement timeout')],
    ['a busy pool', new Error('timeout exceeded when trying to connect')],
    ['a constraint violation', queryFailed('23505', 'duplicate key')],
    ['a programming error', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['an ApiError', ApiError.internal()],
    ['an HttpException caused by a client reset', new HttpException({ message: 'aborted' }, 400, { cause: withCode('aborted', 'ECONNRESET') })],
    ['the body reader giving up on a client', Object.assign(withCode('request aborted', 'ECONNABORTED'), { type: 'request.aborted' })],
    ['a non-error', 'ECONNREFUSED'],
  ])('%s is not', (_name, error) => {
    expect(isDatabaseUnreachable(error)).toBe(false);
  });
});
