import { readFile, stat } from 'node:fs/promises';
import { extname, resolve, sep } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '#platform';
import { type Encoding, chooseEncoding } from './accept-encoding.js';

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

export type ConsoleFile =
  | {
      kind: 'file';
      body: Buffer;
      contentType: string;
      cacheControl: string;
      /** The precompressed variant sent (`Content-Encoding`); undefined: the file as it is. */
      encoding?: Encoding;
      /** The answer depends on Accept-Encoding (the file has precompressed variants). */
      varies: boolean;
    }
  | { kind: 'not_built' }
  | { kind: 'missing' };

/** Files at the top of the console folder served as they are (the rest is the app's index.html). */
const TOP_FILES: Readonly<Record<string, string>> = { 'favicon.svg': 'favicon.svg', 'favicon.ico': 'favicon.svg' };

/** The icon is renamed by nobody and may change between releases: cached for a day. */
export const ICON_CACHE_CONTROL = 'public, max-age=86400';

const SUFFIX: Readonly<Record<Encoding, string>> = { br: '.br', gzip: '.gz' };

/** Fingerprinted assets never change under their name: cached for a year. */
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';

/**
 * The built console (CONSOLE_DIR): `assets/*` as they are, the icon, and anything else under
 * /console/ is the single-page app's index.html (its own router reads the path). Paths never
 * leave the folder. Files are read when asked (index.html is small, assets are cached by
 * browsers). The build writes brotli (`.br`) and gzip (`.gz`) variants next to each text file;
 * the one the request's Accept-Encoding prefers is sent instead of the file.
 */
@Injectable()
export class ConsoleFiles {
  private readonly root: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.root = resolve(config.consoleDir);
  }

  /** `subPath`: what follows `/console/`, not decoded; `acceptEncoding`: the request's header. */
  async lookup(subPath: string, acceptEncoding?: string): Promise<ConsoleFile> {
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
      return (await this.read(file, ASSET_CACHE_CONTROL, acceptEncoding)) ?? { kind: 'missing' };
    }
    const top = Object.hasOwn(TOP_FILES, decoded) ? TOP_FILES[decoded] : undefined;
    if (top) return (await this.read(resolve(this.root, top), ICON_CACHE_CONTROL, acceptEncoding)) ?? { kind: 'missing' };
    return (await this.read(resolve(this.root, 'index.html'), 'no-store', acceptEncoding)) ?? { kind: 'not_built' };
  }

  private async read(file: string, cacheControl: string, acceptEncoding: string | undefined): Promise<ConsoleFile | null> {
    const contentType = CONTENT_TYPES[extname(file)] ?? 'application/octet-stream';
    const variants = await Promise.all(
      Object.entries(SUFFIX).map(async ([encoding, suffix]) => ((await this.isFile(file + suffix)) ? (encoding as Encoding) : null)),
    );
    const available = variants.filter((encoding): encoding is Encoding => encoding !== null);
    const encoding = chooseEncoding(acceptEncoding, available);
    if (encoding) {
      const body = await readFile(file + SUFFIX[encoding]).catch(() => null);
      if (body) return { kind: 'file', body, contentType, cacheControl, encoding, varies: true };
    }
    const body = await readFile(file).catch(() => null);
    if (!body) return null;
    return { kind: 'file', body, contentType, cacheControl, varies: available.length > 0 };
  }

  private async isFile(path: string): Promise<boolean> {
    return (await stat(path).catch(() => null))?.isFile() ?? false;
  }

  private async isFolder(path: string): Promise<boolean> {
    return (await stat(path).catch(() => null))?.isDirectory() ?? false;
  }
}
