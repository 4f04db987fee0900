import { Controller, Get, Header, Inject, Req } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { APP_CONFIG, type AppConfig, ApiError, type HttpRequest, Public } from '#platform';
import { WORKSPACE_KEY_SCOPES } from '#keys';

/**
 * RFC 8414 authorization server metadata, so OAuth clients (MCP connectors among them) find the
 * endpoints from the service's address alone. Relative to the address the client used.
 */
@ApiExcludeController()
@Public()
@Controller('.well-known')
export class OauthMetadataController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get('oauth-authorization-server')
  @Header('Cache-Control', 'public, max-age=300')
  metadata(@Req() req: HttpRequest): Record<string, unknown> {
    if (!this.config.operatorToken) throw ApiError.resourceMissing('No such resource: /.well-known/oauth-authorization-server');
    const issuer = `${req.protocol}://${req.host}`;
    return {
      issuer,
      authorization_endpoint: `${issuer}/oauth/authorize`,
      token_endpoint: `${issuer}/oauth/token`,
      registration_endpoint: `${issuer}/oauth/register`,
      revocation_endpoint: `${issuer}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      scopes_supported: WORKSPACE_KEY_SCOPES,
    };
  }
}
