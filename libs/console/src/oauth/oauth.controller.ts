import { Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { BodyLimit, type HttpRequest, type HttpResponse, Public, rawBodyOf } from '#platform';
import { CONSENT_CSS } from './consent-page.js';
import { type OauthAnswer, OauthService } from './oauth.service.js';

const FORM_LIMIT = 16 * 1024;

/**
 * Connector sign-in (OAuth 2.1): public routes with the protocol's own error bodies (RFC 6749,
 * 7591, 7009), so standard OAuth clients read them; not part of the API document. Bodies are
 * read raw: JSON (what the CLI sends) or a form (the consent page, standard clients).
 */
@ApiExcludeController()
@Public()
@Controller('oauth')
export class OauthController {
  constructor(private readonly oauth: OauthService) {}

  @Post('register')
  @BodyLimit(FORM_LIMIT, { raw: true })
  async register(@Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    send(res, await this.oauth.register(parseBody(req), req.ip));
  }

  @Get('authorize')
  async authorize(@Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    send(res, await this.oauth.authorizePage(stringQuery(req.query), req.originalUrl, req.headers.cookie));
  }

  @Post('authorize')
  @BodyLimit(FORM_LIMIT, { raw: true })
  async decide(@Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    send(res, await this.oauth.decide(parseBody(req) as Record<string, string | string[]>, req.headers.cookie));
  }

  @Post('token')
  @BodyLimit(FORM_LIMIT, { raw: true })
  async token(@Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    send(res, await this.oauth.token(parseBody(req)));
  }

  @Post('revoke')
  @HttpCode(200)
  @BodyLimit(FORM_LIMIT, { raw: true })
  async revoke(@Req() req: HttpRequest, @Res() res: HttpResponse): Promise<void> {
    send(res, await this.oauth.revoke(parseBody(req)));
  }

  @Get('assets/consent.css')
  stylesheet(@Res() res: HttpResponse): void {
    res.status(200).header('Cache-Control', 'public, max-age=3600').type('text/css; charset=utf-8').send(CONSENT_CSS);
  }
}

function send(res: HttpResponse, answer: OauthAnswer): void {
  res.status(answer.status);
  for (const [name, value] of Object.entries(answer.headers)) res.header(name, value);
  if (answer.html !== undefined) res.type('text/html; charset=utf-8').send(answer.html);
  else if (answer.json !== undefined) res.type('application/json').send(JSON.stringify(answer.json));
  else res.send();
}

/** A JSON object or a form (`a=1&scope=x&scope=y`: repeated names become arrays); anything else is empty. */
function parseBody(req: HttpRequest): Record<string, unknown> {
  const raw = rawBodyOf(req).toString('utf8');
  const type = String(req.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('application/json')) {
    try {
      const parsed: unknown = JSON.parse(raw);
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  }
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(raw)) {
    const existing = out[name];
    out[name] = existing === undefined ? value : ([] as string[]).concat(existing, value);
  }
  return out;
}

function stringQuery(query: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string') out[name] = first;
  }
  return out;
}
