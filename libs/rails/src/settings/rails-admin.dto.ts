import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, Matches } from 'class-validator';

export class PutCardPaymentsRailDto {
  @ApiPropertyOptional({ description: "The processor's account id (informational)", example: 'acct_1Nv0FGQ9RKHgCVdK' })
  @IsOptional()
  @IsString()
  @Length(1, 255)
  accountId?: string;
}

export const ANDROID_PACKAGE_PATTERN = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/;

export class PutAndroidStoreRailDto {
  @ApiProperty({ description: 'Android application id; notifications for another package are rejected', example: 'com.example.app' })
  @IsString()
  @Length(3, 255)
  @Matches(ANDROID_PACKAGE_PATTERN, { message: 'packageName must be an Android application id such as com.example.app' })
  packageName: string;
}
