import { applyDecorators, Header } from '@nestjs/common';
import { RequireApiKey } from '#keys';

export interface ReportingReadOptions {
  /** The scope the read needs (403 insufficient_scope before anything is read); none: any secret or workspace key. */
  scopes?: readonly string[];
  /** `project` (default): a workspace key names one of its projects with `project=`; `workspace`: a read over the whole workspace. */
  workspace?: 'project' | 'workspace';
}

/**
 * Declares a read of the read API: secret keys and workspace keys (publishable keys are 401
 * invalid_api_key), the scope, the `project` / `env` parameters of workspace keys, and
 * `Cache-Control: private, no-store`. The handler charges the `reads` bucket through
 * ReportingReads (per project and key) and answers its envelope.
 */
export function ReportingRead(options: ReportingReadOptions = {}) {
  return applyDecorators(
    RequireApiKey({ kinds: ['secret'], scopes: options.scopes, workspace: options.workspace ?? 'project' }),
    Header('Cache-Control', 'private, no-store'),
  );
}

/** What a scoped read answers besides its data (`@ApiErrors`): bad parameters, key refusals, scope and project refusals, the reads bucket. */
export const SCOPED_READ_ERRORS = {
  400: ['invalid_param_value', 'missing_required_param'],
  401: ['missing_api_key', 'invalid_api_key', 'key_revoked'],
  403: ['insufficient_scope', 'project_not_allowed'],
  429: ['rate_limited'],
} as const;
