import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ApiError } from '../errors/api-error.js';

/**
 * The one clock. Every time the service reads goes through it, so the operator
 * test clock (TEST_CLOCK=enabled) can move all of them forward together.
 */
@Injectable()
export class Clock {
  private offsetMs = 0;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  /**
   * The wall clock, without the test clock's offset: for times an outside party checks against
   * its own clock (the signature times of outbound webhooks), and for how long work took (the
   * budgets and paces of jobs).
   */
  wallNowMs(): number {
    return Date.now();
  }

  nowSeconds(): number {
    return Math.floor(this.nowMs() / 1000);
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  get testClockEnabled(): boolean {
    return this.config.testClockEnabled;
  }

  get offsetSeconds(): number {
    return Math.floor(this.offsetMs / 1000);
  }

  advance(seconds: number): void {
    if (!this.config.testClockEnabled) {
      throw ApiError.resourceMissing('The test clock is not enabled');
    }
    this.offsetMs += seconds * 1000;
  }
}
