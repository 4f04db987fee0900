// Display helpers: Unix seconds (or ms) as dates, money in minor units or micros.
export function date(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  return new Date(seconds * 1000).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';
}

export function dateMs(ms: number | null | undefined): string {
  return ms === null || ms === undefined ? '—' : date(Math.floor(ms / 1000));
}

export function measured(value: number | string | null | undefined): string {
  return value === null || value === undefined ? 'not measured' : String(value);
}

export function money(minor: number | null | undefined, currency = 'USD'): string {
  if (minor === null || minor === undefined) return 'not measured';
  return new Intl.NumberFormat('en', { style: 'currency', currency }).format(minor / 100);
}

/** Micros (1,000,000 = one unit of the currency) as money. */
export function micros(amountMicros: number | null | undefined, currency = 'USD'): string {
  if (amountMicros === null || amountMicros === undefined) return 'not measured';
  return new Intl.NumberFormat('en', { style: 'currency', currency }).format(amountMicros / 1_000_000);
}
