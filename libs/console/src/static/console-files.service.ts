import { readFile, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '#platform';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
};

export type ConsoleFile = { kind: 'file'; body: Buffer; contentType: string; cacheControl: string } | { kind: 'not_built' } | { kind: 'missing' };

/** Fingerprinted assets never change under their name: cached for a year. */
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/**
 * The built console (CONSOLE_DIR): `assets/*` as they are, anything else under /console/ is
 * the single-page app's index.html (its own router reads the path). Paths never leave the
 * folder. Files are read when asked (index.html is small, assets are cached by browsers).
 */
@Injectable()
export class ConsoleFiles {
  private readonly root: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.root = resolve(config.consoleDir);
  }

  /** `subPath`: what follows `/console/`, not decoded. */
  async lookup(subPath: string): Promise<ConsoleFile> {
    if (!(await this.isFolder(this.root))) return { kind: 'not_built' };
    let decoded: string;
    try {
      decoded = decodeURIComponent(subPath);
    } catch {
      return { kind: 'missing' };
    }
    if (decoded.startsWith('assets/')) {
      const file = resolve(this.root, decoded);
      if (!file.startsWith(`${this.root}${sep}assets${sep}`) || decoded.includes('\0')) return { kind: 'missing' };
      const body = await readFile(file).catch(() => null);
      if (!body) return { kind: 'missing' };
      return { kind: 'file', body, contentType: CONTENT_TYPES[extname(file)] ?? 'application/octet-stream', cacheControl: ASSET_CACHE_CONTROL };
    }
    const index = await readFile(resolve(this.root, 'index.html')).catch(() => null);
    if (!index) return { kind: 'not_built' };
    return { kind: 'file', body: index, contentType: CONTENT_TYPES['.html'], cacheControl: 'no-store' };
  }

  private async isFolder(path: string): Promise<boolean> {
    return (await stat(path).catch(() => null))?.isDirectory() ?? false;
  }
}
