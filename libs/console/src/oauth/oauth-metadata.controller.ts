import { Controller, Get, Header, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { APP_CONFIG, type AppConfig, ApiError, Public } from '#platform';
import { WORKSPACE_KEY_SCOPES } from '#keys';

/**
 * RFC 8414 authorization server metadata, so OAuth clients (MCP connectors among them) find the
 * endpoints from the service's address alone. Built from PUBLIC_BASE_URL, never from the
 * request's Host or scheme: the answer is cached publicly and must not name an address a caller chose.
 */
@ApiExcludeController()
@Public()
@Controller('.well-known')
export class OauthMetadataController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get('oauth-authorization-server')
  @Header('Cache-Control', 'public, max-age=300')
  metadata(): Record<string, unknown> {
    if (!this.config.operatorToken) throw ApiError.resourceMissing('No such resource: /.well-known/oauth-authorization-server');
    const issuer = this.config.publicBaseUrl;
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
