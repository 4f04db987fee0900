import { Injectable } from '@nestjs/common';
import { ApiError, BUCKET_NAMES, type BucketName, type BucketRule, Clock } from '#platform';
import { ProjectsRepository } from '../domain/projects.repository.js';
import { ProjectRateLimits, type RateLimitTable } from '../rate-limits/project-rate-limits.service.js';

/** Use case of the operator API for a project's rate-limit overrides. */
@Injectable()
export class RateLimitsAdminService {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly rateLimits: ProjectRateLimits,
    private readonly clock: Clock,
  ) {}

  async replaceRateLimits(projectId: string, body: Record<string, unknown>): Promise<RateLimitTable> {
    if (!(await this.projects.findProject(projectId))) throw ApiError.resourceMissing(`No project ${projectId}`);
    return this.rateLimits.replaceOverrides(projectId, parseRateLimitOverrides(body), this.clock.now());
  }
}

/** Validates `{ "<bucket>": { sustained, burst } }` with messages that name the field. */
export function parseRateLimitOverrides(body: Record<string, unknown>): Partial<Record<BucketName, BucketRule>> {
  const overrides: Partial<Record<BucketName, BucketRule>> = {};
  for (const [bucket, value] of Object.entries(body)) {
    if (!(BUCKET_NAMES as readonly string[]).includes(bucket)) {
      throw ApiError.invalidParam(`${bucket} is not a rate-limit bucket (expected one of ${BUCKET_NAMES.join(', ')})`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw ApiError.invalidParam(`${bucket} must be an object { sustained, burst }`);
    const { sustained, burst } = value as Record<string, unknown>;
    if (sustained === undefined) throw ApiError.missingParam(`${bucket}.sustained is required`);
    if (burst === undefined) throw ApiError.missingParam(`${bucket}.burst is required`);
    if (typeof sustained !== 'number' || !Number.isFinite(sustained) || sustained <= 0 || sustained > 1e6) {
      throw ApiError.invalidParam(`${bucket}.sustained must be a number greater than 0`);
    }
    if (typeof burst !== 'number' || !Number.isFinite(burst) || burst < 1 || burst > 1e7) {
      throw ApiError.invalidParam(`${bucket}.burst must be a number of at least 1`);
    }
    overrides[bucket as BucketName] = { sustained, burst };
  }
  return overrides;
}
