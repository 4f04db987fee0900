// Generic checks and serialisers of text and JSON bound for PostgreSQL: ingestion uses them
// on its hot path, source maps and migration reuse them. isStorableText is in validation.ts.

/** Length in characters (code points); cheap when the UTF-16 length already decides it. */
export function charLength(value: string, max: number): number {
  if (value.length <= max) return value.length;
  let count = 0;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

/** The UTF-8 byte length of `value` when it is above `max`, else false (skipped when the UTF-16 length already decides it). */
export function utf8BytesOver(value: string, max: number): number | false {
  // One UTF-16 code unit is at most 3 UTF-8 bytes (a surrogate pair, two units, is 4).
  if (value.length * 3 <= max) return false;
  const bytes = Buffer.byteLength(value, 'utf8');
  return bytes > max ? bytes : false;
}

/**
 * False when PostgreSQL cannot store JSON text made by JSON.stringify (which escapes both as \\uXXXX: \\u0000, and
 * \\ud800 to \\udfff, since only unpaired surrogates are escaped). One linear pass from escape
 * to escape (a regular expression over runs of backslashes backtracks quadratically).
 */
export function isStorableJson(json: string): boolean {
  for (let i = json.indexOf('\\'); i !== -1;) {
    if (json.charCodeAt(i + 1) !== 0x75 /* u */) {
      // A two-character escape (backslash, quote, n, t, ...): what follows it is not escaped.
      i = json.indexOf('\\', i + 2);
      continue;
    }
    const hex = json.slice(i + 2, i + 6).toLowerCase();
    if (hex === '0000' || (hex.charCodeAt(0) === 0x64 /* d */ && '89abcdef'.includes(hex[1]))) return false;
    i = json.indexOf('\\', i + 6);
  }
  return true;
}

/**
 * JSON.stringify of a value made by JSON.parse, without recursion. The native serialiser
 * recurses and overflows the stack past a few thousand levels of nesting, which a 1 MB body
 * easily holds; this one is only the fallback for that case (same output, slower).
 */
export function stringifyParsedJson(root: unknown): string {
  let out = '';
  const open: { values: unknown[]; keys: string[] | null; next: number }[] = [];
  let value: unknown = root;
  for (;;) {
    if (Array.isArray(value)) {
      out += '[';
      open.push({ values: value, keys: null, next: 0 });
    } else if (typeof value === 'object' && value !== null) {
      const object = value as Record<string, unknown>;
      const keys = Object.keys(object);
      out += '{';
      open.push({ values: keys.map((key) => object[key]), keys, next: 0 });
    } else {
      out += JSON.stringify(value) ?? 'null';
    }
    for (;;) {
      const frame = open[open.length - 1];
      if (frame === undefined) return out;
      if (frame.next < frame.values.length) {
        if (frame.next > 0) out += ',';
        if (frame.keys) out += `${JSON.stringify(frame.keys[frame.next])}:`;
        value = frame.values[frame.next++];
        break;
      }
      out += frame.keys ? '}' : ']';
      open.pop();
    }
  }
}

/** JSON text of a parsed JSON value; deep nesting falls back to the non-recursive serialiser. */
export function serializeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (err instanceof RangeError) return stringifyParsedJson(value);
    throw err;
  }
}
