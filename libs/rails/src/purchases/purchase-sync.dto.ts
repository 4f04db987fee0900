import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, Matches } from 'class-validator';
import { PublicEntitlement } from '#entitlements';

export class PurchaseSyncDto {
  @ApiProperty({
    example: 'ios_store',
    description:
      '`ios_store` (`apple` is accepted as an alias). `card_payments` and `android_store` answer 400: their state arrives on the store-notification paths.',
  })
  @IsString()
  @Length(1, 64)
  rail: string;

  @ApiProperty({ description: 'The signed transaction (JWS) as the device received it' })
  @IsString()
  @Length(1, 64_000)
  signedTransactionInfo: string;

  @ApiPropertyOptional({ description: 'Signed renewal info (JWS); failing to verify it is logged, not fatal' })
  @IsOptional()
  @IsString()
  @Length(1, 64_000)
  signedRenewalInfo?: string;

  @ApiPropertyOptional({ example: '6f1c1b8e-2a4b-4c1e-9a8e-3b2f1d0c9e7a', description: 'UUID; resolves the customer when identify bound it' })
  @IsOptional()
  @IsString()
  @Matches(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, { message: 'appAccountToken must be a UUID' })
  appAccountToken?: string;
}

/** 200 of purchase sync. */
export class PurchaseResultView {
  @ApiProperty({ example: 'purchase_result' }) object: 'purchase_result';
  @ApiProperty({ example: 'cdcust_3f9a0c1d2e4b' }) serviceCustomerId: string;
  @ApiProperty({ example: 'cdcust_3f9a0c1d2e4b', description: 'The same value as serviceCustomerId (the public clients read this name)' })
  crossdeckCustomerId: string;
  @ApiProperty({ enum: ['sandbox', 'production'] }) env: string;
  @ApiProperty({ type: [PublicEntitlement], description: "The customer's active entitlements after the purchase" }) entitlements: PublicEntitlement[];
  @ApiPropertyOptional({ description: 'Present (true) only on an idempotent replay' }) idempotent_replay?: boolean;
}
