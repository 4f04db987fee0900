import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AppView } from './operator.dto.js';
import { KeysAdminService } from './keys-admin.service.js';

const SEED_LOCK_KEY = 727_002;

/** On an empty database, a demo project with a web app so a newcomer can call the API at once. */
@Injectable()
export class DemoSeeder {
  constructor(
    private readonly dataSource: DataSource,
    private readonly admin: KeysAdminService,
  ) {}

  /** Returns the demo app (with its four plaintext keys) when it created one, else null. */
  async seedIfEmpty(): Promise<AppView | null> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.query('SELECT pg_advisory_lock($1)', [SEED_LOCK_KEY]);
      const [{ exists }] = await runner.query('SELECT EXISTS (SELECT 1 FROM projects) AS exists');
      if (exists) return null;
      const project = await this.admin.createProject('Demo project');
      return await this.admin.createApp(project.id, { name: 'Demo web app', platform: 'web', allowedOrigins: ['http://localhost:3000'] }, 'seed');
    } finally {
      await runner.query('SELECT pg_advisory_unlock($1)', [SEED_LOCK_KEY]).catch(() => undefined);
      await runner.release();
    }
  }
}

/** The one-time banner: printed to stdout directly, never through the JSON logger. */
export function formatDemoKeys(app: AppView): string {
  const lines = [
    '',
    '  Demo project created (shown once; secret keys cannot be recovered later):',
    `    project ${app.projectId}   web app ${app.id}   allowed origin http://localhost:3000`,
    ...app.keys.map((k) => `    ${k.kind.padEnd(11)} ${k.env.padEnd(10)} ${k.key}`),
    '',
  ];
  return lines.join('\n') + '\n';
}
