import { ApiProperty } from '@nestjs/swagger';
import { ErrorIssueDetailView, ErrorIssueView } from '../issues/error-issues.views.js';

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
  @ApiProperty({ type: [IssueUserView], description: 'Customers the latest events of the issue hit, most recent first' }) affectedUsers: IssueUserView[];
}
