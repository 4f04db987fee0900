import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, ApiError, type AppLogger, Clock, type CrossTenant, Sql, type TenantScope } from '#platform';
import type { RefundRequestFact } from '../lifecycle/lifecycle-outcome.js';
import type { IosStoreSettings } from '../ios/ios-store-settings.js';
import { RailSettingsRepository } from '../model/rail-settings.repository.js';
import { AppStoreServerApiClient, StoreRefusedRequest } from '../reading/app-store-server-api.client.js';
import { RailReadUnavailable } from '../reading/rail-read-errors.js';
import { RailSecrets } from '../secrets/rail-secrets.service.js';
import {
  type ConsumptionAnswerFields,
  REFUND_REQUEST_STATES,
  type RefundRequestAnswer,
  type RefundRequestState,
  answerableAt,
  answersAutomatically,
  consumptionRequestBody,
  consumptionSettingsOf,
} from './consumption.js';
import { type RefundRequestRecord, RefundRequestsRepository } from './refund-requests.repository.js';
import type { RefundRequestList, RefundRequestView } from './refund-request.view.js';

/** Lists answer at most this many requests, newest first. */
const LIST_LIMIT = 100;
/** An automatic answer the store could not take is tried again after 30 s, doubling up to 10 min (always before the deadline). */
const RETRY_BASE_MS = 30_000;
const RETRY_MAX_MS = 600_000;

export type AutomaticAnswerOutcome = 'sent' | 'deferred' | 'refused';

export function refundRequestView(record: RefundRequestRecord): RefundRequestView {
  return {
    object: 'refund_request',
    id: record.id,
    rail: record.rail,
    subscriptionId: record.subscriptionId,
    transactionId: record.transactionId,
    serviceCustomerId: record.customerId,
    receivedAt: record.receivedAt,
    deadline: record.deadline,
    state: record.state,
    answer: record.answer,
  };
}

/** The `state` filter of a list: absent, or one of the states (else 400 naming it). */
export function stateFilter(state: string | undefined): RefundRequestState | null {
  if (state === undefined || state === '') return null;
  if (!(REFUND_REQUEST_STATES as readonly string[]).includes(state)) throw ApiError.invalidParam('state must be pending, sent or expired');
  return state as RefundRequestState;
}

/**
 * Apple refund requests (`CONSUMPTION_REQUEST`): recorded once per notification, answered
 * through the App Store Server API's "Send Consumption Information" either automatically from
 * the iOS rail's consumption settings (RefundRequestsJob) or by the developer (`POST
 * /v1/server/refund-requests/{id}/answer`); nothing is sent without the customer's consent,
 * nor after the deadline (the request is then `expired`).
 */
