import { Injectable } from '@nestjs/common';
import { OnJob, crossTenant } from '#platform';
import { type AutomaticAnswerOutcome, RefundRequests } from './refund-requests.service.js';

const SWEEP = crossTenant('rails refund-request answers');

/** The job looks for due refund requests every this long: an automatic answer leaves within 60 s of the request. */
export const REFUND_REQUESTS_EVERY_MS = 10_000;
/** At most this many answers per run (each in a transaction of its own); the next run takes the rest. */
const ANSWERS_PER_RUN = 200;

export interface RefundRequestSweepSummary {
  expired: number;
  outcomes: Partial<Record<AutomaticAnswerOutcome, number>>;
}

/**
 * Answers Apple refund requests of projects whose iOS rail answers them automatically (`auto`
 * with the customer's consent): "Send Consumption Information" with the rail's consumption
 * settings, before the deadline; a request the store could not take is tried again (30 s,
 * doubling up to 10 min). Pending requests past their deadline become `expired`. A recurring
 * durable job (one replica at a time); each request is claimed with FOR UPDATE SKIP LOCKED
 * and marked sent in the transaction that sent it, so no request is answered twice.
 */
@Injectable()
export class RefundRequestsJob {
  constructor(private readonly refunds: RefundRequests) {}

  @OnJob({
    type: 'rails.answer_refund_requests',
    everyMs: REFUND_REQUESTS_EVERY_MS,
    maxAttempts: 5,
    leaseMs: 10 * 60_000,
    transaction: false,
    backoff: { baseMs: 5_000, maxMs: 60_000 },
  })
  async run(): Promise<void> {
    await this.answerDue();
  }

  /** Expires what passed its deadline, then answers every request due now; tests call it with the test clock. */
  async answerDue(): Promise<RefundRequestSweepSummary> {
    const summary: RefundRequestSweepSummary = { expired: await this.refunds.expireDue(SWEEP), outcomes: {} };
    for (let i = 0; i < ANSWERS_PER_RUN; i++) {
      const answered = await this.refunds.answerNextDue(SWEEP);
      if (!answered) break;
      summary.outcomes[answered.outcome] = (summary.outcomes[answered.outcome] ?? 0) + 1;
    }
    return summary;
  }
}
