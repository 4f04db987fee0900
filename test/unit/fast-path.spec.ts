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
