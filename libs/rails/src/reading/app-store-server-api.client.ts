import { Inject, Injectable } from '@nestjs/common';
import { APIException, AppStoreServerAPIClient, type ConsumptionRequest, Environment, type StatusResponse } from '@apple/app-store-server-library';
import type { URLSearchParams } from 'node:url';
import { APP_CONFIG, type AppConfig, Clock, type Env } from '#platform';
import { retryAfterMsOf } from '../android/android-publisher.client.js';
import type { IosStoreSecrets } from '../secrets/rail-secrets.js';
import { RailReadUnavailable, backsOff } from './rail-read-errors.js';

/**
 * The store library's App Store Server API client with only the API root replaced: the
 * library picks Apple's production or sandbox URL from the environment and keeps it in a
 * private field, with no option to change it, so this subclass overrides the one protected
 * method that sends the request (`makeFetchRequest`) to send it to the configured root
 * (APP_STORE_SERVER_API_BASE_URL / …_SANDBOX_BASE_URL) through Node's fetch, with the read
 * timeout (the library sets none) and the store's `Retry-After` kept on a `429`. Request
 * signing (the ES256 bearer token), paths and the answer's validation stay the library's.
 */
export class RootedAppStoreServerAPIClient extends AppStoreServerAPIClient {
  constructor(
    secrets: IosStoreSecrets,
    bundleId: string,
    environment: Environment,
    private readonly root: string,
    private readonly timeoutMs: number,
    private readonly nowMs: () => number,
  ) {
    super(secrets.privateKey, secrets.keyId, secrets.issuerId, bundleId, environment);
  }

  protected override async makeFetchRequest(
    path: string,
    parsedQueryParameters: URLSearchParams,
    method: string,
    requestBody: string | Buffer | undefined,
    headers: { [key: string]: string },
  ): Promise<never> {
    let response: Response;
    try {
      response = await fetch(`${this.root}${path}?${parsedQueryParameters.toString()}`, {
        method,
        body: requestBody,
        headers,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch {
      throw new RailReadUnavailable('App Store Server API: no answer within the timeout or connection failed');
    }
    if (response.status === 429) {
      await response.body?.cancel();
      throw new RailReadUnavailable('App Store Server API answered HTTP 429', true, retryAfterMsOf(response.headers.get('retry-after'), this.nowMs()));
    }
    // The library reads ok, status and json() of the answer: Node's Response has them.
    return response as never;
  }
}

/** What "Get All Subscription Statuses" answered in one environment; null status when the store does not know the id (`404`). */
export interface AppStoreStatusRead {
  env: Env;
  status: StatusResponse | null;
}

/**
 * Reads subscription statuses from the App Store Server API with the project's API key
 * (`ios_store` `{ issuerId, keyId, privateKey }`), production first, then sandbox.
 */
@Injectable()
export class AppStoreServerApiClient {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * The statuses of the transaction's subscriptions: the first environment that knows the id
   * (production, then sandbox, as the store advises); `status` null when neither does
   * (`404`). RailReadUnavailable as soon as an environment cannot be read: whether the id is
   * a production one is then unknown.
   */
  async allSubscriptionStatuses(secrets: IosStoreSecrets, bundleId: string, originalTransactionId: string): Promise<AppStoreStatusRead> {
    for (const env of ['production', 'sandbox'] as const) {
      try {
        const status = await this.client(secrets, bundleId, env).getAllSubscriptionStatuses(originalTransactionId);
        return { env, status };
      } catch (err) {
        if (err instanceof APIException && err.httpStatusCode === 404) continue;
        throw unavailable(err);
      }
    }
    return { env: 'production', status: null };
  }

  /**
   * "Send Consumption Information" (`PUT /inApps/v2/transactions/consumption/{transactionId}`)
   * in the request's environment. RailReadUnavailable when the store could not take it now
   * (timeout, `429`, `5xx`: try again); StoreRefusedRequest when it answered another `4xx`.
   */
  async sendConsumptionInformation(secrets: IosStoreSecrets, bundleId: string, env: Env, transactionId: string, body: ConsumptionRequest): Promise<void> {
    try {
      await this.client(secrets, bundleId, env).sendConsumptionInformation(transactionId, body);
    } catch (err) {
      if (err instanceof APIException && err.httpStatusCode >= 400 && err.httpStatusCode < 500 && err.httpStatusCode !== 429) {
        throw new StoreRefusedRequest(`App Store Server API answered HTTP ${err.httpStatusCode}${err.apiError ? ` (errorCode ${err.apiError})` : ''}`);
      }
      throw unavailable(err);
    }
  }

  private client(secrets: IosStoreSecrets, bundleId: string, env: Env): RootedAppStoreServerAPIClient {
    const production = env === 'production';
    return new RootedAppStoreServerAPIClient(
      secrets,
      bundleId,
      production ? Environment.PRODUCTION : Environment.SANDBOX,
      production ? this.config.appStoreServerApiBaseUrl : this.config.appStoreServerApiSandboxBaseUrl,
      this.config.railReadTimeoutMs,
      () => this.clock.nowMs(),
    );
  }
}

/** The store refused a request (a `4xx` other than `429`): sending it again changes nothing. */
export class StoreRefusedRequest extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreRefusedRequest';
  }
}

function unavailable(err: unknown): RailReadUnavailable {
  if (err instanceof RailReadUnavailable) return err;
  if (err instanceof APIException) return new RailReadUnavailable(`App Store Server API answered HTTP ${err.httpStatusCode}`, backsOff(err.httpStatusCode));
  // The key cannot sign (jsonwebtoken), or the answer is not the API's format: name the kind only.
  const message =
    err instanceof Error && /Unexpected response body format/.test(err.message) ? 'an answer not in the API format' : 'a request that could not be made';
  return new RailReadUnavailable(`App Store Server API: ${message}`);
}
