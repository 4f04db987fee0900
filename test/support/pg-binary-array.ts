/** Reads back a one-dimensional array parameter in PostgreSQL's binary format (tests only). */
export function decodeBinaryArray(buf: Buffer): { elementOid: number; values: Array<Buffer | null> } {
  const ndim = buf.readInt32BE(0);
  if (ndim !== 1) throw new Error(`expected one dimension, got ${ndim}`);
  const elementOid = buf.readUInt32BE(8);
  const count = buf.readInt32BE(12);
  if (buf.readInt32BE(16) !== 1) throw new Error('lower bound must be 1');
  const values: Array<Buffer | null> = [];
  let offset = 20;
  for (let i = 0; i < count; i++) {
    const length = buf.readInt32BE(offset);
    offset += 4;
    if (length < 0) {
      values.push(null);
    } else {
      values.push(buf.subarray(offset, offset + length));
      offset += length;
    }
  }
  if (offset !== buf.length) throw new Error(`${buf.length - offset} trailing bytes`);
  return { elementOid, values };
}

export const asText = (value: Buffer | null): string | null => (value === null ? null : value.toString('utf8'));
export const asInt8 = (value: Buffer | null): number | null => (value === null ? null : Number(value.readBigInt64BE(0)));
export const asInt4 = (value: Buffer | null): number | null => (value === null ? null : value.readInt32BE(0));
