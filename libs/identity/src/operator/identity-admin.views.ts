import { ApiProperty } from '@nestjs/swagger';

/** Response shapes of the identity operator endpoints. */
export class MergeReviewView {
  @ApiProperty({ example: 'mrev_3kTq9Vx2LmN8pR4sW7yZ1aBc' }) id: string;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
  @ApiProperty({ type: String, nullable: true }) developerUserId: string | null;
  @ApiProperty({ type: String, nullable: true }) anonymousId: string | null;
  @ApiProperty() canonicalCustomerId: string;
  @ApiProperty() otherCustomerId: string;
  @ApiProperty({ enum: ['pending'] }) status: 'pending';
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
}

export class DecidedMergeReviewView {
  @ApiProperty({ example: 'merge_review' }) object: 'merge_review';
  @ApiProperty({ example: 'mrev_3kTq9Vx2LmN8pR4sW7yZ1aBc' }) id: string;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
  @ApiProperty({ type: String, nullable: true }) developerUserId: string | null;
  @ApiProperty({ type: String, nullable: true }) anonymousId: string | null;
  @ApiProperty() canonicalCustomerId: string;
  @ApiProperty() otherCustomerId: string;
  @ApiProperty({ enum: ['approved', 'dismissed'] }) status: 'approved' | 'dismissed';
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
  @ApiProperty({ description: 'Unix seconds' }) decidedAt: number;
  @ApiProperty({ description: 'The audit entry of the decision (on the canonical customer)' }) auditEventId: string;
}

export class MergeReviewList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [MergeReviewView] }) data: MergeReviewView[];
}

export class ErasureView {
  @ApiProperty() serviceCustomerId: string;
  @ApiProperty({ description: 'The same value as serviceCustomerId (the public clients read this name)' }) crossdeckCustomerId: string;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
  @ApiProperty({ description: 'Unix ms' }) queuedAt: number;
  @ApiProperty({ enum: ['queued', 'deleted'] }) status: 'queued' | 'deleted';
}

export class ErasureList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [ErasureView] }) data: ErasureView[];
}
