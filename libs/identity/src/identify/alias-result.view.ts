import { ApiProperty } from '@nestjs/swagger';

export class LinkedId {
  @ApiProperty({ enum: ['developer', 'anonymous'] }) type: 'developer' | 'anonymous';
  @ApiProperty() id: string;
}

export class AliasResultView {
  @ApiProperty({ example: 'alias_result' }) object: 'alias_result';
  @ApiProperty({ example: 'cdcust_3kTq9Vx2LmN8pR4sW7yZ1aBc' }) serviceCustomerId: string;
  @ApiProperty({ example: 'cdcust_3kTq9Vx2LmN8pR4sW7yZ1aBc', description: 'The same value as serviceCustomerId (the public clients read this name)' })
  crossdeckCustomerId: string;
  @ApiProperty({ type: [LinkedId], description: 'The ids now linked to serviceCustomerId (on a conflict, only the developer id)' }) linked: LinkedId[];
  @ApiProperty({ description: 'Both ids resolved to different customers: queued for review, nothing merged' }) mergePending: boolean;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
}
