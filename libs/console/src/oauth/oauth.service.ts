import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import OAuth2Server, { OAuthError, Request as OauthRequest, Response as OauthResponse } from '@node-oauth/oauth2-server';
import {
  APP_CONFIG,
  type AppConfig,
  ApiError,
  type BucketRule,
  Clock,
  ConsoleSessions,
  RateLimiterService,
  Sql,
  csrfTokenMatches,
  csrfTokenOf,
} from '#platform';
import { WorkspaceKeyIssuer } from '#keys';
import { consentCsp, renderConsentPage, renderErrorPage } from './consent-page.js';
import { requestedScopes } from './consent-scopes.js';
import { ACCESS_TOKEN_LIFETIME_S, CODE_LIFETIME_S, OauthModel, REFRESH_TOKEN_LIFETIME_S, sha256Hex } from './oauth-model.js';
import { OauthRepository } from './oauth.repository.js';
import { validateRegistration } from './registration.js';

/** What a handler sends: a status, headers and a JSON or HTML body. */
export interface OauthAnswer {
  status: number;
  headers: Record<string, string>;
  json?: unknown;
  html?: string;
}

/** Dynamic registration is open (RFC 7591): 60 clients a minute per address (and deployment) keep it from filling the table. */
export const REGISTRATIONS: BucketRule = { sustained: 1, burst: 60 };

const redirect = (location: string): OauthAnswer => ({ status: 302, headers: { Location: location, 'Cache-Control': 'no-store' } });
const html = (status: number, body: string, headers: Record<string, string> = {}): OauthAnswer => ({
  status,
  headers: { 'Cache-Control': 'no-store', ...headers },
  html: body,
});
const oauthError = (status: number, error: string, description: string): OauthAnswer => ({
  status,
  headers: { 'Cache-Control': 'no-store' },
  json: { error, error_description: description },
});

/**
 * Connector sign-in (OAuth 2.1 with PKCE) for the CLI and the assistant connector: dynamic
 * registration (RFC 7591, a small route: the library has none), the consent page behind the
 * console session, the code and refresh grants (run by @node-oauth/oauth2-server over
 * OauthModel), and revocation (RFC 7009, also ours).
 */
