import 'reflect-metadata';
import { IsInt, IsOptional, IsString, MaxLength, getMetadataStorage, validate } from 'class-validator';
import { ApiError, createValidationPipe, memoizeValidationMetadata } from '#platform';

class QueryDto {
  @IsOptional()
  @MaxLength(8)
  @IsString()
  userId?: string;
}

class ChildQueryDto extends QueryDto {
  @IsOptional()
  @IsString()
  anonymousId?: string;
}

async function query(value: unknown, metatype: new () => object = QueryDto): Promise<unknown> {
  return createValidationPipe().transform(value, { type: 'query', metatype, data: undefined });
}

async function refusal(value: unknown, metatype?: new () => object): Promise<ApiError> {
  const err = await query(value, metatype).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe("class-validator's rules, kept per class once the pipe exists", () => {
  it('answers the same on every call: accepted, stripped of unknown fields, refused with the first failure', async () => {
    for (let i = 0; i < 3; i++) {
      await expect(query({ userId: 'u1', extra: 'x' })).resolves.toEqual({ userId: 'u1' });
      expect((await refusal({ userId: ['a', 'b'] })).message).toBe('userId must be a string');
      expect((await refusal({ userId: 'much-too-long' })).message).toBe('userId must be shorter than or equal to 8 characters');
    }
  });

  it("a subclass keeps its parent's rules beside its own", async () => {
    await expect(query({ userId: 'u1', anonymousId: 'a1', extra: 1 }, ChildQueryDto)).resolves.toEqual({ userId: 'u1', anonymousId: 'a1' });
    expect((await refusal({ userId: 'much-too-long' }, ChildQueryDto)).message).toBe('userId must be shorter than or equal to 8 characters');
    expect((await refusal({ anonymousId: 7 }, ChildQueryDto)).message).toBe('anonymousId must be a string');
  });

  it('a rule registered after a class was validated applies from then on', async () => {
    class Late {
      @IsString()
      name!: string;
    }
    const late = Object.assign(new Late(), { name: 'n', count: 'not a number' });
    expect(await validate(late)).toEqual([]);
    // A decorator applied now (as a class defined later would) registers more metadata.
    IsInt()(Late.prototype, 'count');
    const errors = await validate(late);
    expect(errors.map((e) => e.property)).toEqual(['count']);
  });

  it('a subclass defined after its parent was validated gets both sets of rules', async () => {
    class Parent {
      @IsString()
      name!: string;
    }
    expect(await validate(Object.assign(new Parent(), { name: 'p' }))).toEqual([]);
    class Later extends Parent {
      @IsInt()
      count!: number;
    }
    const errors = await validate(Object.assign(new Later(), { name: 1, count: 'x' }));
    expect(errors.map((e) => e.property).sort()).toEqual(['count', 'name']);
  });

  it('is installed once on the storage', () => {
    const storage = getMetadataStorage();
    memoizeValidationMetadata(storage);
    const memoized = storage.getTargetValidationMetadatas;
    memoizeValidationMetadata(storage);
    expect(storage.getTargetValidationMetadatas).toBe(memoized);
  });
});
