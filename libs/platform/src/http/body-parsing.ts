import type { IncomingMessage, ServerResponse } from 'node:http';
import bodyParser from 'body-parser';
import { ApiError } from '../errors/api-error.js';
import type { HttpRequest } from './http-types.js';
import { DEFAULT_JSON_BOUNDS, type JsonBounds, assertJsonBounds } from './json-bounds.js';

export const DEFAULT_BODY_LIMIT_BYTES = 100 * 1024;
export const EVENTS_BODY_LIMIT_BYTES = 1024 * 1024;
export const SOURCEMAPS_BODY_LIMIT_BYTES = 50 * 1024 * 1024;
export const MIGRATION_BODY_LIMIT_BYTES = 5 * 1024 * 1024;
/** Migration bodies: 1,000 rows of ten fields, 32 traits and an entitlements map each. */
export const MIGRATION_JSON_BOUNDS: JsonBounds = { maxDepth: DEFAULT_JSON_BOUNDS.maxDepth, maxKeys: 200_000 };

// text/plain is accepted as JSON because browsers send beacons (navigator.sendBeacon) with it.
const JSON_TYPES = ['application/json', 'application/*+json', 'text/plain'];

const RAW_BODY = Symbol('rawBody');

type BodyReader = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

const jsonParsers = new Map<number, BodyReader>();
const rawParsers = new Map<number, BodyReader>();
function parserFor(limit: number, raw: boolean): BodyReader {
  const cache = raw ? rawParsers : jsonParsers;
  let parser = cache.get(limit);
  if (!parser) {
    // body-parser applies `limit` to the decoded (inflated) bytes and stops inflating there.
    parser = (raw ? bodyParser.raw({ limit, type: () => true }) : bodyParser.json({ limit, strict: false, type: JSON_TYPES })) as BodyReader;
    cache.set(limit, parser);
  }
  return parser;
}

/** A body limit as the error messages name it (`1 MB`, `100 KB`). */
export function formatBodyLimit(limit: number | undefined): string {
  if (!limit) return 'size';
  if (limit >= 1024 * 1024) return `${Math.round((limit / (1024 * 1024)) * 10) / 10} MB`;
  return `${Math.round(limit / 1024)} KB`;
}

/**
 * `413` when the declared `Content-Length` is over the route's limit: answered at once, before
 * authentication and before any byte of the body is read, and the connection is closed
 * (`Connection: close`) so the unread body is never waited for. The declared length counts
 * the bytes on the wire, whatever the content encoding (a compressed body inflates to more).
 */
export function assertDeclaredLength(req: HttpRequest, limit: number): void {
  const header = req.raw.headers['content-length'];
  if (header === undefined || !/^\d+$/.test(header)) return;
  if (Number(header) <= limit) return;
  throw new ApiError(
    413,
    'invalid_request_error',
    'invalid_param_value',
    `Request body exceeds the ${formatBodyLimit(limit)} limit of this endpoint`,
    undefined,
    { Connection: 'close' },
  );
}

/**
 * Reads and parses the JSON body of a request whose route and caller are already known (the
 * route-policy guard calls it after authentication, so nothing a stranger sends to an unknown
 * route or without a valid key is read or inflated). Writes `req.body`; a POST, PUT or PATCH
 * body must be a JSON object, within the shape bounds (depth, key count) checked before any
 * validation runs; `jsonBounds: null` leaves them to the route (POST /v1/events measures
 * nesting by its own 8 KB rule). `raw` keeps the bytes as received, unparsed, for the route
 * (store webhooks: a signature is computed over the bytes, and their documented checks order the
 * signature's project before the body's shape); `rawBodyOf` hands them over.
 */
export function readJsonBody(req: HttpRequest, limit: number, options: { raw?: boolean; jsonBounds?: JsonBounds | null } = {}): Promise<void> {
  // The edge's only content-type parser leaves the stream unread: body-parser reads it here.
  const message = req.raw as IncomingMessage & { body?: unknown };
  return new Promise((resolve, reject) => {
    parserFor(limit, options.raw ?? false)(message, undefined as unknown as ServerResponse, (err?: unknown) => {
      if (err) return reject(err);
      if (options.raw) {
        (req as unknown as Record<symbol, Buffer>)[RAW_BODY] = Buffer.isBuffer(message.body) ? message.body : Buffer.alloc(0);
        req.body = {};
        return resolve();
      }
      let body = message.body;
      if (req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH') {
        if (body === undefined) {
          body = {};
        } else if (body === null || typeof body !== 'object' || Array.isArray(body)) {
          return reject(ApiError.invalidParam('Request body must be a JSON object'));
        }
      }
      req.body = body;
      const bounds = options.jsonBounds === undefined ? DEFAULT_JSON_BOUNDS : options.jsonBounds;
      try {
        if (bounds) assertJsonBounds(body, bounds);
      } catch (error) {
        return reject(error);
      }
      resolve();
    });
  });
}

/** The body bytes as received, for routes read raw (store webhooks); empty when there was none. */
export function rawBodyOf(req: HttpRequest): Buffer {
  return (req as unknown as Record<symbol, Buffer | undefined>)[RAW_BODY] ?? Buffer.alloc(0);
}
