import { ApiProperty } from '@nestjs/swagger';
import { CustomerMrrView } from './customer-console.views.js';
import { ErrorEventView, ErrorIssueDetailView, ErrorIssueView } from '../issues/error-issues.views.js';

/** Response shapes of the console's error pages. */
export class AdminErrorIssueSummaryView extends ErrorIssueView {
  @ApiProperty({ description: 'Distinct developer user ids the issue hit (events without a user id are not counted)' }) affectedUsers: number;
}

export class AdminErrorIssueList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [AdminErrorIssueSummaryView], description: 'Most recently seen first' }) data: AdminErrorIssueSummaryView[];
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}

export class IssueUserView {
  @ApiProperty({ example: 'cdcust_…' }) serviceCustomerId: string;
  @ApiProperty({ type: String, nullable: true, description: 'The developer user id the latest event of this customer carried' }) userId: string | null;
  @ApiProperty({ description: 'Events of this issue among the latest window' }) count: number;
  @ApiProperty({ description: 'Unix seconds' }) lastHitAt: number;
}

export class AdminErrorIssueView extends ErrorIssueDetailView {
  @ApiProperty({ description: 'The exception type and message of the latest event, else the event name' }) title: string;
  @ApiProperty({ type: [IssueUserView], description: 'Customers the latest events of the issue hit, most recent first' }) affectedUsers: IssueUserView[];
}

export class ConsoleErrorIssueView extends AdminErrorIssueSummaryView {
  @ApiProperty({
    example: 'TypeError: Cannot read properties of undefined',
    description: "The issue's title: the exception type and message of its latest event, else the event name",
  })
  title: string;
  @ApiProperty({ type: String, nullable: true, description: 'properties.errorType (else properties.type) of the latest event' }) errorType: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'properties.message of the latest event' }) message: string | null;
  @ApiProperty({
    type: CustomerMrrView,
    description:
      "Revenue at risk: the monthly recurring revenue of the distinct customers the issue's users are now (each user id's customer), in the project's reporting currency",
  })
  revenueAtRisk: CustomerMrrView;
}

export class ConsoleErrorIssueList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [ConsoleErrorIssueView], description: 'In the order of sort, descending; ties by fingerprint' }) data: ConsoleErrorIssueView[];
  @ApiProperty({ enum: ['last_seen', 'count', 'users', 'revenue_at_risk', 'first_seen'] }) sort: string;
  @ApiProperty({ type: String, nullable: true, description: 'Pass as after for the next page; null on the last page' }) nextCursor: string | null;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}

export class ErrorIssueEventPage {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ example: '3fa2c19b' }) fingerprint: string;
  @ApiProperty({ type: [ErrorEventView], description: 'Newest first, each with its own frames symbolicated on read' }) data: ErrorEventView[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as after for older events; null on the last page' }) nextCursor: string | null;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}

export class ErrorIssueUserView {
  @ApiProperty({ description: 'The developer user id' }) userId: string;
  @ApiProperty({ type: String, nullable: true, description: "The customer the user's latest event of the issue resolved to" }) serviceCustomerId: string | null;
  @ApiProperty({ description: 'Events of this issue the user sent' }) count: number;
  @ApiProperty({ description: 'Unix seconds' }) lastHitAt: number;
}

export class ErrorIssueUserPage {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ example: '3fa2c19b' }) fingerprint: string;
  @ApiProperty({ type: [ErrorIssueUserView], description: 'Most recent hit first, ties by user id' }) data: ErrorIssueUserView[];
  @ApiProperty({ description: "Every distinct user id the issue hit (the list's affectedUsers)" }) total: number;
  @ApiProperty({ type: String, nullable: true, description: 'Pass as after for the next page; null on the last page' }) nextCursor: string | null;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}
