import { Injectable } from '@nestjs/common';
import type { ApiKeyPolicy } from './route-policy.js';
import type { TenantScope } from '../tenancy/tenant-scope.js';
import type { BucketRule } from '../rate-limit/token-bucket.js';
import type { HttpRequest, HttpResponse } from '../http/http-types.js';

/** Verifies an API key for a route (the keys context); throws ApiError or returns the caller. */
export type ApiKeyAuthenticator = (policy: ApiKeyPolicy, req: HttpRequest, res: HttpResponse) => Promise<{ scope: TenantScope; auth: unknown }>;

/**
 * Opens a store webhook (the rails context): 404 resource_missing for an unknown project or a
 * rail not enabled for it. Signature checks come later, on the raw body.
 */
export type StoreWebhookGate = (req: HttpRequest) => Promise<void>;

/**
 * Admits a request's body before it is read (a per-replica cap on concurrent bodies and bytes
 * in flight): waits for room or throws ApiError; returns the release, called once the response is done.
 */
export type BodyAdmission = (req: HttpRequest, scope: TenantScope | undefined) => Promise<() => void>;

/**
 * Whether the request's Origin may read an unknown route's error (the keys context: the
 * origin is in the allowed origins of the app whose publishable key the request carries).
 */
export type UnknownRouteOriginCheck = (req: HttpRequest) => Promise<boolean>;

/** The project's bucket table (the spec's defaults with its overrides). */
export type BucketRules = (projectId: string) => Promise<Record<string, BucketRule>>;

/**
 * Where contexts plug what the platform's route policy needs of them; registered by their
 * modules at start-up (the platform cannot import contexts).
 */
@Injectable()
export class RoutePolicyHooks {
  private apiKey?: ApiKeyAuthenticator;
  private readonly webhookGates = new Map<string, StoreWebhookGate>();
  private bucketRules?: BucketRules;
  private readonly admissions = new Map<string, BodyAdmission>();

  registerBodyAdmission(name: string, admission: BodyAdmission): void {
    this.admissions.set(name, admission);
  }

  bodyAdmission(name: string): BodyAdmission {
    const admission = this.admissions.get(name);
    if (!admission) throw new Error(`no body admission registered as ${name}`);
    return admission;
  }

  private unknownRouteOrigin?: UnknownRouteOriginCheck;

  registerApiKeyAuthenticator(authenticator: ApiKeyAuthenticator): void {
    this.apiKey = authenticator;
  }

  registerStoreWebhookGate(rail: string, gate: StoreWebhookGate): void {
    this.webhookGates.set(rail, gate);
  }

  registerBucketRules(rules: BucketRules): void {
    this.bucketRules = rules;
  }

  registerUnknownRouteOriginCheck(check: UnknownRouteOriginCheck): void {
    this.unknownRouteOrigin = check;
  }

  /** False when no check is registered or it fails: the browser then sees a CORS failure, never another tenant's data. */
  async unknownRouteOriginAllowed(req: HttpRequest): Promise<boolean> {
    if (!this.unknownRouteOrigin) return false;
    try {
      return await this.unknownRouteOrigin(req);
    } catch {
      return false;
    }
  }

  authenticateApiKey(policy: ApiKeyPolicy, req: HttpRequest, res: HttpResponse): Promise<{ scope: TenantScope; auth: unknown }> {
    if (!this.apiKey) throw new Error('no API key authenticator registered');
    return this.apiKey(policy, req, res);
  }

  storeWebhookGate(rail: string): StoreWebhookGate {
    const gate = this.webhookGates.get(rail);
    if (!gate) throw new Error(`no store webhook gate registered for rail ${rail}`);
    return gate;
  }

  rulesOf(projectId: string): Promise<Record<string, BucketRule>> {
    if (!this.bucketRules) throw new Error('no bucket rules registered');
    return this.bucketRules(projectId);
  }
}
