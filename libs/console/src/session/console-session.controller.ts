import { Body, Controller, Delete, Get, Header, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApiErrors, CONSOLE_SESSION, CSRF_HEADER, type HttpRequest, type HttpResponse, Public } from '#platform';
import { ConsoleSessionView, CreateConsoleSessionDto } from './console-session.dto.js';
import { ConsoleSessionService } from './console-session.service.js';

/**
 * The console's sign-in. Public routes: the token is checked here (sign-in) or the cookie is
 * (the session's state); the operator API itself accepts the cookie (RoutePolicyGuard).
 */
@ApiTags('console')
@Public()
@Controller('console/api/session')
export class ConsoleSessionController {
  constructor(private readonly sessions: ConsoleSessionService) {}

  @Post()
  @HttpCode(204)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    operationId: 'adminCreateConsoleSession',
    summary: 'Sign in to the console with the operator token: sets the console_session cookie (HttpOnly, SameSite=Strict, 12 hours)',
  })
  @ApiNoContentResponse({ description: 'Signed in; Set-Cookie: console_session' })
  @ApiErrors({ 400: ['missing_required_param', 'invalid_param_value'], 401: ['invalid_operator_token'], 404: ['resource_missing'], 429: ['rate_limited'] })
  async signIn(@Body() body: CreateConsoleSessionDto, @Req() req: HttpRequest, @Res({ passthrough: true }) res: HttpResponse): Promise<void> {
    res.header('Set-Cookie', await this.sessions.signIn(body.token, req.ip));
  }

  @Get()
  @Header('Cache-Control', 'no-store')
  @ApiSecurity(CONSOLE_SESSION)
  @ApiOperation({ operationId: 'adminGetConsoleSession', summary: 'The current console session: its expiry and the CSRF token its changes send' })
  @ApiOkResponse({ type: ConsoleSessionView })
  @ApiErrors({ 401: ['invalid_operator_token'], 404: ['resource_missing'] })
  current(@Req() req: HttpRequest): Promise<ConsoleSessionView> {
    return this.sessions.current(req.headers.cookie);
  }

  @Delete()
  @HttpCode(204)
  @Header('Cache-Control', 'no-store')
  @ApiSecurity(CONSOLE_SESSION)
  @ApiOperation({
    operationId: 'adminDeleteConsoleSession',
    summary: 'Sign out of the console: ends the session on every replica (with its X-CSRF-Token) and clears the session cookie',
  })
  @ApiNoContentResponse({ description: 'Signed out; Set-Cookie clears console_session' })
  @ApiErrors({ 403: ['csrf_token_invalid'], 404: ['resource_missing'] })
  async signOut(@Req() req: HttpRequest, @Res({ passthrough: true }) res: HttpResponse): Promise<void> {
    res.header('Set-Cookie', await this.sessions.signOut(req.headers.cookie, req.headers[CSRF_HEADER]));
  }
}
