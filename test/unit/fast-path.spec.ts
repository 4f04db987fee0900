import { type CallHandler, Controller, Get, type INestApplication, Post, SetMetadata, UseInterceptors } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { FastPath, Public, ROUTE_IDEMPOTENT, ServiceHttpAdapter, installFastPaths } from '#platform';

const passThrough = { intercept: (_context: unknown, next: CallHandler) => next.handle() };

@Controller('v1/intercepted')
class InterceptedController {
  @Get()
  @Public()
  @UseInterceptors(passThrough)
  @FastPath(() => [])
  read(): string {
    return 'ok';
  }
}

@Controller('v1/posted')
class PostedController {
  @Post()
  @Public()
  @FastPath(() => [])
  write(): string {
    return 'ok';
  }
}

@Controller('v1/replayed')
class IdempotentController {
  @Get()
  @Public()
  // What @Idempotent() declares beside its interceptor.
  @SetMetadata(ROUTE_IDEMPOTENT, true)
  @FastPath(() => [])
  read(): string {
    return 'ok';
  }
}

@Controller('v1/plain')
class PlainController {
  @Get()
  @Public()
  read(): string {
    return 'ok';
  }
}

async function appWith(controller: new (...args: never[]) => unknown): Promise<INestApplication> {
  const module = await Test.createTestingModule({ controllers: [controller] }).compile();
  return module.createNestApplication(new ServiceHttpAdapter(), { logger: false });
}

describe('installFastPaths: a fast path only where it serves the route as Nest would', () => {
  it.each([
    [InterceptedController, /InterceptedController\.read: the route declares __interceptors__/],
    [IdempotentController, /IdempotentController\.read: the route declares platform:idempotent/],
    [PostedController, /PostedController\.write: GET routes only/],
  ])('refuses %p at start-up', async (controller, message) => {
    const app = await appWith(controller);
    expect(() => installFastPaths(app)).toThrow(message);
    await app.close();
  });

  it('leaves an application without @FastPath() routes as it is', async () => {
    const app = await appWith(PlainController);
    installFastPaths(app);
    await app.init();
    expect((app.getHttpAdapter() as ServiceHttpAdapter).fastPaths()).toEqual([]);
    await app.close();
  });
});

/**
 * A fast path skips Nest's global enhancers too. Today the only ones are the route policy guard
 * (whose rule the fast path runs through RouteAdmission), the validation pipe (which the route's
 * `args` replaces, compared by a test) and the exception filter (which the fast path calls). A
 * new global interceptor, pipe or guard would not run on the fast routes: this test stops it
 * until the fast path learns it.
 */
describe('global enhancers a fast path would skip', () => {
  const { readdirSync, readFileSync, statSync } = jest.requireActual<typeof import('node:fs')>('node:fs');
  const { join, resolve } = jest.requireActual<typeof import('node:path')>('node:path');
  const sources = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : sources(path);
      return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
    });
  const root = resolve(__dirname, '../..');
  const code = [...sources(join(root, 'apps/api/src')), ...sources(join(root, 'libs'))].map((path) => ({ path, text: readFileSync(path, 'utf8') }));

  it('are only the route policy guard, the validation pipe and the exception filter', () => {
    const found = code.flatMap(({ path, text }) =>
      [...text.matchAll(/useGlobal(?:Interceptors|Pipes|Guards|Filters)\(|provide: APP_INTERCEPTOR|provide: APP_(?:GUARD|PIPE|FILTER), use\w+: (\w+)/g)]
        .filter((match) => !['RoutePolicyGuard', 'createValidationPipe', 'AllExceptionsFilter'].includes(match[1] ?? ''))
        .map((match) => `${path.slice(root.length + 1)}: ${match[0]}`),
    );
    expect(found).toEqual([]);
  });
});
