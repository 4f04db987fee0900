import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/*
 * OpenAPI documentation only. The handler takes the body as `unknown`, so the global
 * ValidationPipe never touches it: a bad row must not fail the request, and the hand-written
 * rules (domain/migration-rows.ts) report it per row instead.
 */

export class MigrationUserRowDto {
  @ApiProperty({ maxLength: 256, example: 'user_8841', description: 'Required; letters, digits and `_ - . : @` (the rules of identify `userId`).' })
  developerUserId: string;

  @ApiPropertyOptional({ maxLength: 320, description: 'Stored on the customer, never used to merge.' }) email?: string;
  @ApiPropertyOptional({ maxLength: 256, description: 'Stored, never used to merge.' }) displayName?: string;
  @ApiPropertyOptional({ example: 'cus_NffrFeUfNV2Hib', description: 'Card-payment rail customer id.' }) cardCustomerId?: string;
  @ApiPropertyOptional({ example: '2000000123456789' }) iosStoreOriginalTransactionId?: string;
  @ApiPropertyOptional({ example: '6f1c1b8e-2a4b-4c1e-9a8e-3b2f1d0c9e7a', description: 'UUID (stored lowercase).' }) iosAppAccountToken?: string;
  @ApiPropertyOptional() androidPurchaseToken?: string;
  @ApiPropertyOptional() androidObfuscatedAccountId?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Identify rules: invalid entries dropped, merged per key.' })
  traits?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'boolean' },
    example: { pro: true },
    description: 'Entitlement key → boolean (at most 32 keys). Truthy keys become lifetime migration grants, subject to the rail gate.',
  })
  entitlements?: Record<string, boolean>;
}

export class MigrationUsersDto {
  @ApiProperty({ type: [MigrationUserRowDto], minItems: 1, maxItems: 1000 })
  users: MigrationUserRowDto[];
}
