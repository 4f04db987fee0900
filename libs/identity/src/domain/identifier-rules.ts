/** `userId` of identify: 1 to 256 chars from letters, digits, `_ - . : @`. */
export const USER_ID_PATTERN = /^[A-Za-z0-9_\-.:@]{1,256}$/;
/** `anonymousId` of identify: 1 to 128 chars from letters, digits, `_ -`. */
export const ANONYMOUS_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
/** Lowercase RFC 4122 UUID (version 1 to 8, variant 10xx). */
export const APP_ACCOUNT_TOKEN_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Alias node types this context writes; other contexts may add rail customer id types. */
export const ALIAS_TYPES = {
  developer: 'developer',
  anonymous: 'anonymous',
  iosAppAccountToken: 'ios_app_account_token',
} as const;

/** Node types that are personal identifiers (erased); every other type is a payment-rail record (kept). */
export const PERSONAL_ALIAS_TYPES: readonly string[] = [ALIAS_TYPES.developer, ALIAS_TYPES.anonymous];
