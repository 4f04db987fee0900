import { Injectable } from '@nestjs/common';
import { ApiError, Clock, type TenantScope, JobQueue, Sql } from '#platform';
import type { AuthContext } from '#keys';
import { AuditJournal } from '#audit';
import { IdentityRepository } from '../customers/identity.repository.js';
import { ALIAS_TYPES } from '../domain/identifier-rules.js';
import { CUSTOMER_ID_PREFIX } from '../domain/ids.js';
import { IdTokenVerifier } from '../tokens/id-token-verifier.service.js';
import type { ForgetDto, ForgotView } from './forget.dto.js';
import { ErasureRepository } from './erasure.repository.js';
import { ERASE_CUSTOMER_JOB, type EraseCustomerPayload } from './erasure.job.js';
import { ErasureHooks } from './erasure-hooks.js';

export const FORGET_EVENT_TYPE = 'customer.forget_requested';
export const FORGET_DEVICE_EVENT_TYPE = 'customer.device_forgotten';

/**
 * Right-to-be-forgotten requests. The customer is marked forgotten at once (every read
 * treats it as unknown), queued for the retention worker, and one audit entry records the
 * decision; repeating the call returns the same answer and writes nothing.
 */
@Injectable()
export class ForgetService {
  constructor(
    private readonly sql: Sql,
    private readonly repository: IdentityRepository,
    private readonly erasures: ErasureRepository,
    private readonly verifier: IdTokenVerifier,
    private readonly journal: AuditJournal,
    private readonly clock: Clock,
    private readonly erasureHooks: ErasureHooks,
    private readonly jobs: JobQueue,
  ) {}

  async forget(auth: AuthContext, dto: ForgetDto): Promise<ForgotView> {
    if (!dto.customerId && !dto.userId && !dto.anonymousId) {
      throw ApiError.missingParam('One of customerId, userId or anonymousId is required');
    }

    const identified = Boolean(dto.customerId || dto.userId);
    // With no known customer the answer names what the request reached for: a device id alone is "device".
    const noMatch = (): ForgotView => ({
      object: 'forgot',
      serviceCustomerId: null,
      crossdeckCustomerId: null,
      queuedAt: this.clock.nowMs(),
      env: auth.env,
      scope: identified ? 'customer' : 'device',
    });
    let authority: string;
    let customerId: string | null;
    if (auth.kind === 'secret') {
      // A secret key is full authority, also over a device id alone: the customer it resolves to is erased.
      authority = identified ? 'identified erasure requested with a secret key' : 'anonymous-only erasure requested with a secret key';
      customerId = await this.lookup(auth, dto);
    } else if (!identified) {
      authority = 'anonymous-only erasure request (no proof required)';
      customerId = await this.repository.findCustomerIdByAlias(auth, ALIAS_TYPES.anonymous, dto.anonymousId as string, { includeForgotten: true });
      if (customerId && (await this.isIdentified(auth, customerId))) {
        // A device id is no proof over an identified person: forget the device, keep the customer.
        // The answer still names the customer the hint matched (null is for no match), with scope "device".
        const forgottenAt = await this.sql.transaction(() => this.forgetDevice(auth, customerId!, dto.anonymousId as string), { retry: true });
        return { object: 'forgot', serviceCustomerId: customerId, crossdeckCustomerId: customerId, queuedAt: forgottenAt, env: auth.env, scope: 'device' };
      }
    } else {
      // Publishable key: only a verified idToken whose subject is userId carries authority.
      const verified = dto.userId && dto.idToken ? await this.verifier.verifyFor(auth.projectId, dto.idToken, dto.userId) : null;
      if (!verified)
        throw ApiError.authentication('identity_token_invalid', 'Identified erasure needs a secret key or a verified idToken whose subject equals userId');
      authority = 'identified erasure requested with a verified idToken';
      customerId = await this.repository.findCustomerIdByAlias(auth, ALIAS_TYPES.developer, dto.userId as string, { includeForgotten: true });
      if (dto.customerId && customerId !== dto.customerId) {
        throw ApiError.authentication('identity_token_invalid', 'The idToken does not prove authority over this customerId');
      }
    }

    if (!customerId) return noMatch();
    const queuedAt = await this.sql.transaction(() => this.markForgotten(auth, customerId, authority), { retry: true });
    return { object: 'forgot', serviceCustomerId: customerId, crossdeckCustomerId: customerId, queuedAt, env: auth.env, scope: 'customer' };
  }

