import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ApiError, type Env, isEnv } from '../../../platform/src/index.js';
import { ErasureStore } from '../forget/erasure.store.js';
import { IdentityProviderStore } from '../tokens/identity-provider.store.js';
import type { ErasureList, MergeReviewList } from './identity-admin.controller.js';

const LIST_LIMIT = 500;

@Injectable()
export class IdentityAdminService {
  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    private readonly providers: IdentityProviderStore,
    private readonly erasureStore: ErasureStore,
  ) {}

  async mergeReviews(projectId: string, rawEnv: string | undefined): Promise<MergeReviewList> {
    const env = await this.checked(projectId, rawEnv);
    const rows: {
      id: string;
      env: Env;
      developer_user_id: string | null;
      anonymous_id: string | null;
      canonical_customer_id: string;
      other_customer_id: string;
      created_at: Date;
    }[] = await this.dataSource.query(
      `SELECT id, env, developer_user_id, anonymous_id, canonical_customer_id, other_customer_id, created_at
         FROM merge_reviews
        WHERE project_id = $1 AND ($2::text IS NULL OR env = $2) AND status = 'pending'
        ORDER BY created_at DESC, id
        LIMIT $3`,
      [projectId, env ?? null, LIST_LIMIT],
    );
    return {
      object: 'list',
      data: rows.map((r) => ({
        id: r.id,
        env: r.env,
        developerUserId: r.developer_user_id,
        anonymousId: r.anonymous_id,
        canonicalCustomerId: r.canonical_customer_id,
        otherCustomerId: r.other_customer_id,
        status: 'pending',
        createdAt: Math.floor(new Date(r.created_at).getTime() / 1000),
      })),
    };
  }

  async erasures(projectId: string, rawEnv: string | undefined): Promise<ErasureList> {
    const env = await this.checked(projectId, rawEnv);
    const records = await this.erasureStore.list(projectId, env, LIST_LIMIT);
    return {
      object: 'list',
      data: records.map((r) => ({ serviceCustomerId: r.customerId, env: r.env, queuedAt: r.queuedAt.getTime(), status: r.status })),
    };
  }

  private async checked(projectId: string, rawEnv: string | undefined): Promise<Env | undefined> {
    if (rawEnv !== undefined && rawEnv !== '' && !isEnv(rawEnv)) throw ApiError.invalidParam('env must be sandbox or production');
    if (!(await this.providers.projectExists(projectId))) throw ApiError.resourceMissing(`No such project: ${projectId}`);
    return rawEnv ? (rawEnv as Env) : undefined;
  }
}
