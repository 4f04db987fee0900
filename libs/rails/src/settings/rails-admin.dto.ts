import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';

export class PutCardPaymentsRailDto {
  @ApiPropertyOptional({ description: "The processor's account id (informational)", example: 'acct_1Nv0FGQ9RKHgCVdK' })
  @IsOptional()
  @IsString()
  @Length(1, 255)
  accountId?: string;

  @ApiPropertyOptional({
    description:
      "Days of access after a failed renewal while the processor retries (in_grace_period), from the unpaid period's start; absent or 0 ends access there",
    minimum: 0,
    maximum: 30,
    example: 3,
  })
  @IsOptional()
  @Max(30, { message: 'gracePeriodDays must be an integer between 0 and 30' })
  @Min(0, { message: 'gracePeriodDays must be an integer between 0 and 30' })
  @IsInt({ message: 'gracePeriodDays must be an integer between 0 and 30' })
  gracePeriodDays?: number;
}

export const ANDROID_PACKAGE_PATTERN = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/;

export class PutAndroidStoreRailDto {
  @ApiProperty({ description: 'Android application id; notifications for another package are rejected', example: 'com.example.app' })
  @IsString()
  @Length(3, 255)
  @Matches(ANDROID_PACKAGE_PATTERN, { message: 'packageName must be an Android application id such as com.example.app' })
  packageName: string;
}
