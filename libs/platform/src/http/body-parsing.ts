import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { ApiError } from '../errors/api-error.js';

export const DEFAULT_BODY_LIMIT_BYTES = 100 * 1024;
export const EVENTS_BODY_LIMIT_BYTES = 1024 * 1024;
export const SOURCEMAPS_BODY_LIMIT_BYTES = 50 * 1024 * 1024;

/** Per-endpoint body limits (canonical paths; the /v1 rewrite has already happened). */
const LIMIT_BY_PATH: Record<string, number> = {
  '/v1/events': EVENTS_BODY_LIMIT_BYTES,
  '/v1/releases/sourcemaps': SOURCEMAPS_BODY_LIMIT_BYTES,
  '/v1/migration/users': 5 * 1024 * 1024,
};

// text/plain is accepted as JSON because browsers send beacons (navigator.sendBeacon) with it.
const JSON_TYPES = ['application/json', 'application/*+json', 'text/plain'];

function parserFor(limit: number): RequestHandler {
  return express.json({ limit, strict: false, type: JSON_TYPES });
}

const parsers = new Map<number, RequestHandler>();
function cachedParser(limit: number): RequestHandler {
  let parser = parsers.get(limit);
  if (!parser) {
    parser = parserFor(limit);
    parsers.set(limit, parser);
  }
  return parser;
}

export function bodyParsingMiddleware(req: Request, res: Response, next: NextFunction): void {
  const limit = LIMIT_BY_PATH[req.path] ?? DEFAULT_BODY_LIMIT_BYTES;
  cachedParser(limit)(req, res, (err?: unknown) => {
    if (err) return next(err);
    if (req.method === 'POST' || req.method === 'PUT' || req.method === 'PATCH') {
      if (req.body === undefined) {
        req.body = {};
      } else if (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
        return next(ApiError.invalidParam('Request body must be a JSON object'));
      }
    }
    next();
  });
}
