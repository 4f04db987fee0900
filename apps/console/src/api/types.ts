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

export type CustomerMatch = Schemas['CustomerSearchHitView'];
export type CustomerListItem = Schemas['CustomerListItemView'];
export type CustomerListPage = Schemas['CustomerListPage'];
export type CustomerDetail = Schemas['CustomerDetailView'];
export type CustomerEntitlement = Schemas['CustomerEntitlementView'];
export type Subscription = Schemas['SubscriptionView'];
export type HistoryEntry = Schemas['HistoryEntryView'];
export type HistoryPage = Schemas['HistoryList'];
export type TimelineEntry = Schemas['AuditEntryData'];
