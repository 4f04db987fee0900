import { Injectable } from '@nestjs/common';
import { Clock, type TenantScope } from '#platform';
import { WebhookOutboxRepository } from './webhook-outbox.repository.js';

/** How long (wall-clock ms) a replica trusts its answer to "has this scope an enabled endpoint?". */
export const ENDPOINT_PRESENCE_TTL_MS = 100;
/** Scopes remembered at most; beyond it the oldest answers are dropped (they are re-read on demand). */
const MAX_SCOPES = 10_000;

/**
 * Whether a project and environment has an enabled endpoint, cached per replica for
 * ENDPOINT_PRESENCE_TTL_MS, so that a change in a scope without endpoints costs no statement
 * at all. Only a stale "none" could lose events (a stale "some" costs a few statements; the
 * fan-out joins the enabled endpoints anyway): the operator call that enables an endpoint
 * (create, or `status: enabled`) answers only after `ENDPOINT_PRESENCE_TTL_MS` has passed
 * since its commit, so by then every replica's "none" read before that commit has expired,
 * and every change whose transaction looks after the answer records the endpoint's events.
 */
@Injectable()
export class EndpointPresence {
  private readonly answers = new Map<string, { enabled: boolean; readAtMs: number }>();

  constructor(
    private readonly repository: WebhookOutboxRepository,
    private readonly clock: Clock,
  ) {}

  async hasEnabled(scope: TenantScope): Promise<boolean> {
    const key = `${scope.projectId}\u0000${scope.env}`;
    // Taken before the read: the answer is at least as new as this moment.
    const readAtMs = this.clock.wallNowMs();
    const cached = this.answers.get(key);
    if (cached && readAtMs - cached.readAtMs < ENDPOINT_PRESENCE_TTL_MS && readAtMs >= cached.readAtMs) return cached.enabled;
    const enabled = await this.repository.hasEnabledEndpoint(scope);
    this.answers.delete(key);
    if (this.answers.size >= MAX_SCOPES) this.answers.delete(this.answers.keys().next().value as string);
    this.answers.set(key, { enabled, readAtMs });
    return enabled;
  }

  /** After an endpoint of the scope was enabled and committed: forgets this replica's answer and waits out the others'. */
  async enabled(scope: TenantScope): Promise<void> {
    this.answers.delete(`${scope.projectId}\u0000${scope.env}`);
    await new Promise((resolve) => setTimeout(resolve, ENDPOINT_PRESENCE_TTL_MS + 5));
  }
}
