import { Inject, Injectable } from '@nestjs/common';
import { APP_LOGGER, ApiError, type AppLogger, type HttpRequest } from '#platform';
import type { PurchaseRail } from '../model/rail-model.js';
import { RailSettingsRepository, type RailSettingsRecord } from '../model/rail-settings.repository.js';

const RAIL_SETTINGS = Symbol('railSettings');

/** The checks every store webhook makes, in the documented order (docs/rails.md, "What every webhook answers"). */
@Injectable()
export class WebhookGate {
  constructor(
    private readonly settings: RailSettingsRepository,
    @Inject(APP_LOGGER) private readonly logger: AppLogger,
  ) {}

  /** 404 resource_missing unless the project exists, is not archived and has the rail enabled. */
  async requireRail<T extends object>(projectId: string, rail: PurchaseRail): Promise<RailSettingsRecord<T>> {
    const record = await this.settings.findOfLiveProject<T>({ projectId }, rail);
    // rail_settings references projects: a row means the project exists (and is not archived).
    if (!record || !record.enabled) throw ApiError.resourceMissing(`No project ${projectId} with the ${rail} rail enabled`);
    return record;
  }

  /**
   * The route policy's gate of `@StoreWebhook(rail)` (registered by StoreNotificationsModule):
   * 404 before any byte of the body is read; the settings it loaded stay on the request for the
   * handler (settingsOf), so they are read once per notification.
   */
  async open(req: HttpRequest, rail: PurchaseRail): Promise<void> {
    (req as unknown as Record<symbol, unknown>)[RAIL_SETTINGS] = await this.requireRail(String((req.params as Record<string, unknown>).projectId), rail);
  }

  /** The rail settings the gate loaded for this request. */
  settingsOf<T extends object>(req: HttpRequest): RailSettingsRecord<T> {
    const settings = (req as unknown as Record<symbol, RailSettingsRecord<T> | undefined>)[RAIL_SETTINGS];
    if (!settings) throw new Error('store webhook handled without its route-policy gate');
    return settings;
  }

  /** The raw body as a JSON object, else 400 invalid_param_value. */
  jsonObject(raw: Buffer): Record<string, unknown> {
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      throw ApiError.invalidParam('Request body is not JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw ApiError.invalidParam('Request body must be a JSON object');
    return body as Record<string, unknown>;
  }

  /** 400 invalid_signature, with one log line giving the reason (never the secret or the body). */
  invalidSignature(projectId: string, rail: PurchaseRail, reason: string, requestId: string): ApiError {
    this.logger.warn({ requestId, rail, projectId, reason }, 'store notification refused: authentication failed');
    return ApiError.invalidRequest('invalid_signature', `The notification could not be authenticated: ${reason}`);
  }

  /** 503 internal_error / rail_unavailable: the rail retries. */
  railUnavailable(projectId: string, rail: PurchaseRail, reason: string, requestId: string): ApiError {
    this.logger.warn({ requestId, rail, projectId, reason }, 'store notification deferred: the rail could not be read');
    return new ApiError(503, 'internal_error', 'rail_unavailable', `The ${rail} API could not be read; retry later`);
  }
}
