/**
 * Rail amounts to micros (1,000,000 = one unit of the currency). Pure. An amount that is not a
 * safe integer in micros, or lies outside ±10^15 micros, is the sender's error: RailFieldError
 * naming the field (answered `400 invalid_param_value`).
 */
import { RailFieldError } from '../model/rail-bounds.js';
import { currencyCode } from '../model/rail-prices.js';
import type { Money } from './subscription.js';

/** The largest amount a rail may state, in micros (a billion units of any currency). */
export const MAX_ABS_MICROS = 1_000_000_000_000_000;

/**
 * Currencies whose processor amounts carry no minor unit (`unit_amount: 500` is 500 JPY). The
 * card processor's own list, which differs from ISO 4217 where it keeps two decimals for
 * backwards compatibility (ISK, HUF, TWD), so it is spelled out here rather than read from
 * `Intl`.
 */
const ZERO_DECIMAL = new Set(['BIF', 'CLP', 'DJF', 'GNF', 'JPY', 'KMF', 'KRW', 'MGA', 'PYG', 'RWF', 'UGX', 'VND', 'VUV', 'XAF', 'XOF', 'XPF']);
/** Currencies whose processor amounts are in thousandths (`unit_amount: 1500` is 1.500 KWD). */
const THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

/** Digits of the currency's minor unit as the card processor states amounts (0, 2 or 3). */
export function cardCurrencyExponent(currency: string): number {
  const code = currency.toUpperCase();
  if (ZERO_DECIMAL.has(code)) return 0;
  if (THREE_DECIMAL.has(code)) return 3;
  return 2;
}

/** A micros amount within bounds, or RailFieldError naming `field`. */
export function checkMicros(micros: number, field: string): number {
  if (!Number.isSafeInteger(micros)) throw new RailFieldError(field, 'must be an integer amount that converts to a safe integer of micros');
  if (Math.abs(micros) > MAX_ABS_MICROS) throw new RailFieldError(field, `must be within ±${MAX_ABS_MICROS} micros`);
  return micros;
}

function checkCurrency(value: unknown, field: string): string {
  const code = currencyCode(value);
  if (!code) throw new RailFieldError(field, 'must be an ISO 4217 currency code');
  return code;
}

/** iOS: `price` and `renewalPrice` are milliunits of the currency. */
export function iosMilliunitsToMicros(milliunits: number, field: string): number {
  if (!Number.isFinite(milliunits)) throw new RailFieldError(field, 'must be a finite number of milliunits');
  return checkMicros(Math.round(milliunits * 1000), field);
}

/** Card: a minor-unit amount times a quantity, scaled by the currency's exponent. */
export function cardMinorToMicros(minor: number, currency: string, field: string, quantity = 1): number {
  if (!Number.isSafeInteger(minor)) throw new RailFieldError(field, 'must be an integer of the currency minor unit');
  if (!Number.isSafeInteger(quantity) || quantity < 0) throw new RailFieldError(field, 'quantity must be a non-negative integer');
  return checkMicros(minor * quantity * 10 ** (6 - cardCurrencyExponent(currency)), field);
}

/** Android `Money`: `units` (an int64 as a decimal string) plus `nanos` / 1,000 (rounded to the micro). */
export function androidMoneyToMicros(money: { units?: string | number | null; nanos?: number | null }, field: string): number {
  const units = money.units ?? '0';
  if (!/^-?\d{1,20}$/.test(String(units))) throw new RailFieldError(`${field}.units`, 'must be an integer');
  const nanos = money.nanos ?? 0;
  if (!Number.isSafeInteger(nanos) || Math.abs(nanos) >= 1_000_000_000)
    throw new RailFieldError(`${field}.nanos`, 'must be an integer between -999999999 and 999999999');
  const micros = BigInt(units) * 1_000_000n + BigInt(Math.round(nanos / 1000));
  if (micros > BigInt(MAX_ABS_MICROS) || micros < -BigInt(MAX_ABS_MICROS)) throw new RailFieldError(field, `must be within ±${MAX_ABS_MICROS} micros`);
  return Number(micros);
}

/** iOS money (price and currency of a transaction or renewal info), or null when either is missing. */
export function iosMoney(price: number | undefined | null, currency: string | undefined | null, field: string, currencyField: string): Money | null {
  if (typeof price !== 'number' || typeof currency !== 'string') return null;
  return { amountMicros: iosMilliunitsToMicros(price, field), currency: checkCurrency(currency, currencyField) };
}

/** Android money, or null when the rail states none. */
export function androidMoney(
  money: { units?: string | null; nanos?: number | null; currencyCode?: string | null } | null | undefined,
  field: string,
): Money | null {
  if (!money || typeof money.currencyCode !== 'string') return null;
  return { amountMicros: androidMoneyToMicros(money, field), currency: checkCurrency(money.currencyCode, `${field}.currencyCode`) };
}

/** Card money from a minor-unit amount (times a quantity), or null when the rail states none. */
export function cardMoney(minor: number | null | undefined, currency: string | null | undefined, field: string, quantity = 1): Money | null {
  if (minor === null || minor === undefined || typeof currency !== 'string') return null;
  const code = checkCurrency(currency, field.replace(/[^.]+$/, 'currency'));
  return { amountMicros: cardMinorToMicros(minor, code, field, quantity), currency: code };
}