@Injectable()
export class OauthService {
  private readonly server: OAuth2Server;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
    private readonly model: OauthModel,
    private readonly repo: OauthRepository,
    private readonly issuer: WorkspaceKeyIssuer,
    private readonly limiter: RateLimiterService,
    private readonly sql: Sql,
    private readonly sessions: ConsoleSessions,
  ) {
    this.server = new OAuth2Server({
      model,
      authorizationCodeLifetime: CODE_LIFETIME_S,
      accessTokenLifetime: ACCESS_TOKEN_LIFETIME_S,
      refreshTokenLifetime: REFRESH_TOKEN_LIFETIME_S,
      allowEmptyState: false,
      alwaysIssueNewRefreshToken: true,
      requireClientAuthentication: { authorization_code: false, refresh_token: false },
    });
  }

  /** Connector sign-in goes through the console: off (404) when the operator API is. */
  private operatorToken(): string {
    if (!this.config.operatorToken) throw ApiError.resourceMissing('No such resource: /oauth');
    return this.config.operatorToken;
  }

  async register(body: Record<string, unknown>, address: string): Promise<OauthAnswer> {
    const deployment = sha256Hex(this.operatorToken()).slice(0, 16);
    const decision = await this.limiter.takeFor(`${deployment}:${address}`, 'oauth_register', REGISTRATIONS, 1);
    if (decision.granted < 1) throw ApiError.rateLimited(decision.retryAfterMs, 0);
    const checked = validateRegistration(body);
    if ('error' in checked) return oauthError(400, checked.error, checked.description);
    const id = `oc_${randomBytes(16).toString('hex')}`;
    const createdAt = this.clock.now();
    await this.repo.insertClient({ id, name: checked.clientName, redirectUris: checked.redirectUris, applicationType: checked.applicationType, createdAt });
    return {
      status: 201,
      headers: { 'Cache-Control': 'no-store' },
      json: {
        client_id: id,
        client_id_issued_at: Math.floor(createdAt.getTime() / 1000),
        client_name: checked.clientName,
        redirect_uris: checked.redirectUris,
        application_type: checked.applicationType,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
    };
  }

  /** GET /oauth/authorize: the console sign-in when there is no session, else the consent page. */
  async authorizePage(query: Record<string, string>, originalUrl: string, cookieHeader: string | undefined): Promise<OauthAnswer> {
    const operatorToken = this.operatorToken();
    const checked = await this.checkAuthorizationRequest(query);
    if ('answer' in checked) return checked.answer;
    const session = await this.sessions.live(cookieHeader);
    if (!session) return redirect(`/console/?next=${encodeURIComponent(originalUrl)}`);
    const requested = requestedScopes(query.scope ?? '');
    const hidden: Record<string, string> = { csrf_token: csrfTokenOf(operatorToken, session) };
    for (const name of ['response_type', 'client_id', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method']) hidden[name] = query[name] ?? '';
    const page = renderConsentPage({
      clientName: checked.clientName,
      redirectUri: query.redirect_uri,
      workspaces: await this.issuer.listWorkspaces(),
      requested: [...new Set(requested)],
      hidden,
    });
    return html(200, page, { 'Content-Security-Policy': consentCsp(query.redirect_uri) });
  }

  /** POST /oauth/authorize (the consent form): approve issues a one-time code, deny sends access_denied. */
  async decide(form: Record<string, string | string[]>, cookieHeader: string | undefined): Promise<OauthAnswer> {
    const operatorToken = this.operatorToken();
    const one = (name: string) => (Array.isArray(form[name]) ? String(form[name][0]) : ((form[name] as string | undefined) ?? ''));
    const query: Record<string, string> = {};
    for (const name of ['response_type', 'client_id', 'redirect_uri', 'state', 'code_challenge', 'code_challenge_method']) query[name] = one(name);
    const checked = await this.checkAuthorizationRequest(query);
    if ('answer' in checked) return checked.answer;
    const session = await this.sessions.live(cookieHeader);
    if (!session || !csrfTokenMatches(operatorToken, session, one('csrf_token'))) {
      return html(403, renderErrorPage('Your console session has ended or the form is stale: sign in to the console and start again from the application.'));
    }
    if (one('decision') !== 'approve') return redirect(withParams(query.redirect_uri, { error: 'access_denied', state: query.state }));
    const workspaceId = one('workspace');
    if (!(await this.issuer.workspaceExists(workspaceId))) return html(400, renderErrorPage('Pick one of the workspaces listed.'));
    const scopes = ([] as string[]).concat(form.scope ?? []).map(String);
    const request = new OauthRequest({ method: 'POST', headers: {}, query: {}, body: { ...query, scope: scopes.join(' ') } });
    const response = new OauthResponse({ headers: {} });
    try {
      await this.server.authorize(request, response, { authenticateHandler: { handle: () => ({ workspaceId, familyId: '' }) } });
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
    }
    const location = response.get('location') as string | undefined;
    if (!location) return html(400, renderErrorPage('The sign-in request could not be completed.'));
    return redirect(location);
  }

  /** POST /oauth/token: the library's answer (RFC 6749 body and status) for either grant. */
  async token(body: Record<string, unknown>): Promise<OauthAnswer> {
    this.operatorToken();
    if (body.grant_type === 'authorization_code' && !body.code_verifier) return oauthError(400, 'invalid_request', 'code_verifier is required (PKCE)');
    // The library reads a form body; the CLI posts JSON: the fields are handed over as parsed.
    const request = new OauthRequest({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '1' },
      query: {},
      body: stringFields(body),
    });
    const response = new OauthResponse({ headers: {} });
    // One transaction per grant: a code's or refresh token's use, the tokens it yields and a
    // replay's revocation commit together (an OAuth error answers, and still commits the revocation).
    await this.sql.transaction(async () => {
      try {
        await this.server.token(request, response);
      } catch (err) {
        if (!(err instanceof OAuthError)) throw err;
      }
    });
    // Keys revoked in the transaction: this replica's cache may have read them again before it committed.
    this.issuer.forgetCachedKeys();
    return { status: response.status ?? 200, headers: { 'Cache-Control': 'no-store', Pragma: 'no-cache' }, json: response.body };
  }

  /** POST /oauth/revoke (RFC 7009): a refresh token or an access token ends its whole grant; unknown tokens are 200 too. */
  async revoke(body: Record<string, unknown>): Promise<OauthAnswer> {
    this.operatorToken();
    const token = typeof body.token === 'string' ? body.token : '';
    if (!token) return oauthError(400, 'invalid_request', 'token is required');
    const familyId = token.startsWith('cd_wk_')
      ? await this.familyOfAccessToken(token)
      : ((await this.repo.findRefreshToken(sha256Hex(token)))?.familyId ?? null);
    if (familyId) {
      await this.sql.transaction(() => this.model.revokeFamily(familyId));
      this.issuer.forgetCachedKeys();
    }
    return { status: 200, headers: { 'Cache-Control': 'no-store' }, json: {} };
  }

  private async familyOfAccessToken(token: string): Promise<string | null> {
    const keyId = await this.issuer.idOf(token);
    return keyId ? this.repo.familyOfAccessKey(keyId) : null;
  }

  /**
   * The checks made before anything is shown or redirected: an unknown client or redirect URI
   * is an error page (never a redirect to an unverified address); a bad request otherwise is
   * sent back to the client's redirect URI.
   */
  private async checkAuthorizationRequest(query: Record<string, string>): Promise<{ clientName: string } | { answer: OauthAnswer }> {
    const client = query.client_id ? await this.repo.findClient(query.client_id) : null;
    if (!client) return { answer: html(400, renderErrorPage('Unknown client: register it first (POST /oauth/register).')) };
    if (!query.redirect_uri || !client.redirectUris.includes(query.redirect_uri)) {
      return { answer: html(400, renderErrorPage('redirect_uri is not one of the URIs this client registered.')) };
    }
    const back = (error: string, description: string) => ({
      answer: redirect(withParams(query.redirect_uri, { error, error_description: description, state: query.state })),
    });
    if (query.response_type !== 'code') return back('unsupported_response_type', 'response_type must be code');
    if (!query.state) return back('invalid_request', 'state is required');
    if (!query.code_challenge || query.code_challenge_method !== 'S256')
      return back('invalid_request', 'PKCE is required: code_challenge with code_challenge_method=S256');
    return { clientName: client.name };
  }
}

function withParams(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') url.searchParams.set(name, value);
  return url.toString();
}

function stringFields(body: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) if (typeof value === 'string') out[name] = value;
  return out;
}
