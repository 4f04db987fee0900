import { ApiProperty } from '@nestjs/swagger';

export class ErrorIssueView {
  @ApiProperty({ example: 'error_issue' }) object: 'error_issue';
  @ApiProperty({ example: '3fa2c19b', description: 'Client fingerprint (8 hex chars)' }) fingerprint: string;
  @ApiProperty({ description: 'Error events delivered for this issue' }) count: number;
  @ApiProperty({ description: 'Unix seconds' }) firstSeenAt: number;
  @ApiProperty({ description: 'Unix seconds' }) lastSeenAt: number;
  @ApiProperty({ example: 'error.unhandled' }) lastEventName: string;
  @ApiProperty({ nullable: true, type: String, enum: ['error', 'warning', 'info'] }) lastLevel: string | null;
}

export class ErrorIssueList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [ErrorIssueView] }) data: ErrorIssueView[];
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}

export class AffectedCustomerView {
  @ApiProperty({ example: 'cdcust_…' }) serviceCustomerId: string;
  @ApiProperty() count: number;
  @ApiProperty({ description: 'Unix seconds' }) lastSeenAt: number;
}

export class AffectedCustomerList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty() fingerprint: string;
  @ApiProperty({ type: [AffectedCustomerView] }) data: AffectedCustomerView[];
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}
