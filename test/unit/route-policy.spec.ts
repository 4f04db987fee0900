import { Controller, Get, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Operator, Public, RoutePolicyError, assertEveryRouteHasPolicy, routeTable } from '#platform';
import { RequireApiKey } from '#keys';
import { FastifyAdapter } from '@nestjs/platform-fastify';

@Controller('v1/declared')
class DeclaredController {
  @Get()
  @Public()
  open(): string {
    return 'ok';
  }

  @Post('keyed')
  @RequireApiKey({ kinds: ['secret'] })
  keyed(): string {
    return 'ok';
  }
}

@Operator()
@Controller('admin/v1/things')
class OperatorController {
  @Get()
  list(): string[] {
    return [];
  }
}

@Controller('v1/forgotten')
class UndeclaredController {
  @Get(':id')
  read(): string {
    return 'leak';
  }
}

@Controller('v1/twice')
class DoublyDeclaredController {
  @Get()
  @Public()
  @RequireApiKey({ kinds: ['secret'] })
  both(): string {
    return 'ambiguous';
  }
}

async function appWith(...controllers: (new (...args: never[]) => unknown)[]) {
  const moduleRef = await Test.createTestingModule({ controllers }).compile();
  return moduleRef.createNestApplication(new FastifyAdapter(), { logger: false });
}

describe('route policy: every handler declares exactly one policy', () => {
  it('accepts an application whose every route declares one (handler or controller level)', async () => {
    const app = await appWith(DeclaredController, OperatorController);
    expect(() => assertEveryRouteHasPolicy(app)).not.toThrow();
    expect(routeTable(app).map((r) => `${r.method} ${r.paths.join(',')} ${r.policies.map((p) => p.kind).join('+')}`)).toEqual([
      'GET /admin/v1/things operator',
      'GET /v1/declared public',
      'POST /v1/declared/keyed api_key',
    ]);
    await app.close();
  });

  it('refuses to start with a route that declares none, naming the handler', async () => {
    const app = await appWith(DeclaredController, UndeclaredController);
    expect(() => assertEveryRouteHasPolicy(app)).toThrow(RoutePolicyError);
    expect(() => assertEveryRouteHasPolicy(app)).toThrow(/GET \/v1\/forgotten\/:id \(UndeclaredController\.read\)/);
    await app.close();
  });

  it('refuses a route that declares two', async () => {
    const app = await appWith(DoublyDeclaredController);
    expect(() => assertEveryRouteHasPolicy(app)).toThrow(/DoublyDeclaredController\.both.*declares 2/);
    await app.close();
  });
});
