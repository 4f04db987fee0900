// Shapes of the generated document's views, and of operator reads coded against their contract.
import type { components } from './operator';

type Schemas = components['schemas'];
export type Project = Schemas['ProjectView'];
export type App = Schemas['AppView'];
export type ApiKey = Schemas['ApiKeyView'];
export type Job = Schemas['JobView'];
export type WebhookEndpoint = Schemas['WebhookEndpointView'];
export type WebhookDelivery = Schemas['WebhookDeliveryView'];
export type MergeReview = Schemas['MergeReviewView'];
export type Erasure = Schemas['ErasureView'];
export type WorkspaceKey = Schemas['WorkspaceKeyView'];

export interface List<T> {
  object: 'list';
  data: T[];
}

export type Workspace = Schemas['WorkspaceSummaryView'];

export interface CustomerMatch {
  serviceCustomerId: string;
  crossdeckCustomerId?: string | null;
  userId?: string | null;
  anonymousIds?: string[];
  email?: string | null;
  matchedBy?: string;
}

export interface CustomerEntitlement {
  key?: string;
  entitlementKey?: string;
  active?: boolean;
  source?: unknown;
  validUntil?: number | null;
  revokedAt?: number | null;
}

export interface CustomerDetail {
  serviceCustomerId?: string;
  crossdeckCustomerId?: string | null;
  userId?: string | null;
  identities?: Record<string, unknown>[] | Record<string, unknown>;
  entitlements?: CustomerEntitlement[] | { active?: CustomerEntitlement[]; past?: CustomerEntitlement[] };
  subscriptions?: Record<string, unknown>[];
  erasure?: unknown;
  erasureStatus?: unknown;
  recentEvents?: Record<string, unknown>[];
}

export interface TimelineEntry {
  id?: string;
  eventId?: string;
  kind?: string;
  type?: string;
  action?: string;
  at?: number;
  atMs?: number;
  createdAt?: number;
  reason?: string | null;
  [field: string]: unknown;
}
