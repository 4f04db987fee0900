import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsObject, IsString, Length, Matches, ValidateNested } from 'class-validator';
import { CATALOG_KEY_MAX, CATALOG_KEY_PATTERN, PURCHASE_RAILS, type PurchaseRail } from '../domain/entitlement-rules.js';

export class CatalogProductDto {
  @ApiProperty({ enum: PURCHASE_RAILS })
  @IsIn(PURCHASE_RAILS)
  rail: PurchaseRail;

  @ApiProperty({ description: '1 to 200 chars', example: 'com.example.pro.monthly' })
  @IsString()
  @Length(1, 200)
  productId: string;

  @ApiProperty({ type: [String], description: 'Keys a purchase grants; each 1 to 64 chars of letters, digits, _ . : -', example: ['pro_access'] })
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @Length(1, CATALOG_KEY_MAX, { each: true })
  @Matches(CATALOG_KEY_PATTERN, {
    each: true,
    message: 'each entitlement key must be 1 to 64 chars of letters, digits, _ . : - (starting with a letter or digit)',
  })
  entitlementKeys: string[];
}

export class PutProductsDto {
  @ApiProperty({ type: [CatalogProductDto] })
  @IsArray()
  @ArrayMaxSize(1000)
  // ValidateNested alone accepts an array where an object belongs ({"products": [[]]}).
  @IsObject({ each: true, message: 'products: each entry must be an object { rail, productId, entitlementKeys }' })
  @ValidateNested({ each: true })
  @Type(() => CatalogProductDto)
  products: CatalogProductDto[];
}

export class ProductCatalogView {
  @ApiProperty({ example: 'product_catalog' }) object: 'product_catalog';
  @ApiProperty({ example: 'proj_abc' }) projectId: string;
  @ApiProperty({ type: [CatalogProductDto] }) products: CatalogProductDto[];
}

export class EntitlementKeyView {
  @ApiProperty({ example: 'pro_access' }) key: string;
  @ApiProperty({ enum: ['grant', 'migration', 'catalog'] }) registeredBy: 'grant' | 'migration' | 'catalog';
  @ApiProperty({ description: 'Unix seconds' }) createdAt: number;
}

export class EntitlementKeyList {
  @ApiProperty({ example: 'list' }) object: 'list';
  @ApiProperty({ type: [EntitlementKeyView] }) data: EntitlementKeyView[];
}
