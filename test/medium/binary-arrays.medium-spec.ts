import { JSON_OID, int4ArrayParam, int8ArrayParam, textArrayParam } from '../../libs/platform/src/database/binary-arrays.js';
import { createMediumContext, type MediumContext } from '../support/medium.js';

/** The binary array parameters as PostgreSQL itself reads them, through the same `pg` driver the API uses. */
describe('medium: binary array parameters', () => {
  let m: MediumContext;

  beforeAll(async () => {
    // The platform alone, without Redis: nothing here uses it, and a connection closed while it connects logs after the run.
    m = await createMediumContext({ modules: [], env: { REDIS_URL: undefined } });
  });
  afterAll(() => m?.close());

  it('text: NULLs, empty strings, quotes, backslashes, braces and multi-byte characters arrive byte for byte', async () => {
    const values = ['plain', null, '', 'quo"te', 'back\\slash', '{a,b}', 'NULL', 'tab\tnew\nline', 'é😀\u2028', 'x'.repeat(70_000)];
    const [row] = await m.dataSource.query(`SELECT $1::text[] AS v, cardinality($1::text[]) AS n, array_position($1::text[], NULL) AS first_null`, [
      textArrayParam(values),
    ]);
    expect(row.v).toEqual(values);
    expect(row.n).toBe(values.length);
    expect(row.first_null).toBe(2);
  });

  it('int4 and int8: negative, zero and the safe-integer bounds; NULLs', async () => {
    const int8 = [0, -1, 1, 4_294_967_296, -4_294_967_297, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, null, 1_795_000_000_000];
    const int4 = [0, -1, 2_147_483_647, -2_147_483_648, null, 20_500];
    const [row] = await m.dataSource.query(`SELECT $1::bigint[]::text[] AS big, $2::int[] AS small`, [int8ArrayParam(int8), int4ArrayParam(int4)]);
    expect(row.big).toEqual(int8.map((v) => (v === null ? null : String(v))));
    expect(row.small).toEqual(int4);
  });

  it('json elements are validated by PostgreSQL; an element type that does not match the cast is refused', async () => {
    const [row] = await m.dataSource.query(`SELECT ($1::json[])[1]->>'a' AS a, ($1::json[])[2] IS NULL AS second_null`, [
      textArrayParam(['{"a":"b\\"c"}', null], JSON_OID),
    ]);
    expect(row).toEqual({ a: 'b"c', second_null: true });
    await expect(m.dataSource.query(`SELECT $1::json[]`, [textArrayParam(['{not json'], JSON_OID)])).rejects.toThrow(/invalid input syntax for type json/);
    await expect(m.dataSource.query(`SELECT $1::text[]`, [textArrayParam(['{}'], JSON_OID)])).rejects.toThrow(/array element type/);
  });

  it('empty arrays and columns of NULLs only', async () => {
    const [row] = await m.dataSource.query(`SELECT $1::text[] AS t, $2::bigint[] AS b, $3::int[] AS i, $4::json[] AS j, cardinality($1::text[]) AS n`, [
      textArrayParam([]),
      int8ArrayParam([null, null]),
      int4ArrayParam([]),
      textArrayParam([null], JSON_OID),
    ]);
    expect(row).toEqual({ t: [], b: [null, null], i: [], j: [null], n: 0 });
  });

  it('refuses numbers that are not safe integers, or too wide for int4', () => {
    expect(() => int8ArrayParam([1.5])).toThrow(RangeError);
    expect(() => int8ArrayParam([2 ** 53])).toThrow(RangeError);
    expect(() => int4ArrayParam([2 ** 31])).toThrow(RangeError);
  });
});
