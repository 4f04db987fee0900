import { createHash, createSign } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { androidpublisher, type androidpublisher_v3 } from '@googleapis/androidpublisher';
import { OAuth2Client } from 'google-auth-library';
import { APP_CONFIG, type AppConfig, Clock } from '#platform';
import type { ServiceAccountKey } from '../secrets/rail-secrets.js';
import type { AndroidProductRead, AndroidSubscriptionRead } from './android-notifications.js';

export const ANDROID_PUBLISHER_SCOPE = 'https://www.googleapis.com/auth/androidpublisher';
/** A cached access token is renewed this long before it expires. */
const TOKEN_MARGIN_MS = 60_000;

/** The Publisher API or the token endpoint could not be read: the webhook answers 503 rail_unavailable. */
export class AndroidPublisherUnavailable extends Error {
  constructor(
    message: string,
    /** The API's HTTP status when it answered (404: no such purchase). */
    readonly status?: number,
    /** The API's Retry-After, in ms, when it sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'AndroidPublisherUnavailable';
  }
}

/** Retry-After (seconds or an HTTP date) in ms; undefined when absent or unreadable. */
export function retryAfterMsOf(value: string | null | undefined, nowMs: number): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

function headerOf(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

function base64url(input: Buffer | string): string {
  return Buffer.from(input).toString('base64url');
}

/**
 * Reads purchases from the Android Publisher API with the official client
 * (`@googleapis/androidpublisher`, root from ANDROID_PUBLISHER_BASE_URL) authenticated with
 * the project's service account. google-auth-library's JWT client posts its assertion to
 * Google's fixed token URL (its gtoken dependency ignores the key's `token_uri`), so the
 * service signs the assertion (RS256, aud = token_uri) and exchanges it at the key's
 * `token_uri` itself; the access token is handed to the client through an OAuth2Client.
 */
@Injectable()
export class AndroidPublisherClient {
  private readonly tokens = new Map<string, { accessToken: string; expiresAtMs: number }>();

  /**
   * Per-call options of the client: the read timeout; no retries of the library's own (it
   * retries timeouts, 429 and 5xx three times by default, which would stretch the timeout and
   * override the service's back-off: Pub/Sub redelivers a notification, the reads back off);
   * and Node's own fetch (gaxios otherwise imports the ESM-only node-fetch lazily, which the
   * CommonJS test runner cannot load).
   */
  private readonly callOptions: { timeout: number; retry: boolean; fetchImplementation: typeof fetch };

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.callOptions = { timeout: config.railReadTimeoutMs, retry: false, fetchImplementation: globalThis.fetch };
  }

  async getSubscription(account: ServiceAccountKey, packageName: string, token: string): Promise<AndroidSubscriptionRead> {
    const api = await this.api(account);
    return this.call('purchases.subscriptionsv2.get', async () => (await api.purchases.subscriptionsv2.get({ packageName, token }, this.callOptions)).data);
  }

  async getProduct(account: ServiceAccountKey, packageName: string, productId: string, token: string): Promise<AndroidProductRead> {
    const api = await this.api(account);
    return this.call('purchases.products.get', async () => (await api.purchases.products.get({ packageName, productId, token }, this.callOptions)).data);
  }

  /**
   * One page of `purchases.voidedpurchases.list` (type 1: subscriptions and one-time products)
   * between `startTimeMs` and `endTimeMs`; `pageToken` from the previous page's `nextPageToken`.
   */
  async listVoided(
    account: ServiceAccountKey,
    packageName: string,
    page: { startTimeMs: number; endTimeMs: number; pageToken: string | null; maxResults: number },
  ): Promise<{ entries: androidpublisher_v3.Schema$VoidedPurchase[]; nextPageToken: string | null }> {
    const api = await this.api(account);
    const data = await this.call('purchases.voidedpurchases.list', async () => {
      const params: androidpublisher_v3.Params$Resource$Purchases$Voidedpurchases$List = {
        packageName,
        type: 1,
        startTime: String(page.startTimeMs),
        endTime: String(page.endTimeMs),
        maxResults: page.maxResults,
        ...(page.pageToken ? { token: page.pageToken } : {}),
      };
      return (await api.purchases.voidedpurchases.list(params, this.callOptions)).data;
    });
    return { entries: data.voidedPurchases ?? [], nextPageToken: data.tokenPagination?.nextPageToken || null };
  }

  async acknowledgeSubscription(account: ServiceAccountKey, packageName: string, subscriptionId: string, token: string): Promise<void> {
    const api = await this.api(account);
    await this.call('purchases.subscriptions.acknowledge', () =>
      api.purchases.subscriptions.acknowledge({ packageName, subscriptionId, token, requestBody: {} }, this.callOptions),
    );
  }

  async acknowledgeProduct(account: ServiceAccountKey, packageName: string, productId: string, token: string): Promise<void> {
    const api = await this.api(account);
    await this.call('purchases.products.acknowledge', () =>
      api.purchases.products.acknowledge({ packageName, productId, token, requestBody: {} }, this.callOptions),
    );
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const response = (err as { response?: { status?: number; headers?: unknown } }).response;
      const status = (err as { status?: number }).status ?? response?.status;
      const detail = status ? `HTTP ${status}` : err instanceof Error ? err.message.split('\n')[0].slice(0, 200) : 'unknown error';
      const retryAfterMs = retryAfterMsOf(headerOf(response?.headers, 'retry-after'), this.clock.nowMs());
      throw new AndroidPublisherUnavailable(`${what} failed (${detail})`, typeof status === 'number' ? status : undefined, retryAfterMs);
    }
  }

  private async api(account: ServiceAccountKey): Promise<androidpublisher_v3.Androidpublisher> {
    const auth = new OAuth2Client();
    auth.setCredentials({ access_token: await this.accessToken(account) });
    return androidpublisher({ version: 'v3', auth, rootUrl: this.config.androidPublisherBaseUrl });
  }

  /** An access token for the service account, from its `token_uri` (cached until shortly before expiry). */
  private async accessToken(account: ServiceAccountKey): Promise<string> {
    const cacheKey = createHash('sha256').update(`${account.client_email}\u0000${account.token_uri}\u0000${account.private_key}`).digest('hex');
    const nowMs = this.clock.nowMs();
    const cached = this.tokens.get(cacheKey);
    if (cached && cached.expiresAtMs - TOKEN_MARGIN_MS > nowMs) return cached.accessToken;

    const iat = Math.floor(nowMs / 1000);
    const header = { alg: 'RS256', typ: 'JWT', ...(account.private_key_id ? { kid: account.private_key_id } : {}) };
    const claims = { iss: account.client_email, scope: ANDROID_PUBLISHER_SCOPE, aud: account.token_uri, iat, exp: iat + 3600 };
    const unsigned = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
    let assertion: string;
    try {
      assertion = `${unsigned}.${base64url(createSign('RSA-SHA256').update(unsigned).sign(account.private_key))}`;
    } catch {
      throw new AndroidPublisherUnavailable('the service account private_key cannot sign');
    }
    let response: Response;
    try {
      response = await fetch(account.token_uri, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
        signal: AbortSignal.timeout(this.config.railReadTimeoutMs),
      });
    } catch {
      throw new AndroidPublisherUnavailable('the token endpoint could not be reached');
    }
    const body = (await response.json().catch(() => null)) as { access_token?: unknown; expires_in?: unknown } | null;
    if (!response.ok || !body || typeof body.access_token !== 'string') {
      throw new AndroidPublisherUnavailable(`the token endpoint refused the assertion (HTTP ${response.status})`);
    }
    const expiresIn = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3600;
    this.tokens.set(cacheKey, { accessToken: body.access_token, expiresAtMs: nowMs + expiresIn * 1000 });
    return body.access_token;
  }
}
