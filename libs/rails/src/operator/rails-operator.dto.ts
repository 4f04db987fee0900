import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsInt, IsObject, IsOptional, IsPositive, IsString, Length, Matches, ValidateNested } from 'class-validator';
import { PURCHASE_RAILS, type PurchaseRail } from '#entitlements';
import { RailPanelView } from './rails-console.views.js';
import { ConsumptionSettingsDto, ConsumptionSettingsView } from '../refunds/refund-request.view.js';

export class PutIosStoreRailDto {
  @ApiProperty({ example: 'com.example.app', description: "The app's bundle identifier; signed data of another bundle is refused" })
  @IsString()
  @Length(1, 255)
  @Matches(/^[A-Za-z0-9.\-_]+$/, { message: 'bundleId must be letters, digits, . - _' })
  bundleId: string;

  @ApiPropertyOptional({ example: 1234567890, description: "The app's Apple id; production notifications must carry it when set" })
  @IsOptional()
  @IsInt()
  @IsPositive()
  appAppleId?: number;

  @ApiPropertyOptional({
    type: [String],
    description: "PEM root certificates signed data must chain to; default: the store's own root certificate authorities, shipped with the service",
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @Length(1, 20_000, { each: true })
  trustedRootCertificates?: string[];

  @ApiPropertyOptional({
    type: ConsumptionSettingsDto,
    description: 'How Apple refund requests (CONSUMPTION_REQUEST) are answered; default { mode: "off" }',
  })
  @IsOptional()
  @IsObject({ message: 'consumption must be an object' })
  @ValidateNested()
  @Type(() => ConsumptionSettingsDto)
  consumption?: ConsumptionSettingsDto;
}

/** One configured rail (docs/api.md, operator rails): `{ rail, enabled, ...settings, secretsConfigured }`. */
export class RailView {
  @ApiProperty({ enum: PURCHASE_RAILS }) rail: PurchaseRail;
  @ApiProperty({ example: true }) enabled: boolean;
  @ApiProperty({ description: 'Whether the rail secrets file holds secrets for this project and rail' }) secretsConfigured: boolean;
  @ApiPropertyOptional({ example: 'com.example.app', description: 'ios_store' }) bundleId?: string;
  @ApiPropertyOptional({ example: 1234567890, description: 'ios_store' }) appAppleId?: number;
  @ApiPropertyOptional({ type: [String], description: 'ios_store: configured PEM roots (absent: the shipped store roots)' }) trustedRootCertificates?: string[];
  @ApiPropertyOptional({ type: ConsumptionSettingsView, description: 'ios_store: how Apple refund requests are answered' })
  consumption?: ConsumptionSettingsView;
  @ApiPropertyOptional({ description: 'card_payments' }) accountId?: string;
  @ApiPropertyOptional({ description: 'card_payments: days of access after a failed renewal while the processor retries (0 to 30)', example: 0 })
  gracePeriodDays?: number;
  @ApiPropertyOptional({ description: 'android_store' }) packageName?: string;
}

export class RailList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [RailView] }) data: RailView[];
  @ApiProperty({ enum: ['sandbox', 'production'], description: 'The environment of the notifications in rails' }) env: string;
  @ApiProperty({
    type: [RailPanelView],
    description: 'Every rail (ios_store, card_payments, android_store), configured or not, with secrets as booleans, its webhook URL and latest notifications',
  })
  rails: RailPanelView[];
}
