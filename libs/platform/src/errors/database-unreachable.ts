import { HttpException } from '@nestjs/common';
import { ApiError } from './api-error.js';

/** Connection-level failures: node's socket errors, PostgreSQL's connection-exception class and shutdown codes. */
const UNREACHABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EAI_AGAIN', 'EPIPE']);
const UNREACHABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03']); // admin_shutdown, crash_shutdown, cannot_connect_now
const UNREACHABLE_MESSAGES = /^(Connection terminated|timeout expired$|Query read timeout$|Client has encountered a connection error and is not queryable)/;

/**
 * The database cannot be reached or stopped answering. Not the pool being busy ("timeout
 * exceeded when trying to connect") nor a statement past DB_STATEMENT_TIMEOUT_MS (57014):
 * those are load, answered `500` (isDatabaseTimeout).
 */
export function isDatabaseUnreachable(exception: unknown): boolean {
  // Not `instanceof Error`: socket errors may come from another realm (a test VM context).
  if (!isErrorLike(exception)) return false;
  // Ours, Nest's and the body reader's errors (a client that went away) are never the database's.
  if (exception instanceof HttpException || exception instanceof ApiError || typeof (exception as { type?: unknown }).type === 'string') return false;
  const candidates: unknown[] = [exception, (exception as { driverError?: unknown }).driverError, (exception as { cause?: unknown }).cause];
  return candidates.some((candidate) => {
    if (!isErrorLike(candidate)) return false;
    const code = (candidate as { code?: unknown }).code;
    if (typeof code === 'string' && (UNREACHABLE_SOCKET_CODES.has(code) || UNREACHABLE_SQLSTATES.has(code) || code.startsWith('08'))) return true;
    return UNREACHABLE_MESSAGES.test(candidate.message);
  });
}

function isErrorLike(value: unknown): value is Error {
  return typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string';
}
