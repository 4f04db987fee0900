export const API_KEY_BEARER = 'apiKeyBearer';
export const API_KEY_HEADER = 'apiKeyHeader';
/** The clients' spelling of the alias header (Crossdeck-Api-Key); accepted wherever Service-Api-Key is. */
export const API_KEY_CLIENT_HEADER = 'apiKeyClientHeader';
export const OPERATOR_BEARER = 'operatorToken';
/** The console's signed session cookie: accepted by the operator API beside the bearer token. */
export const CONSOLE_SESSION = 'consoleSession';
