import { Injectable } from '@nestjs/common';
import { Sql } from '#platform';

export interface IdentityProviderConfig {
  projectId: string;
  issuer: string;
  audience: string;
  jwks: { keys: Record<string, unknown>[] } | null;
  jwksUri: string | null;
  updatedAt: Date;
}

interface ProviderRow {
  project_id: string;
  issuer: string;
  audience: string;
  jwks: { keys: Record<string, unknown>[] } | null;
  jwks_uri: string | null;
  updated_at: Date;
}

/** The project's identity provider (one per project, both environments). */
@Injectable()
export class IdentityProviderRepository {
  constructor(private readonly sql: Sql) {}

  async find(projectId: string): Promise<IdentityProviderConfig | null> {
    const rows = await this.sql.rows<ProviderRow>(
      `SELECT project_id, issuer, audience, jwks, jwks_uri, updated_at FROM identity_providers WHERE project_id = $1`,
      [projectId],
    );
    return rows[0] ? toConfig(rows[0]) : null;
  }

  async put(config: Omit<IdentityProviderConfig, 'updatedAt'>, at: Date): Promise<IdentityProviderConfig> {
    const rows = await this.sql.rows<ProviderRow>(
      `INSERT INTO identity_providers (project_id, issuer, audience, jwks, jwks_uri, updated_at)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6)
       ON CONFLICT (project_id) DO UPDATE
         SET issuer = EXCLUDED.issuer, audience = EXCLUDED.audience, jwks = EXCLUDED.jwks,
             jwks_uri = EXCLUDED.jwks_uri, updated_at = EXCLUDED.updated_at
       RETURNING project_id, issuer, audience, jwks, jwks_uri, updated_at`,
      [config.projectId, config.issuer, config.audience, config.jwks ? JSON.stringify(config.jwks) : null, config.jwksUri, at],
    );
    return toConfig(rows[0]);
  }
}

function toConfig(row: ProviderRow): IdentityProviderConfig {
  return {
    projectId: row.project_id,
    issuer: row.issuer,
    audience: row.audience,
    jwks: row.jwks,
    jwksUri: row.jwks_uri,
    updatedAt: new Date(row.updated_at),
  };
}
