import { ApiProperty } from '@nestjs/swagger';

export class MigrationRowErrorView {
  @ApiProperty() rowIndex: number;
  @ApiProperty({ type: String, nullable: true }) developerUserId: string | null;
  @ApiProperty({ example: 'developerUserId_required' }) reason: string;
}

export class MigrationConflictView {
  @ApiProperty() developerUserId: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { card_payments: 'cdcust_3f9a0c1d2e4b' } })
  railResolutions: Record<string, string>;
  @ApiProperty({ example: 'rail_ids_resolve_to_different_customers' }) reason: string;
  @ApiProperty({ required: false, description: 'The customer the developer user id already belongs to, when that disagrees with the rail ids.' })
  developerCustomerId?: string;
}

export class MigrationDetailsView {
  @ApiProperty({ type: [MigrationRowErrorView] }) errors: MigrationRowErrorView[];
  @ApiProperty({ type: [MigrationConflictView] }) conflicts: MigrationConflictView[];
  @ApiProperty({ description: 'Rows whose developerUserId already had a customer and whose rail ids matched none' }) existing: number;
  @ApiProperty({ description: 'Asserted keys that already had a manual entitlement (an earlier run): left untouched' }) entitlementsAlreadyGranted: number;
}

/** 200 of POST /v1/migration/users. */
export class MigrationResultView {
  @ApiProperty({ example: 'migration_result' }) object: 'migration_result';
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
  @ApiProperty() totalRows: number;
  @ApiProperty({ description: 'Rows linked to an existing rail customer' }) matched: number;
  @ApiProperty({ description: 'Rows that needed a new customer' }) created: number;
  @ApiProperty() conflicts: number;
  @ApiProperty() errors: number;
  @ApiProperty() entitlementsGranted: number;
  @ApiProperty() entitlementsSkippedRailBacked: number;
  @ApiProperty() entitlementsSkippedLapsed: number;
  @ApiProperty({ description: 'Rail ids named whose rails could not be read (no credentials configured, or the API failed): no grant; a re-run resolves' })
  entitlementsUndetermined: number;
  @ApiProperty({ description: 'Keys this request registered in the project catalogue' }) entitlementKeysRegistered: number;
  @ApiProperty({ type: MigrationDetailsView }) details: MigrationDetailsView;
  @ApiProperty({ description: 'Unix ms' }) processedAt: number;
}
