import { Controller, Get, Headers, Inject, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { APP_CONFIG, type AppConfig, ApiError, type HttpResponse, Public } from '#platform';
import { ConsoleFiles } from './console-files.service.js';

const NOT_BUILT = 'The console is not built: run `npm run build` (it writes the console into CONSOLE_DIR, dist/console by default), then reload this page.\n';

/**
 * The console's pages and assets under /console (only with OPERATOR_TOKEN set: otherwise 404,
 * like the operator API). Public: the page itself holds no data; its API calls are operator calls.
 */
@ApiExcludeController()
@Public()
@Controller('console')
export class ConsoleStaticController {
  constructor(
    private readonly files: ConsoleFiles,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  index(@Headers('accept-encoding') acceptEncoding: string | undefined, @Res() res: HttpResponse): Promise<void> {
    return this.serve('', acceptEncoding, res);
  }

  @Get('*')
  page(
    @Param('*') path: string | string[] | undefined,
    @Headers('accept-encoding') acceptEncoding: string | undefined,
    @Res() res: HttpResponse,
  ): Promise<void> {
    return this.serve(Array.isArray(path) ? path.join('/') : (path ?? ''), acceptEncoding, res);
  }

  private async serve(subPath: string, acceptEncoding: string | undefined, res: HttpResponse): Promise<void> {
    if (!this.config.operatorToken || subPath === 'api' || subPath.startsWith('api/')) {
      throw ApiError.resourceMissing(`No such resource: GET /console/${subPath}`);
    }
    const file = await this.files.lookup(subPath, acceptEncoding);
    if (file.kind === 'missing') throw ApiError.resourceMissing(`No such resource: GET /console/${subPath}`);
    if (file.kind === 'not_built') {
      res.status(503).header('Cache-Control', 'no-store').type('text/plain; charset=utf-8').send(NOT_BUILT);
      return;
    }
    res.status(200).header('Cache-Control', file.cacheControl).type(file.contentType);
    if (file.varies) {
      const vary = res.getHeader('vary');
      res.header('Vary', vary ? `${String(vary)}, Accept-Encoding` : 'Accept-Encoding');
    }
    if (file.encoding) res.header('Content-Encoding', file.encoding);
    res.send(file.body);
  }
}
