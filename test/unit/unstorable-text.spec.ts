import 'reflect-metadata';
import { Type } from 'class-transformer';
import { Allow, IsOptional, IsString, ValidateNested } from 'class-validator';
import { ApiError, OwnTextRules, createValidationPipe, findUnstorableText, isStorableText } from '#platform';
import { haveSameMap } from '../support/hidden-classes.js';

class ItemDto {
  @IsString()
  label: string;
}

class BodyDto {
  @IsOptional()
  @IsString()
  name?: string;

  @IsOptional()
  @ValidateNested({ each: true })
  @Type(() => ItemDto)
  items?: ItemDto[];

  @Allow()
  @OwnTextRules()
  free?: unknown;

  @Allow()
  map?: Record<string, unknown>;
}

class ChildDto extends BodyDto {
  @Allow()
  @OwnTextRules()
  more?: unknown;
}

async function pipe(body: unknown, metatype: new () => object = BodyDto): Promise<unknown> {
  return createValidationPipe().transform(body, { type: 'body', metatype, data: undefined });
}

describe('the validation layer refuses text PostgreSQL cannot store as sent', () => {
  it('isStorableText: NUL and unpaired surrogates, never a pair', () => {
    expect(isStorableText('plain \ud83d\ude00 text')).toBe(true);
    for (const bad of ['\u0000', 'a\ud800', '\udc00b', '\ud800\ud800\udc00x\udbff']) expect(isStorableText(bad)).toBe(false);
  });

  it('findUnstorableText names the path of the first bad string or key', () => {
    expect(findUnstorableText({ a: ['ok', { b: 'x\ud800' }] })).toBe('a[1].b');
    expect(findUnstorableText({ a: { ['k\u0000']: 1 } })).toBe('a (a key)');
    expect(findUnstorableText('\u0000', 'userId')).toBe('userId');
    expect(findUnstorableText({ a: 1, b: [true, null, 'fine'] })).toBeNull();
  });

  it('the pipe answers 400 invalid_param_value naming the field, after whitelisting', async () => {
    await expect(pipe({ name: 'a\u0000' })).rejects.toThrow(
      new ApiError(400, 'invalid_request_error', 'invalid_param_value', 'name: must not contain NUL characters or unpaired surrogates'),
    );
    await expect(pipe({ items: [{ label: 'ok' }, { label: '\udfff' }] })).rejects.toThrow(
      'items[1].label: must not contain NUL characters or unpaired surrogates',
    );
    await expect(pipe({ map: { ['\ud800']: 1 } })).rejects.toThrow('map (a key): must not contain');
    // Unknown fields are stripped before the scan; fields with their own rules are not scanned.
    expect(await pipe({ name: 'ok', unknown: '\u0000', free: { x: '\ud800' } })).toEqual({ name: 'ok', free: { x: '\ud800' } });
    expect(await pipe({ free: '\u0000', more: ['\ud800'] }, ChildDto)).toEqual({ free: '\u0000', more: ['\ud800'] });
  });

  it('a handler that takes the raw body validates it itself', async () => {
    const raw = { events: [{ name: '\u0000' }] };
    expect(await createValidationPipe().transform(raw, { type: 'body', metatype: Object, data: undefined })).toBe(raw);
  });
});

describe('the validation pipe on the hot path', () => {
  it('hands class-validator options of one hidden class on every call (no new V8 map per request)', async () => {
    const validationPipe = createValidationPipe();
    const seen: unknown[] = [];
    const spied = validationPipe as unknown as { validate: (...args: unknown[]) => unknown };
    const validate = spied.validate.bind(validationPipe);
    spied.validate = (object: unknown, options: unknown) => {
      seen.push(options);
      return validate(object, options);
    };
    for (let i = 0; i < 50; i++) await validationPipe.transform({ name: `n${i}` }, { type: 'body', metatype: BodyDto, data: undefined });
    expect(seen).toHaveLength(50);
    // Once warm (V8 may change the map a few times early on), one map for all.
    const settled = seen.slice(-25);
    expect(settled.filter((options) => !haveSameMap(options, settled[0]))).toEqual([]);
  });
});
