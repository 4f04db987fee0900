import 'reflect-metadata';
import { parse } from 'node:querystring';
import { ApiError, createValidationPipe } from '#platform';
import { EntitlementsQueryDto, entitlementsQueryOf } from '../../libs/entitlements/src/dto/entitlements-query.dto.js';

type Outcome = { accepted: Record<string, unknown> } | { refused: { status: number; type: string; code: string; message: string } };

function outcomeOf(run: () => unknown): Promise<Outcome> {
  return Promise.resolve()
    .then(run)
    .then(
      (value) => ({ accepted: Object.fromEntries(Object.entries(value as object).filter(([, v]) => v !== undefined)) }),
      (err: unknown) => {
        expect(err).toBeInstanceOf(ApiError);
        const e = err as ApiError;
        return { refused: { status: e.status, type: e.type, code: e.code, message: e.message } };
      },
    );
}

const pipe = createValidationPipe();
const long = 'u'.repeat(257);
// A pair counts as one character for MaxLength (validator.js): 256 of them pass.
const pairs = '\u{1F600}'.repeat(256);

/** Query strings as the server parses them (node:querystring), covering each rule and their order. */
const QUERIES = [
  '',
  'userId=u1',
  'userId=u1&extra=x&__proto__=y&constructor=z',
  'customerId=cdcust_a&serviceCustomerId=cdcust_b',
  'userId=',
  'userId=a&userId=b',
  'anonymousId=a&anonymousId=b&userId=c&userId=d',
  `userId=${long}`,
  `anonymousId=${long}&customerId=${long}`,
  `anonymousId=x&userId=${'u'.repeat(256)}`,
  `userId=${encodeURIComponent(pairs)}`,
  `userId=${encodeURIComponent(pairs + 'x')}`,
  'userId=a%00b',
  'anonymousId=%00&userId=%00',
  'crossdeckCustomerId=%ED%A0%80',
  `userId=%00&anonymousId=${long}`,
  'userId=a&userId=%00',
  'customerId=x&customerId=',
];

describe('GET /v1/entitlements: the fast path reads the query as the validation pipe does', () => {
  const cases: [string, Record<string, unknown>][] = [
    ...QUERIES.map((text): [string, Record<string, unknown>] => [text.slice(0, 60), parse(text)]),
    ['a lone high surrogate', { userId: 'a\ud800' }],
    ['a lone low surrogate after a valid one', { anonymousId: 'x', customerId: '\udc00' }],
    ['an object value', { anonymousId: { a: 'b' } }],
  ];
  it.each(cases)('?%s', async (_label, query) => {
    const fromPipe = await outcomeOf(() => pipe.transform({ ...query }, { type: 'query', metatype: EntitlementsQueryDto, data: undefined }));
    const fromFastPath = await outcomeOf(() => entitlementsQueryOf(query));
    expect(fromFastPath).toEqual(fromPipe);
  });
});
