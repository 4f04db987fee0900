/**
 * The rail secrets file (`RAIL_SECRETS_FILE`, docs/rails.md "The rail secrets file"): typed and validated
 * here. Error messages name the path of the bad field, never its value (secrets never reach
 * the logs).
 */

export interface CardPaymentsSecrets {
  /** Every listed secret is tried (rotation); empty when the project only reads the rail. */
  webhookSecrets: string[];
  /** A secret or restricted key of the processor (read-only on customers and subscriptions), for reading the rail. */
  apiKey?: string;
}

/** A Google service-account key (the JSON file Google issues); extra fields are kept. */
export interface ServiceAccountKey {
  type?: string;
  client_email: string;
  private_key: string;
  token_uri: string;
  private_key_id?: string;
  [field: string]: unknown;
}

export interface AndroidStoreSecrets {
  pushToken: string;
  serviceAccount: ServiceAccountKey;
}

export interface IosStoreSecrets {
  issuerId: string;
  keyId: string;
  privateKey: string;
}

export interface ProjectRailSecrets {
  card_payments?: CardPaymentsSecrets;
  android_store?: AndroidStoreSecrets;
  ios_store?: IosStoreSecrets;
}

export interface RailSecretsContent {
  projects: Record<string, ProjectRailSecrets>;
}

export class RailSecretsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RailSecretsError';
  }
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new RailSecretsError(`${path} must be a non-empty string`);
  return value;
}

function object(value: unknown, path: string): Json {
  if (!isObject(value)) throw new RailSecretsError(`${path} must be an object`);
  return value;
}

function httpsOrHttpUrl(value: unknown, path: string): string {
  const raw = nonEmptyString(value, path);
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new RailSecretsError(`${path} must be a URL`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new RailSecretsError(`${path} must be an http(s) URL`);
  return raw;
}

function cardPayments(value: unknown, path: string): CardPaymentsSecrets {
  const card = object(value, path);
  const apiKey = card.apiKey === undefined ? undefined : nonEmptyString(card.apiKey, `${path}.apiKey`);
  const secrets = card.webhookSecrets;
  // A project may read the rail (apiKey) without receiving its webhooks, and the other way round.
  if (secrets === undefined && apiKey !== undefined) return { webhookSecrets: [], apiKey };
  if (!Array.isArray(secrets) || secrets.length === 0) throw new RailSecretsError(`${path}.webhookSecrets must be a non-empty array of strings`);
  return {
    webhookSecrets: secrets.map((secret, i) => nonEmptyString(secret, `${path}.webhookSecrets[${i}]`)),
    ...(apiKey !== undefined ? { apiKey } : {}),
  };
}

function androidStore(value: unknown, path: string): AndroidStoreSecrets {
  const android = object(value, path);
  const pushToken = nonEmptyString(android.pushToken, `${path}.pushToken`);
  if (pushToken.length < 16) throw new RailSecretsError(`${path}.pushToken must be at least 16 characters`);
  const account = object(android.serviceAccount, `${path}.serviceAccount`);
  if (account.type !== undefined && account.type !== 'service_account') throw new RailSecretsError(`${path}.serviceAccount.type must be "service_account"`);
  const privateKey = nonEmptyString(account.private_key, `${path}.serviceAccount.private_key`);
  if (!privateKey.includes('PRIVATE KEY-----')) throw new RailSecretsError(`${path}.serviceAccount.private_key must be a PEM private key`);
  return {
    pushToken,
    serviceAccount: {
      ...account,
      client_email: nonEmptyString(account.client_email, `${path}.serviceAccount.client_email`),
      private_key: privateKey,
      token_uri: httpsOrHttpUrl(account.token_uri, `${path}.serviceAccount.token_uri`),
    },
  };
}

function iosStore(value: unknown, path: string): IosStoreSecrets {
  const ios = object(value, path);
  const privateKey = nonEmptyString(ios.privateKey, `${path}.privateKey`);
  if (!privateKey.includes('PRIVATE KEY-----')) throw new RailSecretsError(`${path}.privateKey must be a PEM private key`);
  return {
    issuerId: nonEmptyString(ios.issuerId, `${path}.issuerId`),
    keyId: nonEmptyString(ios.keyId, `${path}.keyId`),
    privateKey,
  };
}

/** Parses and validates the file's text. Throws RailSecretsError (message without any secret). */
export function parseRailSecrets(text: string): RailSecretsContent {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new RailSecretsError('is not valid JSON');
  }
  const root = object(raw, '(root)');
  const projects = object(root.projects, 'projects');
  const out: Record<string, ProjectRailSecrets> = {};
  for (const [projectId, value] of Object.entries(projects)) {
    const path = `projects.${projectId}`;
    const entry = object(value, path);
    const secrets: ProjectRailSecrets = {};
    if (entry.card_payments !== undefined) secrets.card_payments = cardPayments(entry.card_payments, `${path}.card_payments`);
    if (entry.android_store !== undefined) secrets.android_store = androidStore(entry.android_store, `${path}.android_store`);
    if (entry.ios_store !== undefined) secrets.ios_store = iosStore(entry.ios_store, `${path}.ios_store`);
    out[projectId] = secrets;
  }
  return { projects: out };
}

export const EMPTY_RAIL_SECRETS: RailSecretsContent = { projects: {} };
