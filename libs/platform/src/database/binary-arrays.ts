/**
 * One-dimensional PostgreSQL arrays in the binary wire format, as `pg` query parameters
 * (`pg` sends a Buffer parameter in binary format). For the hot bulk write, columns of
 * values cross the socket as length-prefixed bytes: PostgreSQL copies them instead of
 * lexing a JSON document or an array literal with its quoting and escapes, and nothing is
 * escaped on our side. The element type must match the SQL cast of the parameter
 * (`$8::text[]` takes TEXT_OID elements; a mismatch is an error, never a silent coercion).
 *
 * Layout (PostgreSQL's array_send): ndim, has-nulls flag, element type oid, then per
 * dimension its length and lower bound (1), then per element a 32-bit byte length (-1 for
 * NULL) and the element's own binary form.
 */

export const INT4_OID = 23;
export const INT8_OID = 20;
export const TEXT_OID = 25;
/** `json` receives its text form and validates it. */
export const JSON_OID = 114;

const HEADER_BYTES = 20;

function writeHeader(out: Buffer, elementOid: number, count: number, hasNull: boolean): void {
  out.writeInt32BE(1, 0);
  out.writeInt32BE(hasNull ? 1 : 0, 4);
  out.writeUInt32BE(elementOid, 8);
  out.writeInt32BE(count, 12);
  out.writeInt32BE(1, 16);
}

function header(size: number, elementOid: number, count: number, hasNull: boolean): Buffer {
  const out = Buffer.allocUnsafe(size);
  writeHeader(out, elementOid, count, hasNull);
  return out;
}

/** Reused for every text array: elements are written once, at an upper bound of their size, then copied out. */
let scratch = Buffer.allocUnsafe(64 * 1024);

/**
 * Text-like elements (text, json, varchar...) as UTF-8. JavaScript strings that are not
 * well-formed UTF-16 are written with U+FFFD, as Buffer does; callers store only validated
 * text (no NUL, no lone surrogate). Each element is written once into a scratch buffer sized
 * for the worst case (3 bytes per UTF-16 unit) and its length filled in after: no separate
 * pass to measure every string (a third less time on a realistic batch).
 */
export function textArrayParam(values: readonly (string | null)[], elementOid: number = TEXT_OID): Buffer {
  let bound = HEADER_BYTES + 4 * values.length;
  let hasNull = false;
  for (const value of values) {
    if (value === null) hasNull = true;
    else bound += 3 * value.length;
  }
  if (scratch.length < bound) scratch = Buffer.allocUnsafe(Math.max(bound, 2 * scratch.length));
  const out = scratch;
  let offset = HEADER_BYTES;
  for (const value of values) {
    if (value === null) {
      out.writeInt32BE(-1, offset);
      offset += 4;
      continue;
    }
    const length = value.length === 0 ? 0 : out.write(value, offset + 4, 'utf8');
    out.writeInt32BE(length, offset);
    offset += 4 + length;
  }
  writeHeader(out, elementOid, values.length, hasNull);
  return Buffer.from(out.subarray(0, offset));
}

function fixedWidthArray(values: readonly (number | null)[], elementOid: number, width: 4 | 8): Buffer {
  let nulls = 0;
  for (const value of values) if (value === null) nulls++;
  const out = header(HEADER_BYTES + 4 * values.length + width * (values.length - nulls), elementOid, values.length, nulls > 0);
  let offset = HEADER_BYTES;
  for (const value of values) {
    if (value === null) {
      out.writeInt32BE(-1, offset);
      offset += 4;
      continue;
    }
    if (!Number.isSafeInteger(value) || (width === 4 && (value < -0x8000_0000 || value > 0x7fff_ffff))) {
      throw new RangeError(`not a ${width * 8}-bit integer: ${value}`);
    }
    out.writeInt32BE(width, offset);
    if (width === 4) {
      out.writeInt32BE(value, offset + 4);
    } else {
      // High and low 32 bits of a safe integer, two's complement (negative values included).
      out.writeInt32BE(Math.floor(value / 0x1_0000_0000), offset + 4);
      out.writeUInt32BE(value >>> 0, offset + 8);
    }
    offset += 4 + width;
  }
  return out;
}

/** `int4[]` from 32-bit integers. */
export function int4ArrayParam(values: readonly (number | null)[]): Buffer {
  return fixedWidthArray(values, INT4_OID, 4);
}

/** `int8[]` from safe integers (|n| < 2^53). */
export function int8ArrayParam(values: readonly (number | null)[]): Buffer {
  return fixedWidthArray(values, INT8_OID, 8);
}

/** The element type and length of a one-dimensional array parameter (null when it is not one). */
export function arrayParamShape(param: Uint8Array): { elementOid: number; count: number } | null {
  if (param.byteLength < HEADER_BYTES) return null;
  const view = new DataView(param.buffer, param.byteOffset, param.byteLength);
  if (view.getInt32(0) !== 1 || view.getInt32(16) !== 1) return null;
  return { elementOid: view.getUint32(8), count: view.getInt32(12) };
}

/**
 * One array of the elements of several arrays of one element type, in order: their element
 * sections are copied as they are (no element is decoded or re-encoded).
 */
export function concatArrayParams(params: readonly Uint8Array[]): Buffer {
  let size = HEADER_BYTES;
  let count = 0;
  let hasNull = false;
  let elementOid: number | undefined;
  for (const param of params) {
    const shape = arrayParamShape(param);
    if (!shape || (elementOid !== undefined && shape.elementOid !== elementOid)) throw new RangeError('not one-dimensional arrays of one element type');
    elementOid = shape.elementOid;
    count += shape.count;
    hasNull ||= new DataView(param.buffer, param.byteOffset, param.byteLength).getInt32(4) !== 0;
    size += param.byteLength - HEADER_BYTES;
  }
  if (elementOid === undefined) throw new RangeError('no arrays to concatenate');
  const out = header(size, elementOid, count, hasNull);
  let offset = HEADER_BYTES;
  for (const param of params) {
    out.set(param.subarray(HEADER_BYTES), offset);
    offset += param.byteLength - HEADER_BYTES;
  }
  return out;
}
