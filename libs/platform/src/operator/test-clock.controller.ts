import { Body, CanActivate, Controller, Get, HttpCode, Injectable, Post, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsInt, IsPositive, Max } from 'class-validator';
import { Clock } from '../clock/clock.js';
import { ApiError } from '../errors/api-error.js';
import { ApiErrors } from '../openapi/error-codes.js';
import { Operator } from '../policy/route-policy.js';

/** One call moves at most 100 years, so dates stay in PostgreSQL's and JavaScript's ranges. */
const MAX_ADVANCE_SECONDS = 100 * 366 * 24 * 3600;

export class AdvanceTestClockDto {
  @ApiProperty({ description: 'Seconds to move forward (integer > 0)', example: 86400 })
  @IsInt()
  @IsPositive()
  @Max(MAX_ADVANCE_SECONDS)
  seconds: number;
}

export class TestClockView {
  @ApiProperty({ example: 'test_clock' }) object: 'test_clock';
  @ApiProperty() nowMs: number;
  @ApiProperty() offsetSeconds: number;
}

/** The test clock paths exist only with TEST_CLOCK=enabled (checked before body validation). */
@Injectable()
export class TestClockEnabledGuard implements CanActivate {
  constructor(private readonly clock: Clock) {}
  canActivate(): boolean {
    if (!this.clock.testClockEnabled) throw ApiError.resourceMissing('The test clock is not enabled');
    return true;
  }
}

@ApiTags('operator')
@Operator()
@UseGuards(TestClockEnabledGuard)
@Controller('admin/v1/test-clock')
export class TestClockController {
  constructor(private readonly clock: Clock) {}

  @Get()
  @ApiOperation({ operationId: 'adminGetTestClock', summary: 'Read the test clock (TEST_CLOCK=enabled only; otherwise 404)' })
  @ApiOkResponse({ type: TestClockView })
  read(): TestClockView {
    return this.view();
  }

  @Post('advance')
  @HttpCode(200)
  @ApiOperation({ operationId: 'adminAdvanceTestClock', summary: 'Move every clock the service reads forward' })
  @ApiOkResponse({ type: TestClockView })
  @ApiErrors({ 400: ['missing_required_param'] })
  advance(@Body() body: AdvanceTestClockDto): TestClockView {
    this.clock.advance(body.seconds);
    return this.view();
  }

  private view(): TestClockView {
    return { object: 'test_clock', nowMs: this.clock.nowMs(), offsetSeconds: this.clock.offsetSeconds };
  }
}
