import { Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { type HttpRequest, type HttpResponse, pathOf } from '#platform';
import { KeysModule } from '#keys';
import { OauthController } from './oauth/oauth.controller.js';
import { OauthMetadataController } from './oauth/oauth-metadata.controller.js';
import { OauthModel } from './oauth/oauth-model.js';
import { OauthRepository } from './oauth/oauth.repository.js';
import { OauthService } from './oauth/oauth.service.js';
import { isConsolePath, setConsoleHeaders } from './console-headers.js';
import { ConsoleSessionController } from './session/console-session.controller.js';
import { ConsoleSessionService } from './session/console-session.service.js';
import { ConsoleFiles } from './static/console-files.service.js';
import { ConsoleStaticController } from './static/console-static.controller.js';

/** The operator console: its pages (CONSOLE_DIR) under /console, its signed session, and connector sign-in (OAuth) through it. */
@Module({
  imports: [KeysModule],
  controllers: [ConsoleSessionController, ConsoleStaticController, OauthController, OauthMetadataController],
  providers: [ConsoleSessionService, ConsoleFiles, OauthService, OauthModel, OauthRepository],
})
export class ConsoleModule implements OnModuleInit {
  constructor(private readonly adapter: HttpAdapterHost) {}

  /** Every answer under /console and /oauth (errors and 404s included) carries the console's headers. */
  onModuleInit(): void {
    const fastify = this.adapter.httpAdapter?.getInstance<FastifyInstance>();
    fastify?.addHook('onRequest', (req: HttpRequest, res: HttpResponse, done: () => void) => {
      if (isConsolePath(pathOf(req))) setConsoleHeaders(res);
      done();
    });
  }
}
