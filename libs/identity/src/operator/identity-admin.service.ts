import { Injectable } from '@nestjs/common';
import { ApiError, type Env, isEnv } from '#platform';
import { ProjectDirectory } from '#keys';
import { IdentityRepository } from '../customers/identity.repository.js';
import { ErasureRepository } from '../forget/erasure.repository.js';
import type { ErasureList, MergeReviewList } from './identity-admin.views.js';

const LIST_LIMIT = 500;

@Injectable()
export class IdentityAdminService {
  constructor(
    private readonly identity: IdentityRepository,
    private readonly projects: ProjectDirectory,
    private readonly erasureStore: ErasureRepository,
  ) {}

  async mergeReviews(projectId: string, rawEnv: string | undefined): Promise<MergeReviewList> {
    const env = await this.checked(projectId, rawEnv);
    const rows = await this.identity.listPendingMergeReviews(projectId, env, LIST_LIMIT);
    return {
      object: 'list',
      data: rows.map((r) => ({
        id: r.id,
        env: r.env,
        developerUserId: r.developerUserId,
        anonymousId: r.anonymousId,
        canonicalCustomerId: r.canonicalCustomerId,
        otherCustomerId: r.otherCustomerId,
        status: 'pending',
        createdAt: Math.floor(new Date(r.createdAt).getTime() / 1000),
      })),
    };
  }

  async erasures(projectId: string, rawEnv: string | undefined): Promise<ErasureList> {
    const env = await this.checked(projectId, rawEnv);
    const records = await this.erasureStore.list(projectId, env, LIST_LIMIT);
    return {
      object: 'list',
      data: records.map((r) => ({
        serviceCustomerId: r.customerId,
        crossdeckCustomerId: r.customerId,
        env: r.env,
        queuedAt: r.queuedAt.getTime(),
        status: r.status,
      })),
    };
  }

  private async checked(projectId: string, rawEnv: string | undefined): Promise<Env | undefined> {
    if (rawEnv !== undefined && rawEnv !== '' && !isEnv(rawEnv)) throw ApiError.invalidParam('env must be sandbox or production');
    await this.projects.assertExists(projectId);
    return rawEnv ? (rawEnv as Env) : undefined;
  }
}
