import { Injectable } from '@nestjs/common';
import type { AppView } from './operator.dto.js';
import { DemoSeedRepository } from './demo-seed.repository.js';
import { ProjectsAdminService } from './projects-admin.service.js';

/** On an empty database, a demo project with a web app so a newcomer can call the API at once. */
@Injectable()
export class DemoSeeder {
  constructor(
    private readonly seeds: DemoSeedRepository,
    private readonly admin: ProjectsAdminService,
  ) {}

  /** Returns the demo app (with its four plaintext keys) when it created one, else null. */
  async seedIfEmpty(): Promise<AppView | null> {
    return this.seeds.withSeedLock(async (anyProjectExists) => {
      if (anyProjectExists) return null;
      const project = await this.admin.createProject('Demo project');
      return this.admin.createApp(project.id, { name: 'Demo web app', platform: 'web', allowedOrigins: ['http://localhost:3000'] }, 'seed');
    });
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
