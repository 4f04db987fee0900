/**
 * Bounds of the fields a rail stores from a signed (or provider-read) payload. A payload can be
 * authentic and still carry a value the database cannot hold (a time of 1e308, an id of a
 * megabyte, a NUL character); such a payload is the sender's error, answered
 * `400 invalid_param_value` naming the field, so the store stops retrying it. Pure.
 */
import { isStorableText } from '#platform';

/** Longest id a rail may carry (event, subscription, customer, transaction ids, purchase tokens, …). */
export const RAIL_ID_MAX_CHARS = 512;
/** Latest instant a rail field may name: 9999-12-31T23:59:59Z, in Unix seconds. */
export const RAIL_MAX_UNIX_SECONDS = 253_402_300_799;
/** The same instant in Unix milliseconds. */
export const RAIL_MAX_UNIX_MS = RAIL_MAX_UNIX_SECONDS * 1000 + 999;

/** A field of an authentic payload out of its bounds; the message names the field. */
export class RailFieldError extends Error {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = 'RailFieldError';
  }
}

/** An id, token or word of the rail: at most RAIL_ID_MAX_CHARS characters of storable text (null and undefined pass). */
export function checkRailText(value: string | null | undefined, field: string): void {
  if (value === null || value === undefined) return;
  if (value.length > RAIL_ID_MAX_CHARS) throw new RailFieldError(field, `must be at most ${RAIL_ID_MAX_CHARS} characters`);
  if (!isStorableText(value)) throw new RailFieldError(field, 'must not contain NUL characters or unpaired surrogates');
}

/** A time in Unix seconds, between 0 and the end of year 9999 (null and undefined pass). */
export function checkRailSeconds(value: number | null | undefined, field: string): void {
  if (value === null || value === undefined) return;
  if (!Number.isFinite(value) || value < 0 || value > RAIL_MAX_UNIX_SECONDS)
    throw new RailFieldError(field, `must be a Unix time in seconds between 0 and ${RAIL_MAX_UNIX_SECONDS}`);
}

/** A time in Unix milliseconds, between 0 and the end of year 9999 (null and undefined pass). */
export function checkRailMillis(value: number | null | undefined, field: string): void {
  if (value === null || value === undefined) return;
  if (!Number.isFinite(value) || value < 0 || value > RAIL_MAX_UNIX_MS)
    throw new RailFieldError(field, `must be a Unix time in milliseconds between 0 and ${RAIL_MAX_UNIX_MS}`);
}

/** Largest magnitude of a rail amount in micros (millionths) of its currency: a billion units. */
export const RAIL_MAX_AMOUNT_MICROS = 1e15;

/**
 * An amount of the rail (null and undefined pass): an integer, or for Android's `units` a
 * string of digits, whose value in micros (`value × microsPerUnit`) is a safe integer within
 * ±RAIL_MAX_AMOUNT_MICROS. Card minor units are 10,000 micros, iOS milli-units 1,000,
 * Android units 1,000,000 and nanos 1/1,000.
 */
export function checkRailAmount(value: unknown, field: string, microsPerUnit: number): void {
  if (value === null || value === undefined) return;
  const number = typeof value === 'string' && /^-?\d{1,30}$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isSafeInteger(number)) throw new RailFieldError(field, 'must be an integer amount');
  const micros = number * microsPerUnit;
  if (!Number.isSafeInteger(Math.round(micros)) || Math.abs(micros) > RAIL_MAX_AMOUNT_MICROS) {
    throw new RailFieldError(field, `must be an amount within ±${RAIL_MAX_AMOUNT_MICROS / 1e6} units of its currency`);
  }
}

/** A count of units (a subscription item's quantity): an integer from 0 whose total `unitMicros × count` stays within the amount bound. */
export function checkRailQuantity(value: unknown, field: string, unitMicros: number): void {
  if (value === null || value === undefined) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new RailFieldError(field, 'must be an integer from 0');
  if (Math.abs(unitMicros * value) > RAIL_MAX_AMOUNT_MICROS) {
    throw new RailFieldError(field, `times the unit amount must stay within ±${RAIL_MAX_AMOUNT_MICROS / 1e6} units of its currency`);
  }
}
