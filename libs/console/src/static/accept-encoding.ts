/** The precompressed variants the console build writes next to each asset (`.br`, `.gz`), best first. */
export const ENCODINGS = ['br', 'gzip'] as const;
export type Encoding = (typeof ENCODINGS)[number];

/**
 * The encoding to answer with, from a request's `Accept-Encoding` (RFC 9110 §12.5.3) and the
 * variants on disk: the one with the highest q-value (`*` stands for any encoding not named),
 * brotli before gzip on a tie; undefined for the file as it is. `q=0` refuses an encoding.
 */
export function chooseEncoding(acceptEncoding: string | undefined, available: readonly Encoding[]): Encoding | undefined {
  if (!acceptEncoding || available.length === 0) return undefined;
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    let q = 1;
    for (const param of params) {
      const [key, value] = param.trim().split('=');
      if (key === 'q') q = Number.isFinite(Number(value)) ? Math.min(1, Math.max(0, Number(value))) : 0;
    }
    weights.set(name === 'x-gzip' ? 'gzip' : name, q);
  }
  let best: Encoding | undefined;
  let bestQ = 0;
  for (const encoding of ENCODINGS) {
    if (!available.includes(encoding)) continue;
    const q = weights.get(encoding) ?? weights.get('*') ?? 0;
    if (q > bestQ) {
      best = encoding;
      bestQ = q;
    }
  }
  return best;
}