@Injectable()
export class RefundRequests {
  constructor(
    private readonly sql: Sql,
    private readonly clock: Clock,
    private readonly requests: RefundRequestsRepository,
    private readonly settings: RailSettingsRepository,
    private readonly secrets: RailSecrets,
    private readonly apple: AppStoreServerApiClient,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /** Records the request a `CONSUMPTION_REQUEST` derived (in the notification's transaction); a re-sent one changes nothing. */
  record(scope: TenantScope, fact: RefundRequestFact, customerId: string): Promise<boolean> {
    return this.requests.record(scope, { ...fact, customerId }, this.clock.nowMs());
  }

  async list(scope: TenantScope, state: RefundRequestState | null): Promise<RefundRequestList> {
    const rows = await this.requests.list(scope, { state, limit: LIST_LIMIT });
    return { object: 'list', data: rows.map(refundRequestView) };
  }

  /**
   * The developer's answer: validated, sent to the store at once and recorded. 404 for a request
   * this project and environment does not hold; 400 when it is no longer pending or its
   * deadline passed, or without the customer's consent; 503 when the store could not take it.
   */
  async answer(scope: TenantScope, id: string, fields: ConsumptionAnswerFields): Promise<RefundRequestView> {
    if (!fields.customerConsented) {
      throw ApiError.invalidParam("customerConsented must be true: the App Store takes consumption information only with the customer's consent");
    }
    return this.sql.transaction(async () => {
      const request = await this.requests.lock(scope, id);
      if (!request) throw ApiError.resourceMissing(`No refund request ${id} in this project and environment`);
      if (request.state !== 'pending') throw ApiError.invalidParam(`Refund request ${id} is already ${request.state}`);
      const nowMs = this.clock.nowMs();
      if (!answerableAt(request.deadline, nowMs)) throw ApiError.invalidParam(`Refund request ${id} passed its deadline`);
      try {
        await this.send(scope, request, fields);
      } catch (err) {
        if (err instanceof StoreRefusedRequest) throw ApiError.invalidParam(`The App Store refused the consumption information: ${err.message}`);
        if (err instanceof RailReadUnavailable) {
          this.logger.warn({ projectId: scope.projectId, rail: 'ios_store', reason: err.message }, 'refund request: the answer could not be sent');
          throw new ApiError(503, 'internal_error', 'rail_unavailable', 'The ios_store API could not take the answer; retry later');
        }
        throw err;
      }
      const answer = answerOf(fields, 'manual', nowMs);
      await this.requests.markSent(scope, id, answer, nowMs);
      return refundRequestView({ ...request, state: 'sent', answer });
    });
  }

  /** Pending requests past their deadline become `expired`. */
  expireDue(sweep: CrossTenant): Promise<number> {
    return this.requests.expireDue(sweep, this.clock.nowMs());
  }

  /**
   * Answers the oldest request due for its automatic answer, in a transaction of its own that
   * holds the request's lock while the store is called; null when none is due.
   */
  answerNextDue(sweep: CrossTenant): Promise<{ id: string; outcome: AutomaticAnswerOutcome } | null> {
    return this.sql.transaction(async () => {
      const nowMs = this.clock.nowMs();
      const due = await this.requests.claimDue(sweep, nowMs);
      if (!due) return null;
      const scope = sweep.scopeOf(due);
      const record = await this.settings.find<IosStoreSettings>(scope, 'ios_store');
      const consumption = consumptionSettingsOf(record?.settings);
      // claimDue already checked the settings; they are read again for the answer's fields.
      if (!answersAutomatically(consumption)) {
        await this.requests.deferAttempt(scope, due.id, { nextAttemptAtMs: nowMs + RETRY_MAX_MS, error: 'the rail no longer answers automatically', nowMs });
        return { id: due.id, outcome: 'deferred' as const };
      }
      try {
        await this.send(scope, due, consumption);
      } catch (err) {
        const refused = err instanceof StoreRefusedRequest;
        if (!refused && !(err instanceof RailReadUnavailable)) throw err;
        const retryMs = Math.min(RETRY_BASE_MS * 2 ** Math.min(due.attempts, 10), RETRY_MAX_MS);
        // A refused answer is not sent again: the request waits for its deadline (or a manual answer).
        const nextAttemptAtMs = refused ? due.deadline * 1000 : nowMs + retryMs;
        await this.requests.deferAttempt(scope, due.id, { nextAttemptAtMs, error: err.message, nowMs });
        this.logger.warn(
          { projectId: scope.projectId, rail: 'ios_store', refundRequestId: due.id, reason: err.message },
          refused ? 'refund request: the store refused the automatic answer' : 'refund request: the automatic answer could not be sent; tried again later',
        );
        return { id: due.id, outcome: refused ? ('refused' as const) : ('deferred' as const) };
      }
      await this.requests.markSent(scope, due.id, answerOf(consumption, 'auto', nowMs), nowMs);
      return { id: due.id, outcome: 'sent' as const };
    });
  }

  /** Sends the answer through the App Store Server API with the project's API key, in the request's environment. */
  private async send(scope: TenantScope, request: RefundRequestRecord, fields: ConsumptionAnswerFields): Promise<void> {
    const secrets = this.secrets.iosStore(scope.projectId);
    const settings = await this.settings.find<IosStoreSettings>(scope, 'ios_store');
    if (!secrets) throw new RailReadUnavailable('no App Store Server API key is configured for the project');
    if (!settings?.enabled || !settings.settings.bundleId) throw new RailReadUnavailable('the iOS rail is not configured');
    if (!request.transactionId) throw new StoreRefusedRequest('the request names no transaction');
    await this.apple.sendConsumptionInformation(secrets, settings.settings.bundleId, scope.env, request.transactionId, consumptionRequestBody(fields));
  }
}

function answerOf(fields: ConsumptionAnswerFields, source: 'auto' | 'manual', nowMs: number): RefundRequestAnswer {
  return {
    customerConsented: fields.customerConsented,
    refundPreference: fields.refundPreference,
    sampleContentProvided: fields.sampleContentProvided,
    deliveryStatus: 'delivered',
    source,
    sentAt: Math.floor(nowMs / 1000),
  };
}
