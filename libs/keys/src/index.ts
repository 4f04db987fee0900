export { KeysModule } from './keys.module.js';
export * from './auth/auth-context.js';
export { RequireApiKey, CurrentKey, currentKeyOf } from './auth/require-api-key.decorator.js';
export { assertDeclaredEnv } from './auth/declared-env.js';
export { KEY_CACHE_TTL_MS } from './auth/key-lookup.service.js';
export { ProjectDirectory, type ProjectCheck } from './domain/project-directory.service.js';
export { ProjectRateLimits, type RateLimitTable } from './rate-limits/project-rate-limits.service.js';
export { DemoSeeder, formatDemoKeys } from './operator/demo-seeder.service.js';
export { originAllowed, originsToLearn, isValidAllowlistEntry } from './domain/origin-allowlist.js';
export { parseApiKey, extractApiKey, sha256Hex } from './domain/api-key-format.js';
export { WorkspaceDirectory, type WorkspaceAppRow, type WorkspaceProjectRow } from './workspaces/workspace-directory.service.js';
export { CreateAppDto } from './operator/operator.dto.js';
export { WorkspaceKeyIssuer, type WorkspaceSummary } from './workspaces/workspace-key-issuer.service.js';
import { KeysProjectListIndex1790000002620 } from './migrations/1790000002620-keys-project-list-index.migration.js';
import { KeysSchema1790000000100 } from './migrations/1790000000100-keys-schema.migration.js';
import { KeysSourcemapsBucket1790000000990 } from './migrations/1790000000990-keys-sourcemaps-bucket.migration.js';
import { KeysWorkspaces1790000002200 } from './migrations/1790000002200-keys-workspaces.migration.js';
import { KeysRailReadBuckets1790000002310 } from './migrations/1790000002310-keys-rail-read-buckets.migration.js';
import { KeysWorkspaceKeyExpiry1790000003000 } from './migrations/1790000003000-keys-workspace-key-expiry.migration.js';

export const KEYS_MIGRATIONS = [
  KeysSchema1790000000100,
  KeysSourcemapsBucket1790000000990,
  KeysWorkspaces1790000002200,
  KeysRailReadBuckets1790000002310,
  KeysProjectListIndex1790000002620,
  KeysWorkspaceKeyExpiry1790000003000,
];