  /** customerId, then userId, then anonymousId: the first that names a customer (forgotten ones included, for idempotency). */
  private async lookup(scope: TenantScope, dto: ForgetDto): Promise<string | null> {
    if (dto.customerId?.startsWith(CUSTOMER_ID_PREFIX)) {
      const found = await this.repository.findCustomerById(scope, dto.customerId, { includeForgotten: true });
      if (found) return found;
    }
    if (dto.userId) {
      const found = await this.repository.findCustomerIdByAlias(scope, ALIAS_TYPES.developer, dto.userId, { includeForgotten: true });
      if (found) return found;
    }
    if (dto.anonymousId) {
      return this.repository.findCustomerIdByAlias(scope, ALIAS_TYPES.anonymous, dto.anonymousId, { includeForgotten: true });
    }
    return null;
  }

  /** Active (not yet forgotten) and linked to a developer user id. */
  private async isIdentified(scope: TenantScope, customerId: string): Promise<boolean> {
    if (!(await this.repository.findCustomerById(scope, customerId))) return false;
    const aliases = await this.repository.personalAliases(scope, customerId);
    return aliases.userIds.length > 0;
  }

  /**
   * Anonymous-only request for a device of an identified customer: the device's alias and its
   * data go at once (hooks with deviceOnly), the customer stays; one audit entry. A repeat finds
   * no alias and writes nothing.
   */
  private async forgetDevice(auth: AuthContext, customerId: string, anonymousId: string): Promise<number> {
    await this.repository.lockCustomer(auth, customerId);
    const nowMs = this.clock.nowMs();
    const removed = await this.repository.deleteAlias(auth, { type: ALIAS_TYPES.anonymous, value: anonymousId }, customerId);
    if (!removed) return nowMs;
    await this.erasureHooks.runAll(auth, { customerId, userIds: [], anonymousIds: [anonymousId], deviceOnly: true });
    await this.journal.append(auth, {
      eventIdPrefix: 'evt_forget_',
      rail: 'manual',
      eventType: FORGET_DEVICE_EVENT_TYPE,
      customerId,
      decision: 'applied',
      reason: 'anonymous-only erasure of a device of an identified customer: device unlinked and its data erased, customer kept',
      actor: `api_key:${auth.keyId}`,
      requestId: auth.requestId,
      details: { keyKind: auth.kind },
    });
    return nowMs;
  }

  /** Marks, snapshots and queues under the customer's row lock; a repeat returns the first queuedAt. */
  private async markForgotten(auth: AuthContext, customerId: string, authority: string): Promise<number> {
    const row = await this.repository.lockCustomer(auth, customerId);
    if (!row) throw ApiError.internal();
    if (row.forgottenAt) {
      const existing = await this.erasures.find(auth, customerId);
      return existing ? existing.queuedAt.getTime() : row.forgottenAt.getTime();
    }
    const now = this.clock.now();
    const subject = await this.repository.personalAliases(auth, customerId);
    await this.repository.markForgotten(auth, customerId, now);
    await this.erasures.queue(auth, { customerId, subject, requestId: auth.requestId }, now);
    await this.jobs.enqueue(ERASE_CUSTOMER_JOB, { customerId } satisfies EraseCustomerPayload, {
      scope: auth,
      dedupeKey: `${auth.projectId}:${auth.env}:${customerId}`,
    });
    await this.journal.append(auth, {
      eventIdPrefix: 'evt_forget_',
      rail: 'manual',
      eventType: FORGET_EVENT_TYPE,
      customerId,
      decision: 'queued',
      reason: authority,
      actor: `api_key:${auth.keyId}`,
      requestId: auth.requestId,
      details: { keyKind: auth.kind },
    });
    return now.getTime();
  }
}
