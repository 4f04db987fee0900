import { Injectable } from '@nestjs/common';
import { ApiError, Clock, RateLimiterService, RoutePolicyHooks } from '#platform';
import type { AuthContext } from '#keys';
import type { Coverage, ReadEnvelope } from './read-envelope.js';

export const READS_BUCKET = 'reads';

/**
 * The machinery every read shares: the `reads` bucket (20/s, burst 100 by default, per
 * project and key; the project's `reads` override applies) and the `{ object, data, meta }`
 * envelope.
 */
@Injectable()
export class ReportingReads {
  constructor(
    private readonly limiter: RateLimiterService,
    private readonly hooks: RoutePolicyHooks,
    private readonly clock: Clock,
  ) {}

  /** Charges one read to the key's `reads` bucket of the project read; 429 rate_limited past it. */
  async charge(auth: AuthContext): Promise<void> {
    const rule = (await this.hooks.rulesOf(auth.projectId))[READS_BUCKET];
    if (!rule) throw new Error(`no ${READS_BUCKET} bucket rule`);
    const decision = await this.limiter.take(auth, `${READS_BUCKET}:${auth.keyId}`, rule, 1);
    if (decision.granted < 1) throw ApiError.rateLimited(decision.retryAfterMs, decision.sampleRate);
  }

  /** Charges the bucket, runs the read, wraps its data. `project` is null for a read over a whole workspace. */
  async read<T>(auth: AuthContext, object: string, work: () => Promise<{ data: T; coverage?: Coverage }>, project = projectOf(auth)): Promise<ReadEnvelope<T>> {
    await this.charge(auth);
    const { data, coverage } = await work();
    return { object, data, meta: { project, env: auth.env, generatedAt: this.clock.nowMs(), coverage: coverage ?? {} } };
  }
}

/** The project a read is about: the key's own, or the one a workspace key named (null when it named none). */
export function projectOf(auth: AuthContext): string | null {
  if (auth.kind !== 'workspace') return auth.projectId;
  return (auth.workspaceProjectIds ?? []).includes(auth.projectId) ? auth.projectId : null;
}
