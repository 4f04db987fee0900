/**
 * Apple refund requests: the iOS rail's consumption settings and the body of "Send Consumption
 * Information" (App Store Server API v2, `ConsumptionRequest`). Pure.
 */
import { type ConsumptionRequest, DeliveryStatus, RefundPreference } from '@apple/app-store-server-library';

export const CONSUMPTION_MODES = ['off', 'manual', 'auto'] as const;
export type ConsumptionMode = (typeof CONSUMPTION_MODES)[number];
export const REFUND_PREFERENCES = ['decline', 'grant_full', 'grant_prorated', 'no_preference'] as const;
export type RefundPreferenceSetting = (typeof REFUND_PREFERENCES)[number];
export const REFUND_REQUEST_STATES = ['pending', 'sent', 'expired'] as const;
export type RefundRequestState = (typeof REFUND_REQUEST_STATES)[number];

/** Apple answers a consumption request within 12 hours of it. */
export const REFUND_REQUEST_DEADLINE_SECONDS = 12 * 3600;

/** What the service answers about a refund request (the project's settings, or a manual answer). */
export interface ConsumptionAnswerFields {
  customerConsented: boolean;
  refundPreference: RefundPreferenceSetting;
  sampleContentProvided: boolean;
}

/** `consumption` of the iOS rail's settings: how the project answers refund requests. */
export interface ConsumptionSettings extends ConsumptionAnswerFields {
  mode: ConsumptionMode;
}

export const DEFAULT_CONSUMPTION: ConsumptionSettings = {
  mode: 'off',
  customerConsented: false,
  refundPreference: 'no_preference',
  sampleContentProvided: false,
};

/** The stored answer of a sent request. */
export interface RefundRequestAnswer extends ConsumptionAnswerFields {
  deliveryStatus: 'delivered';
  /** `auto` (the project's settings) or `manual` (`POST …/answer`). */
  source: 'auto' | 'manual';
  /** Unix seconds. */
  sentAt: number;
}

/** The project's consumption settings with the defaults filled (absent or partial: `off`). */
export function consumptionSettingsOf(settings: { consumption?: Partial<ConsumptionSettings> } | null | undefined): ConsumptionSettings {
  const stored = settings?.consumption ?? {};
  return {
    mode: CONSUMPTION_MODES.includes(stored.mode as ConsumptionMode) ? (stored.mode as ConsumptionMode) : 'off',
    customerConsented: stored.customerConsented === true,
    refundPreference: REFUND_PREFERENCES.includes(stored.refundPreference as RefundPreferenceSetting)
      ? (stored.refundPreference as RefundPreferenceSetting)
      : 'no_preference',
    sampleContentProvided: stored.sampleContentProvided === true,
  };
}

/** Whether the automatic answer may be sent: `auto` with the customer's consent (the store refuses any other). */
export function answersAutomatically(settings: ConsumptionSettings): boolean {
  return settings.mode === 'auto' && settings.customerConsented;
}

const PREFERENCES: Record<Exclude<RefundPreferenceSetting, 'no_preference'>, RefundPreference> = {
  decline: RefundPreference.DECLINE,
  grant_full: RefundPreference.GRANT_FULL,
  grant_prorated: RefundPreference.GRANT_PRORATED,
};

/**
 * The body of "Send Consumption Information": the app delivered what was bought (the service
 * granted it), the consent and sample flags, and the refund preference (left out for
 * `no_preference`). No consumption percentage: for an auto-renewable subscription the store
 * works it out itself. Throws when the customer did not consent (the store refuses that body).
 */
export function consumptionRequestBody(fields: ConsumptionAnswerFields): ConsumptionRequest {
  if (!fields.customerConsented) throw new Error('consumption information is sent only with the customer consent');
  return {
    customerConsented: true,
    deliveryStatus: DeliveryStatus.DELIVERED,
    sampleContentProvided: fields.sampleContentProvided,
    ...(fields.refundPreference !== 'no_preference' ? { refundPreference: PREFERENCES[fields.refundPreference] } : {}),
  };
}

/** Whether a pending request may still be answered at `nowMs` (strictly before its deadline). */
export function answerableAt(deadlineSeconds: number, nowMs: number): boolean {
  return nowMs < deadlineSeconds * 1000;
}
